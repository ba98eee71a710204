package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerJobEnd(jobId: Int, time: Long,
 * jobResult: JobResult)}.
 */
public class SparkListenerJobEnd implements SparkListenerEvent {
  public int jobId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long time() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public JobResult jobResult() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
