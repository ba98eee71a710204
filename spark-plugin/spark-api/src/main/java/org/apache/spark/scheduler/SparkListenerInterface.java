package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code private[spark] trait SparkListenerInterface} (a public interface
 * in bytecode). Spark's has one method per event; only the ones sparkprof overrides are declared.
 */
public interface SparkListenerInterface {
  void onApplicationStart(SparkListenerApplicationStart applicationStart);

  void onApplicationEnd(SparkListenerApplicationEnd applicationEnd);

  void onEnvironmentUpdate(SparkListenerEnvironmentUpdate environmentUpdate);

  void onExecutorAdded(SparkListenerExecutorAdded executorAdded);

  void onExecutorRemoved(SparkListenerExecutorRemoved executorRemoved);

  void onJobStart(SparkListenerJobStart jobStart);

  void onJobEnd(SparkListenerJobEnd jobEnd);

  void onStageSubmitted(SparkListenerStageSubmitted stageSubmitted);

  void onStageCompleted(SparkListenerStageCompleted stageCompleted);

  void onTaskStart(SparkListenerTaskStart taskStart);

  void onTaskEnd(SparkListenerTaskEnd taskEnd);

  /** SQL execution events (and every other event without its own method) arrive here. */
  void onOtherEvent(SparkListenerEvent event);
}
