"""A small PySpark application for the OpenTelemetry tests: a shuffle job, a Parquet write
(a job with output, under the io_write phase when there is one) and a failing job, so the trace
holds each kind of span. Usage: spark-submit otel_app.py OUTPUT_DIR"""
import sys
import time

from pyspark.sql import SparkSession


def main(output):
    spark = SparkSession.builder.appName("sparkprof otel test").getOrCreate()
    sc = spark.sparkContext
    sc.setJobDescription("shuffle")
    counts = sc.parallelize(range(20000), 4).map(lambda x: (x % 7, 1)).reduceByKey(
        lambda a, b: a + b, 3).collect()
    assert len(counts) == 7
    # The test exports job spans every second (spark.sparkprof.otel.jobSpansInterval): give the
    # first job's the time to go out while the application runs.
    time.sleep(2)
    sc.setJobDescription("write parquet")
    spark.range(0, 50000, numPartitions=2).selectExpr("id", "id % 13 AS k").write.mode(
        "overwrite").parquet(output + "/table")
    sc.setJobDescription("fails")
    try:
        sc.parallelize(range(4), 2).map(lambda x: 1 // 0).count()
    except Exception:  # the failed job is part of the test
        pass
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
