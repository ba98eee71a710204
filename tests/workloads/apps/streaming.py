"""Structured Streaming workloads: a query that falls behind, batches longer than their trigger,
state that grows without a watermark, per-batch overhead on tiny batches, a slow sink commit,
and a healthy control (a hot key in a stateful operator: apps/jvm/.../StreamingJvm.java).

spark-submit streaming.py WORKLOAD SCRATCH_DIR (see tests/workloads/manifest.json).

Every query reads Spark's `rate` source (no broker needed), writes to the `noop` sink, runs for
RUN_S seconds (longer for the three whose pattern needs many batches) and is then stopped with
query.stop(), as an application ending a streaming query does: the batch running at that moment
is cancelled (its jobs end "cancelled").
"""

import os
import time

from pyspark.sql import functions as F
from pyspark.sql.types import LongType

from common import job, main

RUN_S = 25
# falling_behind: its batches grow by the busy share (about 1.6 here) each, from the first with
# rows (its Python workers start: 7-9 s on 2 busy cores), so the batches end at about 3, 11, 25,
# 48, 83 and 138 s; the one running at the stop is cancelled and logs no progress. falling-behind
# judges the batches after the first, at least three of them (backlog and lag growing in each):
# the fourth batch ends by ~50 s in both recorded runs, so a host 2.4 times slower still shows the
# pattern within 120 s (the other rules read at least four batches after the first: ~85 s).
FALLING_BEHIND_RUN_S = 120
# batch_over_trigger: QUICK_BATCHES on the trigger's schedule, then about eight slow ones.
OVER_TRIGGER_RUN_S = 75
# tiny_batches_many_partitions: a batch of 40 state-store tasks (the manifest's shuffle
# partitions) took about 2 s on 2 busy cores; 60 s hold a dozen or more (17 on Spark 3.5.9).
TINY_BATCHES_RUN_S = 60


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


# falling_behind's cost: a fixed wait per row (a call to a slow service, say), not CPU, so that
# the processing rate -- and with it the busy share -- is the same on an idle machine and on one
# whose cores a build holds: ROW_COST_S x INPUT_ROWS_PER_S / 2 slots = 1.5, plus the per-batch
# overhead (a CPU-bound UDF ran 1.6x behind on Spark 3.5.9 and 3-5x on 4.2.0, on the same busy
# machine: three batches in 90 s).
ROW_COST_S = 0.001
INPUT_ROWS_PER_S = 3000


def falling_behind(spark, scratch):
    """3000 rows/s in (reached after an 8 s ramp-up, so the first batches are small and quick); a
    pandas UDF waiting 1 ms a row on 2 task slots processes under 2000 rows/s: once the input
    passes that, every batch is larger than the one before and the backlog grows. Each batch
    lasts the busy share (input / processing rate, 1.5 or a little more) times the one before,
    so a run of two minutes holds the batches the rules need."""

    @F.pandas_udf(LongType())
    def slow_call(values):
        time.sleep(len(values) * ROW_COST_S)
        return values * 31 % 1_000_003

    frame = (rate(spark, INPUT_ROWS_PER_S, 2, ramp_up_s=8)
             .select(slow_call(F.col("value")).alias("score")))
    run_query(spark, scratch, "falling_behind", frame, run_s=FALLING_BEHIND_RUN_S)


# The trigger's interval is not in the event log: sparkprof reads it from the batches that waited
# for their trigger (their starts fall on multiples of it, model::InferTriggerInterval needs at
# least 3). Six quick batches leave at least four such starts even when the first batch, which
# starts the executors' work, overruns the interval.
QUICK_BATCHES = 6
SLOW_BATCH_S = 6
TRIGGER_S = 3


def batch_over_trigger(spark, scratch):
    """A 3 s trigger. The first QUICK_BATCHES batches are quick (they wait for their trigger, so
    the schedule shows the interval, even on a busy machine); from then on every batch pays a
    fixed 6 s in each task (a slow external call per partition, whatever the rows): the batches
    take ~6.5 s, the query keeps up with its 50 rows/s but a batch starts every ~6.5 s, not
    every 3."""

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
    query.awaitTermination(OVER_TRIGGER_RUN_S)
    query.stop()


def state_growth(spark, scratch):
    """A count per distinct key of an ever-new key (the row's own value), without a watermark:
    every key stays in the state store for good, the state grows by the input rate."""
    frame = rate(spark, 2000, 2).groupBy((F.col("value")).alias("key")).count()
    run_query(spark, scratch, "state_growth", frame, trigger_s=1, output_mode="update")


def tiny_batches_many_partitions(spark, scratch):
    """2 rows/s aggregated with spark.sql.shuffle.partitions=40 (the manifest's conf) on 2 slots:
    each half-second batch of a few rows runs 40 tasks (20 a slot), each loading and committing a
    state store, most of them for no row. (Spark's default 200 plants the same, but one batch of
    200 state-store tasks took 19 s on 2 busy cores: a one-minute run showed a single batch.)"""
    frame = (rate(spark, 2, 1).withWatermark("timestamp", "10 seconds")
             .groupBy(F.window("timestamp", "5 seconds")).count())
    run_query(spark, scratch, "tiny_batches", frame, trigger_s=0.5, output_mode="update",
              run_s=TINY_BATCHES_RUN_S)


# slow_sink_commit: the sink's commit on the driver, after the batch's job, takes SINK_COMMIT_S
# (a table format's commit or a catalog update against a slow service), on a 3 s trigger. Its
# first two batches take 7-10 s on 2 busy cores (executors and Python workers starting): 25 s held
# five batches, the least the rules read; 45 s hold about a dozen.
SINK_COMMIT_S = 2
SLOW_SINK_RUN_S = 45


def slow_sink_commit(spark, scratch):
    """200 rows/s every 3 s written by foreachBatch: the batch's job counts its rows, then the
    function commits on the driver for SINK_COMMIT_S (a wait, not CPU). Batches take ~2.5 s, most
    of it in addBatch outside the batch's job; the query keeps up."""

    def write_and_commit(batch, batch_id):
        batch.count()
        time.sleep(SINK_COMMIT_S)

    job(spark, None)
    query = (rate(spark, 200, 2).writeStream.queryName("slow_sink_commit")
             .foreachBatch(write_and_commit).trigger(processingTime="3 seconds")
             .option("checkpointLocation", os.path.join(scratch, "checkpoint-slow-sink"))
             .start())
    query.awaitTermination(SLOW_SINK_RUN_S)
    query.stop()


def healthy_stream(spark, scratch):
    """The control: 200 rows/s filtered and projected (stateless) every 2 s on 2 partitions."""
    frame = (rate(spark, 200, 2).where(F.col("value") % 3 == 0)
             .select((F.col("value") * 2).alias("doubled")))
    run_query(spark, scratch, "healthy", frame, trigger_s=2)


WORKLOADS = {f.__name__: f for f in (falling_behind, batch_over_trigger, state_growth,
                                     tiny_batches_many_partitions, slow_sink_commit,
                                     healthy_stream)}

if __name__ == "__main__":
    main(WORKLOADS)
