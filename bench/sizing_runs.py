"""Real runs of one ETL job at several input sizes, for validating
``sparkprof recommend --input-size`` (python/tests/test_sizing_validation.py, bench/RESULTS.md).

Each run is the same PySpark program (``app`` below) on a fresh standalone cluster on loopback
(tests/e2e/spark_cluster.py), the way a team's nightly job runs on a cluster sized for the day's
data: input ``k`` x BASE_ROWS rows read from Parquet by ``k`` executors of one core, 4 tasks per
executor, each task waiting like a remote read (WAIT_S per BASE_ROWS/4 rows: the tasks mostly
wait, so executors help even on 2 CPUs) before the rows are shuffled by key and written back as
Parquet. Spark's own zstd event log of each run is kept as
python/tests/fixtures/sizing/etl_<k>x.zstd (--write-fixtures) or in --out.

    python3 bench/sizing_runs.py --spark-home build/spark/3.5.9/home \
        --python build/spark/3.5.9/venv/bin/python --write-fixtures [--scales 1 2 3 4]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FIXTURES = os.path.join(REPO, "python/tests/fixtures/sizing")
BASE_ROWS = 400_000
TASKS_PER_EXECUTOR = 4
WAIT_S = 2.0
JOB_KEY = "sizing-etl"


def app(scale: int, scratch: str) -> None:
    """The job (run by spark-submit): generate, read, wait per row, shuffle, write."""
    from pyspark.sql import SparkSession, functions

    spark = SparkSession.builder.getOrCreate()
    rows = scale * BASE_ROWS
    partitions = scale * TASKS_PER_EXECUTOR
    source = os.path.join(scratch, "input")
    spark.sparkContext.setJobDescription("generate the input")
    (
        spark.range(rows, numPartitions=partitions)
        .select(
            functions.col("id"),
            (functions.col("id") % 1000).alias("key"),
            functions.sha2(functions.col("id").cast("string"), 256).alias("payload"),
        )
        .write.mode("overwrite")
        .parquet(source)
    )
    per_row_s = WAIT_S / (BASE_ROWS / TASKS_PER_EXECUTOR)

    def wait_like_a_remote_read(batch):  # type: ignore[no-untyped-def]
        count = 0
        for row in batch:
            count += 1
            yield row
        time.sleep(count * per_row_s)

    spark.sparkContext.setJobDescription("transform and write")
    frame = spark.read.parquet(source).repartition(partitions)
    waited = spark.createDataFrame(frame.rdd.mapPartitions(wait_like_a_remote_read), frame.schema)
    (
        waited.withColumn("digest", functions.sha2(functions.col("payload"), 512))
        .repartition(partitions, "key")
        .write.mode("overwrite")
        .parquet(os.path.join(scratch, "output"))
    )
    spark.stop()


def run(scale: int, spark_home: str, python: str, work_root: str) -> str:
    """One run on a fresh cluster of ``scale`` executors; returns its event log's path."""
    sys.path.insert(0, os.path.join(REPO, "tests/e2e"))
    from spark_cluster import SparkCluster, free_port, wait_driver

    work = os.path.join(work_root, f"etl_{scale}x")
    shutil.rmtree(work, ignore_errors=True)
    events, scratch = os.path.join(work, "eventlog"), os.path.join(work, "scratch")
    os.makedirs(events)
    os.makedirs(scratch)
    cluster = SparkCluster(spark_home, work)
    conf = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.compress": "true",
        "spark.eventLog.compression.codec": "zstd",
        "spark.eventLog.rolling.enabled": "false",
        "spark.eventLog.dir": "file://" + events,
        "spark.ui.port": str(free_port()),
        "spark.ui.showConsoleProgress": "false",
        "spark.executor.cores": "1",
        "spark.executor.memory": "512m",
        "spark.cores.max": str(scale),
        "spark.sql.shuffle.partitions": str(scale * TASKS_PER_EXECUTOR),
        "spark.sql.adaptive.enabled": "false",  # the partition counts stay as written
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.sparkprof.jobKey": JOB_KEY,
        "spark.sparkprof.jobType": "etl",
    }
    try:
        cluster.start_master()
        cluster.start_workers(scale, 1, "768m")
        driver = cluster.submit_python(
            os.path.abspath(__file__), python, ["app", str(scale), scratch], conf,
            driver_memory="512m", log_path=os.path.join(work, "driver.log"))
        code, _ = wait_driver(driver, 600)
        if code != 0:
            raise RuntimeError(f"scale {scale}: the driver exited with {code} ({work}/driver.log)")
    finally:
        cluster.stop()
    [log] = os.listdir(events)
    return os.path.join(events, log)


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "app":
        app(int(sys.argv[2]), sys.argv[3])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument("--out", help="where the logs go (default: a temporary folder)")
    parser.add_argument("--write-fixtures", action="store_true")
    args = parser.parse_args()
    out = FIXTURES if args.write_fixtures else (args.out or tempfile.mkdtemp(prefix="sizing-"))
    os.makedirs(out, exist_ok=True)
    work_root = tempfile.mkdtemp(prefix="sizing-work-")
    for scale in args.scales:
        started = time.monotonic()
        log = run(scale, args.spark_home, args.python, work_root)
        target = os.path.join(out, f"etl_{scale}x.zstd")
        shutil.copyfile(log, target)
        print(f"scale {scale}: {time.monotonic() - started:.0f} s, {target}", flush=True)
    shutil.rmtree(work_root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
