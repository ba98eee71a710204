"""Failure workloads: a failed application, an executor killed by OutOfMemoryError, and an
executor lost mid-stage (killed by generate.py while the stage runs).

spark-submit failures.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json).
"""

import time

from pyspark.sql import functions as F

from common import job, main


def parse(record):
    if record == 77_777:
        raise ValueError(f"cannot parse record {record}: field 'amount' is not a number")
    return record * 2


def failed_application(spark, scratch):
    """One record makes its task raise every time: the task fails spark.task.maxFailures (2)
    times, the job is aborted and the application exits non-zero."""
    job(spark, "healthy count")
    spark.range(1_000_000).select(F.sum("id")).collect()
    job(spark, "failing job: parse records")
    spark.sparkContext.parallelize(range(200_000), 4).map(parse).sum()


def executor_oom(spark, scratch):
    """All payloads of a store collected into one list: the executor's heap (512 MiB) runs out,
    the executor JVM dies with OutOfMemoryError, each attempt on a fresh executor does the same,
    and the job is aborted after spark.task.maxFailures (2) attempts."""
    job(spark, "executor oom: all payloads per store")
    rows = spark.range(0, 6_000_000, 1, 4).select(
        (F.col("id") % 2).alias("store"), F.sha2(F.col("id").cast("string"), 512).alias("payload"))
    rows.groupBy("store").agg(F.size(F.collect_list("payload"))).collect()


def slow_square(pairs):
    for key, value in pairs:
        time.sleep(0.003)  # ~625 keys per partition: ~2 s a task
        yield key % 16, value * value


def executor_lost(spark, scratch):
    """Three stages: a shuffle-map stage, a second shuffle-map stage reading it (its tasks take
    ~2 s each), and the result. generate.py kills one executor JVM while the second stage runs,
    after two of its tasks finished there: their output and the first stage's output on that
    executor are lost (no external shuffle service)."""
    job(spark, "executor lost: two shuffles")
    numbers = spark.sparkContext.parallelize(range(160_000), 4).map(lambda x: (x % 10_000, x))
    summed = numbers.reduceByKey(lambda a, b: a + b, 16)
    squares = summed.mapPartitions(slow_square).reduceByKey(lambda a, b: a + b, 4)
    squares.collect()


WORKLOADS = {f.__name__: f for f in [failed_application, executor_oom, executor_lost]}

if __name__ == "__main__":
    main(WORKLOADS)
