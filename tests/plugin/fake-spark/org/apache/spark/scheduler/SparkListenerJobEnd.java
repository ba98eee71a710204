package org.apache.spark.scheduler;

/** Test stand-in: the case class's constructor and accessors. */
public class SparkListenerJobEnd implements SparkListenerEvent {
  private final int jobId;
  private final long time;
  private final JobResult jobResult;

  public SparkListenerJobEnd(int jobId, long time, JobResult jobResult) {
    this.jobId = jobId;
    this.time = time;
    this.jobResult = jobResult;
  }

  public int jobId() {
    return jobId;
  }

  public long time() {
    return time;
  }

  public JobResult jobResult() {
    return jobResult;
  }
}
