package org.apache.spark.scheduler;

/** Test stand-in: the case class's constructor and accessors. */
public class SparkListenerTaskStart implements SparkListenerEvent {
  private final int stageId;
  private final int stageAttemptId;
  private final TaskInfo taskInfo;

  public SparkListenerTaskStart(int stageId, int stageAttemptId, TaskInfo taskInfo) {
    this.stageId = stageId;
    this.stageAttemptId = stageAttemptId;
    this.taskInfo = taskInfo;
  }

  public int stageId() {
    return stageId;
  }

  public int stageAttemptId() {
    return stageAttemptId;
  }

  public TaskInfo taskInfo() {
    return taskInfo;
  }
}
