package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerTaskEnd(stageId: Int, stageAttemptId:
 * Int, taskType: String, reason: TaskEndReason, taskInfo: TaskInfo, taskExecutorMetrics:
 * ExecutorMetrics, @Nullable taskMetrics: TaskMetrics)}; taskMetrics may be null for a failed task.
 * taskExecutorMetrics is not used.
 */
public class SparkListenerTaskEnd implements SparkListenerEvent {
  public int stageId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int stageAttemptId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String taskType() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public org.apache.spark.TaskEndReason reason() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public TaskInfo taskInfo() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public org.apache.spark.executor.TaskMetrics taskMetrics() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
