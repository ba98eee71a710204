"""The PySpark application of tests/e2e/run_observability.py: a short run with every kind of work
the dashboards show. A skewed shuffle (skew, shuffle, spill-prone sort), a Parquet write through
s3a:// large enough for multipart uploads (the test sets a 5 MB part size), an executor killed by
the driver mid-run and a new one requested (executor lifecycle), then a read back.

Usage: observability_job.py OUTPUT_URI MARKER_FILE
MARKER_FILE receives one JSON line: the written rows and the executor the driver killed.
"""

import json
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main():
    output, marker = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("sparkprof observability").getOrCreate()
    sc = spark.sparkContext

    # A shuffle with one hot key: skew in the aggregation stage, spill-prone sort.
    events = spark.range(0, 400_000, 1, 8).select(
        F.when(F.col("id") % 10 < 6, F.lit(0)).otherwise(F.col("id") % 97).alias("key"),
        F.col("id"))
    ranked = events.groupBy("key").agg(F.count("*").alias("n"), F.sum("id").alias("total"))
    keys = ranked.orderBy(F.desc("n")).collect()

    # ~14 MB of incompressible bytes in one file: 3 parts of a multipart upload at 5 MB.
    blobs = spark.range(0, 7_000, 1, 1).select(
        F.col("id"), F.expr("unhex(concat_ws('', transform(sequence(1, 64), i -> "
                            "sha2(concat(cast(id as string), cast(i as string)), 256))))")
        .alias("payload"))
    blobs.write.mode("overwrite").parquet(output)

    # Executor lifecycle: the driver kills one executor; the Master starts a replacement.
    def executor_ids():  # a Scala Seq through py4j
        listed = sc._jsc.sc().getExecutorIds().mkString(",")
        return [e for e in listed.split(",") if e]

    executors = executor_ids()
    killed = executors[0] if executors else ""
    replaced = False
    if killed:
        sc._jsc.sc().killExecutor(killed)  # lowers the target: the Master does not replace it
        deadline = time.time() + 30
        while killed in executor_ids() and time.time() < deadline:
            time.sleep(0.5)
        sc._jsc.sc().requestExecutors(1)  # so ask for one more
        deadline = time.time() + 60
        while time.time() < deadline and not replaced:
            replaced = len([e for e in executor_ids() if e != killed]) >= 2
            time.sleep(0.5)

    count = spark.read.parquet(output).count()
    with open(marker, "w") as f:
        f.write(json.dumps({"rows": count, "keys": len(keys), "killed_executor": killed,
                            "replaced": replaced}) + "\n")
    time.sleep(3)  # a few more scrapes of the final figures before the driver stops
    spark.stop()


if __name__ == "__main__":
    main()
