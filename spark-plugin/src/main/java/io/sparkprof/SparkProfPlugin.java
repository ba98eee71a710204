package io.sparkprof;

import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * sparkprof's Spark plugin: {@code spark.plugins=io.sparkprof.SparkProfPlugin}. The executor part
 * tags task threads for the native agent and ships its batches to the driver; the driver part
 * aggregates them into Prometheus metrics and per-stage flame graphs. Keys: {@link SparkProfConfig}.
 */
public final class SparkProfPlugin implements SparkPlugin {
  @Override
  public DriverPlugin driverPlugin() {
    return new SparkProfDriverPlugin();
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new SparkProfExecutorPlugin();
  }
}
