"""Structured Streaming workloads: a query that falls behind, batches longer than their trigger,
state that grows without a watermark, per-batch overhead on tiny batches, and a healthy control.

spark-submit streaming.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json).

Every query reads Spark's `rate` source (no broker needed), writes to the `noop` sink, runs for
RUN_S seconds (LONG_RUN_S for two) and is then stopped with query.stop(), as an application
ending a streaming query does: the batch running at that moment is cancelled (its jobs end
"cancelled").
"""

import os
import time

from pyspark.sql import functions as F
from pyspark.sql.types import LongType

from common import job, main

RUN_S = 25
# The two workloads whose pattern needs several slow batches after quick ones.
LONG_RUN_S = 40


def run_query(spark, scratch, name, frame, trigger_s=None, output_mode="append", run_s=RUN_S):
    """Starts `frame` as query `name` on the noop sink, lets it run `run_s` seconds, stops it."""
    job(spark, None)
    writer = (frame.writeStream.queryName(name).format("noop").outputMode(output_mode)
              .option("checkpointLocation", os.path.join(scratch, "checkpoint-" + name)))
    if trigger_s is not None:
        writer = writer.trigger(processingTime=f"{trigger_s} seconds")
    query = writer.start()
    query.awaitTermination(run_s)
    query.stop()


def rate(spark, rows_per_second, partitions, ramp_up_s=0):
    return (spark.readStream.format("rate").option("rowsPerSecond", rows_per_second)
            .option("numPartitions", partitions).option("rampUpTimeSeconds", ramp_up_s).load())


def falling_behind(spark, scratch):
    """6000 rows/s in (reached after an 8 s ramp-up, so the first batches are small and quick); a
    Python UDF costing ~0.5 ms of CPU a row on 2 task slots processes under 4000 rows/s: once the
    input passes that, every batch is larger than the one before and the backlog grows."""

    def costly(value):
        deadline = time.thread_time() + 0.0005
        total = value
        while time.thread_time() < deadline:
            total = (total * 31 + 7) % 1_000_003
        return total

    udf = F.udf(costly, LongType())
    frame = rate(spark, 6000, 2, ramp_up_s=8).select(udf(F.col("value")).alias("score"))
    run_query(spark, scratch, "falling_behind", frame, run_s=LONG_RUN_S)


QUICK_BATCHES = 3
SLOW_BATCH_S = 8
TRIGGER_S = 5


def batch_over_trigger(spark, scratch):
    """A 5 s trigger. The first QUICK_BATCHES batches are quick (they wait for their trigger, so
    the schedule shows the interval, even on a busy machine); from then on every batch pays a
    fixed 8 s in each task (a slow external call per partition, whatever the rows): the batches
    take ~8 s, the query keeps up with its 50 rows/s but a batch starts every ~8 s, not every 5."""

    def slow_partition(rows):
        time.sleep(SLOW_BATCH_S)
        for row in rows:
            yield (row.value,)

    frame = rate(spark, 50, 2)

    def per_batch(batch, batch_id):
        if batch_id < QUICK_BATCHES:
            batch.count()
        else:
            batch.rdd.mapPartitions(slow_partition).count()

    job(spark, None)
    query = (frame.writeStream.queryName("batch_over_trigger").foreachBatch(per_batch)
             .trigger(processingTime=f"{TRIGGER_S} seconds")
             .option("checkpointLocation", os.path.join(scratch, "checkpoint-over-trigger"))
             .start())
    query.awaitTermination(LONG_RUN_S)
    query.stop()


def state_growth(spark, scratch):
    """A count per distinct key of an ever-new key (the row's own value), without a watermark:
    every key stays in the state store for good, the state grows by the input rate."""
    frame = rate(spark, 2000, 2).groupBy((F.col("value")).alias("key")).count()
    run_query(spark, scratch, "state_growth", frame, trigger_s=1, output_mode="update")


def tiny_batches_many_partitions(spark, scratch):
    """5 rows/s aggregated with spark.sql.shuffle.partitions=200 (the manifest's conf): each
    half-second batch of a few rows runs 200 tasks, each loading and committing a state store."""
    frame = (rate(spark, 5, 1).withWatermark("timestamp", "10 seconds")
             .groupBy(F.window("timestamp", "5 seconds")).count())
    run_query(spark, scratch, "tiny_batches", frame, trigger_s=0.5, output_mode="update")


def healthy_stream(spark, scratch):
    """The control: 200 rows/s filtered and projected (stateless) every 2 s on 2 partitions."""
    frame = (rate(spark, 200, 2).where(F.col("value") % 3 == 0)
             .select((F.col("value") * 2).alias("doubled")))
    run_query(spark, scratch, "healthy", frame, trigger_s=2)


WORKLOADS = {f.__name__: f for f in (falling_behind, batch_over_trigger, state_growth,
                                     tiny_batches_many_partitions, healthy_stream)}

if __name__ == "__main__":
    main(WORKLOADS)
