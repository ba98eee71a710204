package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerStageSubmitted(stageInfo: StageInfo,
 * properties: Properties = null)}.
 */
public class SparkListenerStageSubmitted implements SparkListenerEvent {
  public StageInfo stageInfo() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public java.util.Properties properties() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
