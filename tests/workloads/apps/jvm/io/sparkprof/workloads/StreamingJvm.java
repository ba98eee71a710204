package io.sparkprof.workloads;

import java.lang.reflect.Method;
import java.util.Collections;
import java.util.concurrent.TimeoutException;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.streaming.DataStreamWriter;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.StreamingQueryException;

/**
 * The streaming workloads that need a stateful function of the JVM's own (PySpark's
 * applyInPandasWithState failed in Spark 3.5.9 with the venv's pyarrow 26: RecordBatch.slice of a
 * float): a hot key in a stateful operator.
 *
 * <p>Usage: {@code spark-submit --class io.sparkprof.workloads.StreamingJvm JAR WORKLOAD
 * SCRATCH_DIR}, as apps/streaming.py: the query runs for RUN_S seconds and is then stopped, its
 * batch in progress cancelled.
 */
public final class StreamingJvm {
  private StreamingJvm() {}

  static final long RUN_S = 60;
  static final long ROWS_PER_S = 300;
  static final long HOT_ROW_COST_MS = 1;

  public static void main(String[] args) throws StreamingQueryException, TimeoutException {
    if (args.length != 2 || !args[0].equals("skewed_state_key")) {
      System.err.println("usage: StreamingJvm {skewed_state_key} SCRATCH_DIR");
      System.exit(2);
    }
    SparkSession spark =
        SparkSession.builder().appName("sparkprof-workload-" + args[0]).getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    try {
      skewedStateKey(spark, args[1]);
    } finally {
      spark.stop();
    }
  }

  /**
   * A running count per key kept by flatMapGroupsWithState, whose function waits HOT_ROW_COST_MS
   * a row (a slow lookup per event, not CPU: the same cost on a busy machine), over ROWS_PER_S
   * rows/s on a 3 s trigger: 900 rows a batch, 90% of them key 0 and the rest over 97 keys, in
   * spark.sql.shuffle.partitions (the manifest's 4) state partitions. Every row of a key goes to
   * the partition holding its state: in every batch the hot key's partition waits ~0.8 s, the
   * others a few dozen ms, and the batch waits for it. The state stays at 98 keys; the query
   * keeps up.
   */
  static void skewedStateKey(SparkSession spark, String scratch)
      throws StreamingQueryException, TimeoutException {
    Dataset<Row> rate = spark.readStream().format("rate").option("rowsPerSecond", ROWS_PER_S)
        .option("numPartitions", 2L).load();
    Dataset<Long> keys = rate
        .select(functions.when(functions.col("value").mod(10).lt(9), functions.lit(0L))
            .otherwise(functions.col("value").mod(97).plus(1)).alias("key"))
        .as(Encoders.LONG());
    Dataset<Long> counts = keys.groupByKey((MapFunction<Long, Long>) key -> key, Encoders.LONG())
        .flatMapGroupsWithState(
            (FlatMapGroupsWithStateFunction<Long, Long, Long, Long>) (key, rows, state) -> {
              long count = state.exists() ? state.get() : 0L;
              while (rows.hasNext()) {
                rows.next();
                Thread.sleep(HOT_ROW_COST_MS);
                count++;
              }
              state.update(count);
              return Collections.singletonList(count).iterator();
            },
            OutputMode.Update(), Encoders.LONG(), Encoders.LONG(), GroupStateTimeout.NoTimeout());
    DataStreamWriter<Long> writer = counts.writeStream().queryName("skewed_state").format("noop")
        .outputMode("update").option("checkpointLocation", scratch + "/checkpoint-skewed-state");
    StreamingQuery query = processingTime(writer, "3 seconds").start();
    query.awaitTermination(RUN_S * 1000);
    query.stop();
  }

  /**
   * writer.trigger(Trigger.ProcessingTime(interval)), called by reflection: Spark 4's Trigger
   * class carries {@code @Deprecated(since = ...)} annotations that javac --release 8 warns about
   * (and generate.py compiles with -Werror) as soon as the type is named.
   */
  static <T> DataStreamWriter<T> processingTime(DataStreamWriter<T> writer, String interval) {
    try {
      Class<?> triggerClass = Class.forName("org.apache.spark.sql.streaming.Trigger");
      Object trigger = triggerClass.getMethod("ProcessingTime", String.class).invoke(null, interval);
      Method setTrigger = DataStreamWriter.class.getMethod("trigger", triggerClass);
      @SuppressWarnings("unchecked")
      DataStreamWriter<T> result = (DataStreamWriter<T>) setTrigger.invoke(writer, trigger);
      return result;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot set a processing-time trigger", e);
    }
  }
}
