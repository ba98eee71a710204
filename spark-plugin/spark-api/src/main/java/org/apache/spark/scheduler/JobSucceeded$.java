package org.apache.spark.scheduler;

/** Compile-only declaration: {@code case object JobSucceeded extends JobResult}. */
public final class JobSucceeded$ implements JobResult {
  public static final JobSucceeded$ MODULE$ = null;

  private JobSucceeded$() {}
}
