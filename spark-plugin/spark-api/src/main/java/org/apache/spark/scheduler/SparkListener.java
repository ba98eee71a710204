package org.apache.spark.scheduler;

/**
 * Compile-only declaration: Spark's abstract listener with empty implementations (the bodies are
 * empty here too, so test harnesses may run against this class).
 */
public abstract class SparkListener implements SparkListenerInterface {
  @Override
  public void onApplicationStart(SparkListenerApplicationStart applicationStart) {}

  @Override
  public void onApplicationEnd(SparkListenerApplicationEnd applicationEnd) {}

  @Override
  public void onEnvironmentUpdate(SparkListenerEnvironmentUpdate environmentUpdate) {}

  @Override
  public void onExecutorAdded(SparkListenerExecutorAdded executorAdded) {}

  @Override
  public void onExecutorRemoved(SparkListenerExecutorRemoved executorRemoved) {}

  @Override
  public void onJobStart(SparkListenerJobStart jobStart) {}

  @Override
  public void onJobEnd(SparkListenerJobEnd jobEnd) {}

  @Override
  public void onStageSubmitted(SparkListenerStageSubmitted stageSubmitted) {}

  @Override
  public void onStageCompleted(SparkListenerStageCompleted stageCompleted) {}

  @Override
  public void onTaskStart(SparkListenerTaskStart taskStart) {}

  @Override
  public void onTaskEnd(SparkListenerTaskEnd taskEnd) {}

  @Override
  public void onOtherEvent(SparkListenerEvent event) {}
}
