"""The what-if validation suite's applications (tests/workloads/validation/README.md).

spark-submit apps.py WORKLOAD SCRATCH_DIR; suite.json runs each at several settings. Every job
is labelled (common.job). The workloads are small on purpose: each setting runs a few times on a
2-core machine.
"""

import hashlib
import time

from pyspark.sql import functions as F

from common import job, main


def slow_reads(spark, scratch):
    """24 reads that each wait 1.2 s (a remote store's latency) and hash a little, then a
    shuffle into 8 partitions whose tasks each wait 0.4 s (a remote write). The tasks mostly
    wait, so more slots help even on 2 CPUs (what a cluster of I/O-bound executors shows)."""
    job(spark, "slow reads: 24 remote reads, then a shuffle")

    def read(part):
        time.sleep(1.2)
        digest = b"seed"
        for _ in range(20_000):  # ~20 ms of CPU
            digest = hashlib.sha256(digest).digest()
        return [(key % 8, len(digest)) for key in range(part * 1000, part * 1000 + 1000)]

    def write(rows):
        total = sum(value for _, value in rows)
        time.sleep(0.4)
        yield total

    reads = spark.sparkContext.parallelize(range(24), 24).flatMap(read)
    reads.reduceByKey(lambda a, b: a + b, 8).mapPartitions(write).collect()


def cpu_repartition(spark, scratch):
    """CPU-bound SQL: 15M rows hashed on the map side, repartitioned by key into
    spark.sql.shuffle.partitions partitions (AQE coalescing off) and hashed again there."""
    job(spark, "cpu repartition: hash, shuffle by key, hash")
    rows = spark.range(0, 15_000_000, 1, 8).select(
        (F.col("id") * 7919 % 100_003).alias("key"),
        F.sha2(F.col("id").cast("string"), 256).alias("digest"))
    shuffled = rows.repartition("key").select(
        "key", F.sha2(F.sha2(F.concat("digest", F.col("key").cast("string")), 512), 256)
        .alias("digest"))
    shuffled.agg(F.count("*"), F.max("digest")).collect()


CUSTOMERS = 500_000
ORDERS = 6_000_000


def skewed_join(spark, scratch):
    """90% of 6M orders belong to customer 0: one sort-merge-join task joins them all (unless
    the suite turns AQE's skew join on for the run)."""
    job(spark, "skewed join: orders x customers")
    customer = F.when(F.col("id") % 10 == 0, F.col("id") % CUSTOMERS).otherwise(F.lit(0))
    orders = spark.range(ORDERS).select(customer.alias("customer"),
                                        (F.col("id") % 997).alias("amount"))
    customers = spark.range(CUSTOMERS).select(
        F.col("id").alias("customer"), F.sha2(F.col("id").cast("string"), 256).alias("name"))
    joined = orders.join(customers, "customer")
    digest = F.sha2(F.concat_ws(",", "name", "amount"), 256)
    joined.groupBy(F.substring(digest, 1, 2)).agg(F.sum("amount"), F.count("*")).collect()


COUNTRIES = 200


def country_join(spark, scratch):
    """8M orders joined to 200 countries: a sort-merge join when the suite sets
    autoBroadcastJoinThreshold=-1, a broadcast hash join otherwise."""
    job(spark, "country join: orders x countries")
    facts = spark.range(8_000_000).select((F.col("id") % COUNTRIES).alias("country"),
                                          (F.col("id") % 997).alias("amount"))
    countries = spark.range(COUNTRIES).select(
        F.col("id").alias("country"), F.concat(F.lit("country-"), F.col("id")).alias("name"))
    facts.join(countries, "country").groupBy("name").agg(F.sum("amount")).collect()


def spilling_sort(spark, scratch):
    """16M rows sorted by a string key into spark.sql.shuffle.partitions (4) partitions: on
    512 MiB executors each task's rows outgrow its execution memory and spill; on 1.5 GiB they
    fit."""
    job(spark, "spilling sort: 16M rows in 4 partitions")
    rows = spark.range(16_000_000).select(
        F.col("id"), F.concat(F.lit("token-"), (F.col("id") * 2_654_435_761 % 1_000_000_007)
                              .cast("string")).alias("token"))
    rows.orderBy("token").write.format("noop").mode("overwrite").save()


def waiting_tasks(spark, scratch):
    """96 tasks, one row each, that each wait 0.6 s inside the JVM (Thread.sleep called through
    SQL's reflect: no Python worker to start, so a new executor warms up as a JVM-only job's
    would). The tasks wait, so the task slots set the wall time, not the CPUs: executor and
    core counts move it by 1.5-2x even on 2 CPUs."""
    job(spark, "waiting tasks: 96 x 0.6 s")
    wait = F.expr("reflect('java.lang.Thread', 'sleep', cast(600 as bigint))")
    spark.range(0, 96, 1, 96).select(wait.alias("waited")).agg(F.count("waited")).collect()


def tiny_tasks(spark, scratch):
    """2M rows counted per key (1,000 keys) into spark.sql.shuffle.partitions partitions (AQE
    coalescing off): every reduce task is tiny, so their count -- each paying Spark's own
    per-task cost (scheduling, deserialising the task, fetching its blocks) -- sets the reduce
    stage's time."""
    job(spark, "tiny tasks: 2M rows counted per key")
    counts = spark.range(0, 2_000_000, 1, 4).groupBy((F.col("id") % 1000).alias("key")).count()
    counts.agg(F.sum("count")).collect()


WORKLOADS = {f.__name__: f for f in [slow_reads, cpu_repartition, skewed_join, country_join,
                                      spilling_sort, waiting_tasks, tiny_tasks]}

if __name__ == "__main__":
    main(WORKLOADS)
