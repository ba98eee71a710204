package org.apache.spark.scheduler;

/** Test stand-in: the case class's constructor and accessors. */
public class SparkListenerExecutorAdded implements SparkListenerEvent {
  private final long time;
  private final String executorId;
  private final org.apache.spark.scheduler.cluster.ExecutorInfo executorInfo;

  public SparkListenerExecutorAdded(
      long time, String executorId, org.apache.spark.scheduler.cluster.ExecutorInfo executorInfo) {
    this.time = time;
    this.executorId = executorId;
    this.executorInfo = executorInfo;
  }

  public long time() {
    return time;
  }

  public String executorId() {
    return executorId;
  }

  public org.apache.spark.scheduler.cluster.ExecutorInfo executorInfo() {
    return executorInfo;
  }
}
