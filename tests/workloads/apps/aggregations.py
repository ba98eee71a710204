"""Per-key and per-task workloads: a skewed aggregation, a straggler on even data, and controls.

spark-submit aggregations.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json).
"""

import time

from pyspark.sql import Window
from pyspark.sql import functions as F

from common import job, main

ORDERS = 6_000_000
CUSTOMERS = 1_000_000


def running_balance_per_customer(spark, customer, description):
    """A running balance per customer: a window over all of a customer's rows (nothing can be
    aggregated or limited before the shuffle, unlike sum or a top-1), so every row of a key meets
    in one task, sorted."""
    job(spark, description)
    orders = spark.range(ORDERS).select(customer.alias("customer"), F.col("id").alias("order"),
                                        (F.col("id") * 7919 % 100_003).alias("amount"))
    in_time = Window.partitionBy("customer").orderBy("order")
    balances = orders.withColumn("balance", F.sum("amount").over(in_time))
    balances.agg(F.max("balance"), F.count("*")).collect()


def skewed_aggregation(spark, scratch):
    """90% of the orders belong to customer 0: one task sorts and sums them all."""
    customer = F.when(F.col("id") % 10 == 0, F.col("id") % CUSTOMERS).otherwise(F.lit(0))
    running_balance_per_customer(spark, customer, "skewed aggregation: running balances")


def even_aggregation(spark, scratch):
    """The control: the same aggregation with the orders spread evenly."""
    running_balance_per_customer(spark, F.col("id") % CUSTOMERS,
                                 "even aggregation: running balances")


PARTITIONS = 16
STRAGGLER_PARTITION = 3
STRAGGLER_SLEEP_S = 12


def score_partitions(spark, description, straggler):
    """16 equal partitions (hash-partitioned integers, the same number of records each), each
    scored with the same CPU work; with straggler, partition 3's task also stalls for 12 s (as a
    slow external call or a bad disk would), with no more data than the others."""
    job(spark, description)

    def score(index, rows):
        if straggler and index == STRAGGLER_PARTITION:
            time.sleep(STRAGGLER_SLEEP_S)
        total = 0.0
        for key, value in rows:
            for step in range(20):
                total += (key * step + value) % 7 / 7.0
        yield total

    pairs = spark.sparkContext.parallelize(range(PARTITIONS * 25_000), 2).map(lambda x: (x, x))
    pairs.partitionBy(PARTITIONS).mapPartitionsWithIndex(score).sum()


def straggler(spark, scratch):
    score_partitions(spark, "straggler: score partitions", straggler=True)


def even_tasks(spark, scratch):
    """The control: the same stage without the stall."""
    score_partitions(spark, "even tasks: score partitions", straggler=False)


WORKLOADS = {f.__name__: f for f in [skewed_aggregation, even_aggregation, straggler, even_tasks]}

if __name__ == "__main__":
    main(WORKLOADS)
