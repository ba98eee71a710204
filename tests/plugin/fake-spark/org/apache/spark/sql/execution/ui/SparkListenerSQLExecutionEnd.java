package org.apache.spark.sql.execution.ui;

/** Test stand-in: the members the plugin reads. */
public class SparkListenerSQLExecutionEnd implements org.apache.spark.scheduler.SparkListenerEvent {
  private final long executionId;
  private final long time;
  private final scala.Option<String> errorMessage;

  public SparkListenerSQLExecutionEnd(
      long executionId, long time, scala.Option<String> errorMessage) {
    this.executionId = executionId;
    this.time = time;
    this.errorMessage = errorMessage;
  }

  public long executionId() {
    return executionId;
  }

  public long time() {
    return time;
  }

  public scala.Option<String> errorMessage() {
    return errorMessage;
  }
}
