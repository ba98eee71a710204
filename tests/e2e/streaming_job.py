"""The PySpark application of tests/e2e/run_streaming.py: one named Structured Streaming query that
keeps up -- Spark's rate source, a windowed count with a watermark (state and event time), the
noop sink, a 2 s processing-time trigger -- run for RUN_S seconds and stopped; the application
then lingers LINGER_S seconds so the driver's /metrics is scraped with the query stopped.

Usage: streaming_job.py CHECKPOINT_DIR MARKER_FILE
MARKER_FILE receives one JSON line: the query's name and its last batch id.
"""

import json
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

QUERY = "rate_windows"
ROWS_PER_SECOND = 200
TRIGGER = "2 seconds"
RUN_S = 18
LINGER_S = 4


def main():
    checkpoint, marker = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("sparkprof streaming").getOrCreate()
    counts = (spark.readStream.format("rate").option("rowsPerSecond", ROWS_PER_SECOND)
              .option("numPartitions", 2).load()
              .withWatermark("timestamp", "4 seconds")
              .groupBy(F.window("timestamp", "2 seconds")).count())
    query = (counts.writeStream.queryName(QUERY).format("noop").outputMode("update")
             .option("checkpointLocation", checkpoint).trigger(processingTime=TRIGGER).start())
    query.awaitTermination(RUN_S)
    progress = query.lastProgress or {}
    query.stop()
    with open(marker, "w") as f:
        f.write(json.dumps({"query": QUERY, "last_batch_id": progress.get("batchId", -1)}) + "\n")
    time.sleep(LINGER_S)
    spark.stop()


if __name__ == "__main__":
    main()
