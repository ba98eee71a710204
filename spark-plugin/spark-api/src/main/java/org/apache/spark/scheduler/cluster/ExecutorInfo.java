package org.apache.spark.scheduler.cluster;

/**
 * Compile-only declaration of the ExecutorInfo members sparkprof calls (the Map-typed ones are left
 * out).
 */
public class ExecutorInfo {
  public String executorHost() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int totalCores() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
