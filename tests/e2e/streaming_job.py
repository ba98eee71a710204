"""The PySpark application of tests/e2e/run_streaming.py: one named Structured Streaming query that
keeps up -- Spark's rate source, a windowed count with a watermark (state and event time), the
noop sink, a 3 s processing-time trigger -- run until batch LAST_BATCH_ID completed (and SCRAPED_S more) (at most
MAX_RUN_S seconds: a first batch takes 3-12 s on a busy machine) and stopped; the application then
lingers LINGER_S seconds so the driver's /metrics is scraped with the query stopped.

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
TRIGGER = "3 seconds"
# The first batches may overrun the trigger on a busy machine (planning, code generation, executors
# warming up); the model reads the trigger from three batches that waited for it.
LAST_BATCH_ID = 6
MAX_RUN_S = 120
SCRAPED_S = 2  # after the last batch, before the stop: the scrapes see it while the query runs
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
    deadline = time.monotonic() + MAX_RUN_S
    last_batch_id = -1
    while last_batch_id < LAST_BATCH_ID and time.monotonic() < deadline and query.isActive:
        query.awaitTermination(0.5)
        progress = query.lastProgress  # a dict (a dict subclass in Spark 4), None before a batch
        last_batch_id = progress["batchId"] if progress is not None else -1
    time.sleep(SCRAPED_S)
    query.stop()
    with open(marker, "w") as f:
        f.write(json.dumps({"query": QUERY, "last_batch_id": last_batch_id}) + "\n")
    time.sleep(LINGER_S)
    spark.stop()


if __name__ == "__main__":
    main()
