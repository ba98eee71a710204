package org.apache.spark.scheduler.cluster;

/** Test stand-in: host and cores (Spark's Map-typed members are not read by the plugin). */
public class ExecutorInfo {
  private final String executorHost;
  private final int totalCores;

  public ExecutorInfo(String executorHost, int totalCores) {
    this.executorHost = executorHost;
    this.totalCores = totalCores;
  }

  public String executorHost() {
    return executorHost;
  }

  public int totalCores() {
    return totalCores;
  }
}
