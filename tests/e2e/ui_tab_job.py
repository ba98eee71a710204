"""The application tests/e2e/run_ui_tab.py watches in the sparkprof tab: a few quick stages (or
TINY_STAGES of them, to measure the tab on an application with that many stages), then heavy
JVM-side stages with the driver idle between them, until STOP_FILE exists (at most 10 minutes).

Usage: spark-submit ui_tab_job.py STOP_FILE TINY_STAGES
"""
import os
import sys
import time

from pyspark.sql import SparkSession


def main():
    stop_file, tiny_stages = sys.argv[1], int(sys.argv[2])
    spark = SparkSession.builder.appName("sparkprof-ui-tab").getOrCreate()
    sc = spark.sparkContext
    for i in range(tiny_stages):
        sc.setJobDescription(f"tiny {i}")
        spark.range(0, 100, 1, 1).count()
    deadline = time.monotonic() + 600
    round_number = 0
    while not os.path.exists(stop_file) and time.monotonic() < deadline:
        round_number += 1
        sc.setJobDescription(f"heavy {round_number}")
        spark.range(0, 12_000_000, 1, 2).selectExpr(
            "sum(crc32(cast(id * 31 as string))) as s").collect()
        time.sleep(1.5)  # the driver alone: the executors idle
    print(f"ui_tab_job: {round_number} heavy rounds", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
