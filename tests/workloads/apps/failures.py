"""Failure workloads: a failed application, an executor killed by OutOfMemoryError, an executor
lost mid-stage (killed by generate.py while the stage runs), a Python UDF out of its memory limit,
a collect() over spark.driver.maxResultSize and one that exhausts the driver's heap, and executors
whose direct memory is below spark.network.maxRemoteBlockSizeFetchToMem (refused at start-up).

spark-submit failures.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json).
"""

import threading
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


def expand_document(record_id):
    """The UDF of python_memory_error: it builds a 300 MiB buffer for each record (standing for a
    document expanded in memory), more than the Python worker may hold."""
    document = bytearray(300 << 20)
    return len(document) + record_id


def python_memory_error(spark, scratch):
    """A Python UDF whose every call holds 300 MiB, under spark.executor.pyspark.memory=256m (the
    worker's address space limit): MemoryError in the worker on every attempt, the job aborted
    after spark.task.maxFailures (2)."""
    expand = F.udf(expand_document, "long")
    job(spark, "python memory error: expand documents")
    spark.range(0, 40, 1, 2).select(expand("id").alias("size")).agg(F.sum("size")).collect()


def fill_document(record_id):
    """The UDF of python_oom_kill: 1.2 GiB of bytes written in the worker for each record (the
    pages touched, unlike a zeroed buffer), more than the container holds."""
    document = b"\x01" * (1200 << 20)
    return len(document) + record_id


def python_oom_kill(spark, scratch):
    """The Worker and its executor in a 1 GiB memory cgroup (manifest "memory_limit"), no
    spark.executor.pyspark.memory: a Python UDF fills 1.2 GiB per call, the kernel's OOM killer
    ends the Python worker (the cgroup's largest process), the JVM lives on and Spark sees
    "Python worker exited unexpectedly (crashed)" on every attempt: the job aborted after 2."""
    fill = F.udf(fill_document, "long")
    job(spark, "python oom kill: fill documents")
    spark.range(0, 4, 1, 2).select(fill("id").alias("size")).agg(F.sum("size")).collect()


def driver_max_result_size(spark, scratch):
    """collect() of ~100 MiB of digests to a driver whose spark.driver.maxResultSize is 32m: the
    serialized results of the first tasks pass the limit and the job is aborted."""
    job(spark, "driver max result size: collect digests")
    spark.range(0, 800_000, 1, 8).select(
        F.sha2(F.col("id").cast("string"), 512).alias("digest")).collect()


def driver_heap_collect(spark, scratch):
    """collect() of 3M digests (~400 MiB of rows) under spark.driver.maxResultSize=0 (no limit)
    to a driver with a 512 MiB heap: the results pass no limit but fill the driver's heap, which
    runs out (java.lang.OutOfMemoryError) while it decodes the rows. 64 partitions keep each
    task's result small, so the results arrive whole and the heap runs out in the collect itself
    (one large result can fail inside its deserialization instead, with a confusing error)."""
    job(spark, "driver heap collect: collect digests")
    spark.range(0, 3_000_000, 1, 64).select(
        F.sha2(F.col("id").cast("string"), 512).alias("digest")).collect()


def driver_small_collect(spark, scratch):
    """control: the same collect of 300k digests (~40 MiB) under the same settings: fits."""
    job(spark, "driver small collect: collect digests")
    spark.range(0, 300_000, 1, 64).select(
        F.sha2(F.col("id").cast("string"), 512).alias("digest")).collect()


NO_PROGRESS_TIMEOUT_S = 45


def netty_direct_memory(spark, scratch):
    """A small sum whose executors never run a task: their -XX:MaxDirectMemorySize is below
    spark.network.maxRemoteBlockSizeFetchToMem, which Spark's executor refuses at start-up (it
    registers, then exits with code 1). A standalone Master relaunches executors for ever (each
    launch resets its retry count), so the program gives up after NO_PROGRESS_TIMEOUT_S, as a
    scheduler's timeout would: it cancels its jobs and fails."""
    job(spark, "netty direct memory: sum")
    watchdog = threading.Timer(NO_PROGRESS_TIMEOUT_S, spark.sparkContext.cancelAllJobs)
    watchdog.start()
    try:
        spark.range(0, 1_000_000, 1, 4).selectExpr("sum(id)").collect()
    finally:
        watchdog.cancel()


WORKLOADS = {f.__name__: f for f in [failed_application, executor_oom, executor_lost,
                                      python_memory_error, python_oom_kill,
                                      driver_max_result_size, driver_heap_collect,
                                      driver_small_collect, netty_direct_memory]}

if __name__ == "__main__":
    main(WORKLOADS)
