package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerStageCompleted(stageInfo: StageInfo)}.
 */
public class SparkListenerStageCompleted implements SparkListenerEvent {
  public StageInfo stageInfo() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
