"""Write workloads: many small output files, a slow job commit, and a sensible write.

spark-submit writes.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json; the committer
settings come from the manifest's conf). Output goes below SCRATCH_DIR.
"""

import os

from pyspark.sql import functions as F

from common import job, main


def events(spark, rows, days):
    return spark.range(rows).select(
        F.col("id"), (F.col("id") % days).alias("day"),
        F.sha2(F.col("id").cast("string"), 256).alias("payload"))


def small_files(spark, scratch):
    """8 tasks each write one file per day of 200: 1600 files of ~25 KB."""
    job(spark, "small files: write events by day")
    events(spark, 400_000, 200).repartition(8).write.partitionBy("day").mode("overwrite") \
        .parquet(os.path.join(scratch, "events"))


def slow_commit(spark, scratch):
    """The classic FileOutputCommitter (algorithm 1): the driver moves every task's files into
    place one by one after the tasks end, 8000 files here."""
    job(spark, "slow commit: write events by hour")
    events(spark, 200_000, 1000).repartition(8).write.partitionBy("day").mode("overwrite") \
        .parquet(os.path.join(scratch, "events"))


def sensible_write(spark, scratch):
    """The control: the same rows partitioned by month (7 values), each month's rows brought to
    one task first: one ~6 MB file per month."""
    job(spark, "sensible write: write events by month")
    by_month = events(spark, 400_000, 200).withColumn("month", (F.col("day") / 30).cast("int"))
    by_month.repartition("month").write.partitionBy("month").mode("overwrite") \
        .parquet(os.path.join(scratch, "events"))


WORKLOADS = {f.__name__: f for f in [small_files, slow_commit, sensible_write]}

if __name__ == "__main__":
    main(WORKLOADS)
