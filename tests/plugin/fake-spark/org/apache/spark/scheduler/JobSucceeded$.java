package org.apache.spark.scheduler;

/** Test stand-in: the case object. */
public final class JobSucceeded$ implements JobResult {
  public static final JobSucceeded$ MODULE$ = new JobSucceeded$();

  private JobSucceeded$() {}
}
