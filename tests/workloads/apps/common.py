"""What every workload application shares (driver side only; shipped with --py-files).

An application module maps workload names to functions taking (spark, scratch_dir) and calls
main(WORKLOADS); spark-submit runs it as `<module>.py <workload> <scratch dir>`. Functions that run
on executors (lambdas, UDFs) live in the application module itself, which Spark pickles by value,
and never refer to this module.
"""

import sys
import time

from pyspark.sql import SparkSession


def job(spark, description):
    """Labels every following job of this thread: accuracy.py finds stages by this text."""
    spark.sparkContext.setJobDescription(description)


def driver_phase(spark, seconds):
    """Driver-only work between jobs: nothing runs on the executors, which stay allocated."""
    job(spark, None)
    time.sleep(seconds)


def main(workloads):
    if len(sys.argv) != 3 or sys.argv[1] not in workloads:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(sorted(workloads))}}} SCRATCH_DIR")
    name, scratch = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName(f"sparkprof-workload-{name}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        workloads[name](spark, scratch)
    finally:
        spark.stop()
