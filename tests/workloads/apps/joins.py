"""Join workloads: skew, broadcast missed and too large, nested loop, exploding, and controls.

spark-submit joins.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json for each one's
settings, what it plants and what sparkprof must say).
"""

from pyspark.sql import functions as F

from common import job, main

FACT_ROWS = 8_000_000
CUSTOMERS = 1_000_000  # ~40 MB as Spark estimates it: above the 10 MB broadcast threshold


def customers(spark):
    return spark.range(CUSTOMERS).select(
        F.col("id").alias("customer"), F.sha2(F.col("id").cast("string"), 256).alias("name"))


def orders(spark, customer):
    return spark.range(FACT_ROWS).select(customer.alias("customer"),
                                         (F.col("id") % 997).alias("amount"))


def join_and_total(spark, facts, description):
    """Joins, then hashes every joined row (work proportional to the rows each task joins)."""
    job(spark, description)
    joined = facts.join(customers(spark), "customer")
    digest = F.sha2(F.concat_ws(",", "name", "amount"), 256)
    joined.groupBy(F.substring(digest, 1, 2)).agg(F.sum("amount"), F.count("*")).collect()


def skewed_join(spark, scratch):
    """90% of the orders belong to customer 0: one sort-merge-join task gets them all."""
    customer = F.when(F.col("id") % 10 == 0, F.col("id") % CUSTOMERS).otherwise(F.lit(0))
    join_and_total(spark, orders(spark, customer), "skewed join: orders x customers")


def even_join(spark, scratch):
    """The control: the same join with the orders spread evenly over the customers."""
    join_and_total(spark, orders(spark, F.col("id") % CUSTOMERS), "even join: orders x customers")


COUNTRIES = 200


def country_join(spark, description):
    job(spark, description)
    facts = spark.range(FACT_ROWS).select((F.col("id") % COUNTRIES).alias("country"),
                                          (F.col("id") % 997).alias("amount"))
    countries = spark.range(COUNTRIES).select(
        F.col("id").alias("country"), F.concat(F.lit("country-"), F.col("id")).alias("name"))
    facts.join(countries, "country").groupBy("name").agg(F.sum("amount")).collect()


def broadcast_missed(spark, scratch):
    """200 countries sort-merge-joined to 8M rows: the threshold (-1) forbids the broadcast."""
    country_join(spark, "broadcast missed: orders x countries")


def broadcast_join(spark, scratch):
    """The control: the same join, broadcast as Spark chooses by default."""
    country_join(spark, "broadcast join: orders x countries")


def broadcast_too_large(spark, scratch):
    """A hint broadcasts a ~100 MB table (1M customer profiles) to every executor (512 MiB
    heaps): the driver collects and builds it, every executor fetches and holds a copy."""
    job(spark, "broadcast too large: orders x customer profiles")
    profiles = spark.range(1_000_000).select(
        F.col("id").alias("customer"),
        F.sha2(F.col("id").cast("string"), 256).alias("profile"))
    facts = spark.range(4_000_000).select((F.col("id") % 1_000_000).alias("customer"),
                                          (F.col("id") % 997).alias("amount"))
    joined = facts.join(F.broadcast(profiles), "customer")
    joined.groupBy(F.length("profile")).agg(F.sum("amount")).collect()


def nested_loop_join(spark, scratch):
    """A range condition (no equality) joins 300k events to 5k windows pair by pair."""
    job(spark, "nested loop join: events in time windows")
    events = spark.range(300_000).select((F.col("id") * 37 % 2_500_000).alias("ts"))
    windows = spark.range(5_000).select((F.col("id") * 500).alias("start"),
                                        (F.col("id") * 500 + 500).alias("end"))
    joined = events.join(windows, (events.ts >= windows.start) & (events.ts < windows.end))
    joined.groupBy("start").count().collect()


def exploding_join(spark, scratch):
    """A join on a 20-value key: 60k x 60k rows become 180M pairs."""
    job(spark, "exploding join: orders x returns by store")
    orders_by_store = spark.range(60_000).select((F.col("id") % 20).alias("store"),
                                                 F.col("id").alias("order"))
    returns_by_store = spark.range(60_000).select((F.col("id") % 20).alias("store"),
                                                  F.col("id").alias("return"))
    joined = orders_by_store.join(returns_by_store, "store")
    joined.groupBy("store").agg(F.count("*"), F.max(F.col("order") - F.col("return"))).collect()


WORKLOADS = {f.__name__: f for f in [skewed_join, even_join, broadcast_missed, broadcast_join,
                                      broadcast_too_large, nested_loop_join, exploding_join]}

if __name__ == "__main__":
    main(WORKLOADS)
