package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerTaskStart(stageId: Int, stageAttemptId:
 * Int, taskInfo: TaskInfo)}.
 */
public class SparkListenerTaskStart implements SparkListenerEvent {
  public int stageId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int stageAttemptId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public TaskInfo taskInfo() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
