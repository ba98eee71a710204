"""Cluster-shaped workloads: waiting for executors, and executors idle through a driver phase.

spark-submit cluster.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json: for
resource_wait, generate.py starts the Workers 15 s after the application registered).
"""

from pyspark.sql import functions as F

from common import driver_phase, job, main


def totals(spark, description):
    job(spark, description)
    spark.range(0, 4_000_000, 1, 8).select(F.sum(F.col("id") % 97), F.count("*")).collect()


def resource_wait(spark, scratch):
    """A short job that waits for its executors: no Worker exists until 15 s after the start."""
    totals(spark, "resource wait: totals")


def idle_executors(spark, scratch):
    """Two short jobs around 25 s of driver-only work (a sleep standing in for driver-side
    processing or a call to another system); the executors stay allocated and idle meanwhile."""
    totals(spark, "idle executors: first totals")
    driver_phase(spark, 25)
    totals(spark, "idle executors: second totals")


WORKLOADS = {f.__name__: f for f in [resource_wait, idle_executors]}

if __name__ == "__main__":
    main(WORKLOADS)
