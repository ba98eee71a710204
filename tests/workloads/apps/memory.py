"""Memory and caching workloads: GC pressure, caches never reused or evicted, and a control;
an executor killed by its memory cgroup's limit, and a control running close to the limit.

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


def sort_off_heap(spark, description):
    """One partition of 9M rows with a 64-character digest (~1 GiB as Spark's rows), sorted:
    Spark's sorter puts every row into pages of its execution memory, off the heap
    (spark.memory.offHeap.enabled in the manifest), until the off-heap size is used up and it
    spills."""
    job(spark, description)
    rows = spark.range(0, 9_000_000, 1, 1).select(
        F.col("id"), F.sha2(F.col("id").cast("string"), 256).alias("digest"))
    rows.sortWithinPartitions("digest").write.format("noop").mode("overwrite").save()


def cgroup_memory_kill(spark, scratch):
    """The Worker and its executor run in a memory cgroup of 1 GiB (manifest "memory_limit");
    the executor has a 512 MiB heap and 1 GiB of off-heap execution memory: the sort's off-heap
    pages take the JVM past the cgroup's limit and the kernel's OOM killer ends it (exit 137)
    before the sorter would spill. Each attempt on a new executor does the same."""
    sort_off_heap(spark, "cgroup memory kill: sort off-heap")


def cgroup_memory_fits(spark, scratch):
    """The control: the same sort in the same 1 GiB cgroup with 256 MiB of off-heap memory, which
    the sorter fills and then spills: the JVM runs close to the limit and survives."""
    sort_off_heap(spark, "cgroup memory fits: sort off-heap")


WORKLOADS = {f.__name__: f for f in [gc_pressure, cache_never_reused, cache_evicted,
                                      cache_reused, cgroup_memory_kill, cgroup_memory_fits]}

if __name__ == "__main__":
    main(WORKLOADS)
