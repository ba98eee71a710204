package org.apache.spark.scheduler;

/** Test stand-in: the case class's constructor and accessor. */
public class SparkListenerStageCompleted implements SparkListenerEvent {
  private final StageInfo stageInfo;

  public SparkListenerStageCompleted(StageInfo stageInfo) {
    this.stageInfo = stageInfo;
  }

  public StageInfo stageInfo() {
    return stageInfo;
  }
}
