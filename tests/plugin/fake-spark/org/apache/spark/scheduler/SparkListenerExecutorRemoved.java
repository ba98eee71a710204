package org.apache.spark.scheduler;

/** Test stand-in: the case class's constructor and accessors. */
public class SparkListenerExecutorRemoved implements SparkListenerEvent {
  private final long time;
  private final String executorId;
  private final String reason;

  public SparkListenerExecutorRemoved(long time, String executorId, String reason) {
    this.time = time;
    this.executorId = executorId;
    this.reason = reason;
  }

  public long time() {
    return time;
  }

  public String executorId() {
    return executorId;
  }

  public String reason() {
    return reason;
  }
}
