package org.apache.spark.scheduler;

/** Test stand-in: the case class's constructor and accessors. */
public class SparkListenerStageSubmitted implements SparkListenerEvent {
  private final StageInfo stageInfo;
  private final java.util.Properties properties;

  public SparkListenerStageSubmitted(StageInfo stageInfo, java.util.Properties properties) {
    this.stageInfo = stageInfo;
    this.properties = properties;
  }

  public StageInfo stageInfo() {
    return stageInfo;
  }

  public java.util.Properties properties() {
    return properties;
  }
}
