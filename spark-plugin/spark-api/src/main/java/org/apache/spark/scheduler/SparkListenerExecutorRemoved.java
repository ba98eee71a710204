package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerExecutorRemoved(time: Long, executorId:
 * String, reason: String)}.
 */
public class SparkListenerExecutorRemoved implements SparkListenerEvent {
  public long time() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String executorId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String reason() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
