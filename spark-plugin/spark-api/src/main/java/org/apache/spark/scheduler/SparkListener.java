package org.apache.spark.scheduler;

/** Compile-only declaration: Spark's abstract listener with empty implementations. */
public abstract class SparkListener implements SparkListenerInterface {
  @Override
  public void onStageCompleted(SparkListenerStageCompleted stageCompleted) {}
}
