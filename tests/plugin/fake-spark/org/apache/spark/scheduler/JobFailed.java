package org.apache.spark.scheduler;

/** Test stand-in: the case class's constructor and accessor. */
public class JobFailed implements JobResult {
  private final Exception exception;

  public JobFailed(Exception exception) {
    this.exception = exception;
  }

  public Exception exception() {
    return exception;
  }
}
