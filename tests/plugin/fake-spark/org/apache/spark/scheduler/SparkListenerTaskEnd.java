package org.apache.spark.scheduler;

/**
 * Test stand-in: the case class's constructor and accessors (without taskExecutorMetrics, which the
 * plugin does not read); taskMetrics may be null, as in Spark for failed tasks.
 */
public class SparkListenerTaskEnd implements SparkListenerEvent {
  private final int stageId;
  private final int stageAttemptId;
  private final String taskType;
  private final org.apache.spark.TaskEndReason reason;
  private final TaskInfo taskInfo;
  private final org.apache.spark.executor.TaskMetrics taskMetrics;

  public SparkListenerTaskEnd(int stageId, int stageAttemptId, String taskType,
      org.apache.spark.TaskEndReason reason, TaskInfo taskInfo,
      org.apache.spark.executor.TaskMetrics taskMetrics) {
    this.stageId = stageId;
    this.stageAttemptId = stageAttemptId;
    this.taskType = taskType;
    this.reason = reason;
    this.taskInfo = taskInfo;
    this.taskMetrics = taskMetrics;
  }

  public int stageId() {
    return stageId;
  }

  public int stageAttemptId() {
    return stageAttemptId;
  }

  public String taskType() {
    return taskType;
  }

  public org.apache.spark.TaskEndReason reason() {
    return reason;
  }

  public TaskInfo taskInfo() {
    return taskInfo;
  }

  public org.apache.spark.executor.TaskMetrics taskMetrics() {
    return taskMetrics;
  }
}
