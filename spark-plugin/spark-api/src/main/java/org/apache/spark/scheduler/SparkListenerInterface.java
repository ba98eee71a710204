package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code private[spark] trait SparkListenerInterface} (a public interface
 * in bytecode). Spark's has one method per event; only the ones sparkprof overrides are declared.
 */
public interface SparkListenerInterface {
  void onStageCompleted(SparkListenerStageCompleted stageCompleted);
}
