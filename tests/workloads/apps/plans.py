"""Query-plan workloads: a Python UDF, a full scan of a partitioned table, and their controls.

spark-submit plans.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json). The join-shaped
plan problems (nested loop, exploding join, broadcasts) are in joins.py.
"""

import datetime
import os

from pyspark.sql import functions as F

from common import job, main

NAMES = 3_000_000


def names(spark):
    return spark.range(0, NAMES, 1, 8).select(
        F.concat(F.lit("  Customer "), F.col("id"), F.lit(" Ltd ")).alias("name"))


def python_udf(spark, scratch):
    """A Python UDF normalises 3M names: every row crosses to a Python worker and back."""
    job(spark, "python udf: normalise names")
    normalise = F.udf(lambda s: s.strip().lower().replace(" ", "_"), "string")
    names(spark).select(normalise("name").alias("key")).agg(
        F.countDistinct(F.length("key")), F.max("key")).collect()


def builtin_functions(spark, scratch):
    """The control: the same normalisation with Spark's builtin functions."""
    job(spark, "builtin functions: normalise names")
    key = F.regexp_replace(F.lower(F.trim("name")), " ", "_")
    names(spark).select(key.alias("key")).agg(
        F.countDistinct(F.length("key")), F.max("key")).collect()


DAYS = 30
FIRST_DAY = datetime.date(2024, 1, 1)


def write_events_table(spark, path):
    """30 days of events, 60k a day, partitioned by event_date (one file a day)."""
    job(spark, "write events table")
    events = spark.range(0, DAYS * 60_000, 1, 4).select(
        F.col("id"),
        F.timestamp_seconds(F.lit(int(datetime.datetime(2024, 1, 1).timestamp()))
                            + (F.col("id") % DAYS) * 86_400 + F.col("id") % 86_400)
        .alias("event_ts"),
        F.sha2(F.col("id").cast("string"), 256).alias("payload"))
    events = events.withColumn("event_date", F.to_date("event_ts"))
    events.repartition("event_date").write.partitionBy("event_date").mode("overwrite") \
        .parquet(path)
    return spark.read.parquet(path)


def full_scan(spark, scratch):
    """One day's events asked for through the timestamp column, not the partition column: Spark
    cannot prune partitions, reads all 30 days and filters every row."""
    events = write_events_table(spark, os.path.join(scratch, "events"))
    day = FIRST_DAY + datetime.timedelta(days=14)
    job(spark, "one day's events: filter on event_ts")
    events.where(F.to_date("event_ts") == F.lit(day)).agg(
        F.count("*"), F.max("payload")).collect()


def partition_pruned(spark, scratch):
    """The control: the same question through the partition column: one day's files are read."""
    events = write_events_table(spark, os.path.join(scratch, "events"))
    day = FIRST_DAY + datetime.timedelta(days=14)
    job(spark, "one day's events: filter on event_date")
    events.where(F.col("event_date") == F.lit(day)).agg(
        F.count("*"), F.max("payload")).collect()


WORKLOADS = {f.__name__: f for f in [python_udf, builtin_functions, full_scan, partition_pruned]}

if __name__ == "__main__":
    main(WORKLOADS)
