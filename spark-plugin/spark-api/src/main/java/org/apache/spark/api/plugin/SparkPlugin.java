package org.apache.spark.api.plugin;

/** Compile-only declaration (Spark 3.0+; identical in 3.5 and 4.0). */
public interface SparkPlugin {
  DriverPlugin driverPlugin();

  ExecutorPlugin executorPlugin();
}
