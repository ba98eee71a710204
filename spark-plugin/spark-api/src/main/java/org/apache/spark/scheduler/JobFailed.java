package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code private[spark] case class JobFailed(exception: Exception)
 * extends JobResult} (public in bytecode).
 */
public class JobFailed implements JobResult {
  public Exception exception() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
