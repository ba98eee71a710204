"""Memory and caching workloads: GC pressure, caches never reused or evicted, and a control.

spark-submit memory.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json; heap sizes come
from the manifest's conf).
"""

from pyspark import StorageLevel
from pyspark.sql import functions as F

from common import job, main


def orders(spark, rows, partitions):
    return spark.range(0, rows, 1, partitions).select(
        F.col("id").alias("order"), (F.col("id") % 100).alias("store"),
        (F.col("id") * 7919 % 1_000_003).alias("amount"),
        F.sha2(F.col("id").cast("string"), 256).alias("payload"))


def gc_pressure(spark, scratch):
    """Cached orders take the storage share of 512 MiB heaps; then an exact median per store
    keeps every distinct value of a store as a boxed object in the aggregation buffers (Spark's
    object hash aggregate, outside its memory accounting): a large live heap that the parallel
    collector (Java 8's default, set in the manifest) walks again and again. 100 stores of equal
    size, 2 equal partitions: no skew."""
    cached = orders(spark, 4_500_000, 2).cache()
    job(spark, "gc pressure: cache orders")
    cached.count()
    job(spark, "gc pressure: exact median per store")
    cached.groupBy("store").agg(F.expr("percentile(amount, 0.5)"),
                                F.expr("percentile(order, 0.9)")).collect()


def cache_never_reused(spark, scratch):
    """A DataFrame cached and then read by just one query: the cache costs memory and the time to
    build it, and nothing ever reads it again."""
    cached = orders(spark, 2_000_000, 8).cache()
    job(spark, "cache never reused: totals per store")
    cached.groupBy("store").agg(F.sum("amount")).collect()
    job(spark, "cache never reused: other report")
    spark.range(1_000_000).select(F.sum(F.col("id") % 13)).collect()


def cache_evicted(spark, scratch):
    """A DataFrame cached MEMORY_ONLY about twice as large as the executors' storage memory
    (2 x 127 MiB): the partitions that do not fit are not kept and are recomputed (two sha2 of
    every row) by each of the three queries that read it."""
    digests = spark.range(0, 4_500_000, 1, 16).select(
        F.col("id"), F.sha2(F.sha2(F.col("id").cast("string"), 512), 512).alias("digest"))
    cached = digests.persist(StorageLevel.MEMORY_ONLY)
    for query in range(1, 4):
        job(spark, f"cache evicted: query {query}")
        cached.where(F.col("id") % 7 == query).agg(F.count("*"), F.max("digest")).collect()


def cache_reused(spark, scratch):
    """The control: a cache that fits in memory, built once and read by three queries."""
    cached = orders(spark, 1_000_000, 8).cache()
    job(spark, "cache reused: build")
    cached.count()
    for query in range(1, 4):
        job(spark, f"cache reused: query {query}")
        cached.where(F.col("store") % 7 == query).agg(F.sum("amount")).collect()


WORKLOADS = {f.__name__: f for f in [gc_pressure, cache_never_reused, cache_evicted,
                                      cache_reused]}

if __name__ == "__main__":
    main(WORKLOADS)
