package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerExecutorAdded(time: Long, executorId:
 * String, executorInfo: ExecutorInfo)}.
 */
public class SparkListenerExecutorAdded implements SparkListenerEvent {
  public long time() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String executorId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public org.apache.spark.scheduler.cluster.ExecutorInfo executorInfo() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
