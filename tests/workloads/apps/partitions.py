"""Partitioning workloads: too few partitions (with spill), too many tiny tasks, and a control.

spark-submit partitions.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json; the
partition counts come from the manifest's spark.sql.shuffle.partitions).
"""

from pyspark.sql import functions as F

from common import job, main

SORT_ROWS = 40_000_000


def sort_events(spark, description):
    """A global sort of 40M rows by a pseudo-random string: range-partitioned into
    spark.sql.shuffle.partitions partitions, each sorted by one task."""
    job(spark, description)
    events = spark.range(SORT_ROWS).select(
        F.col("id"), F.concat(F.lit("token-"), (F.col("id") * 2_654_435_761 % 1_000_000_007)
                              .cast("string")).alias("token"))
    # The noop sink runs the whole plan and keeps the sort (an aggregate over it would not).
    events.orderBy("token").write.format("noop").mode("overwrite").save()


def too_few_partitions(spark, scratch):
    """2 sort partitions for 4 task slots and 512 MiB executors: half the slots idle, each task
    sorts 20M rows and spills."""
    sort_events(spark, "too few partitions: sort events")


def enough_partitions(spark, scratch):
    """The control: the same sort in Spark's default 200 partitions (AQE's coalescing off: it
    would merge them back into a few large ones): every slot busy, each task's rows fit in
    memory."""
    sort_events(spark, "enough partitions: sort events")


def too_many_small_tasks(spark, scratch):
    """1.5M rows read in 1500 partitions of 1000 rows: every task is over in milliseconds."""
    job(spark, "too many small tasks: count in 1500 partitions")
    numbers = spark.range(0, 1_500_000, 1, 1500)
    numbers.select(F.sum(F.col("id") % 7)).collect()


WORKLOADS = {f.__name__: f for f in [too_few_partitions, enough_partitions, too_many_small_tasks]}

if __name__ == "__main__":
    main(WORKLOADS)
