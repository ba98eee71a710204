package org.apache.spark.scheduler;

/** Test stand-in: the case class's constructor and accessors. */
public class SparkListenerApplicationStart implements SparkListenerEvent {
  private final String appName;
  private final scala.Option<String> appId;
  private final long time;
  private final String sparkUser;
  private final scala.Option<String> appAttemptId;

  public SparkListenerApplicationStart(String appName, scala.Option<String> appId, long time,
      String sparkUser, scala.Option<String> appAttemptId) {
    this.appName = appName;
    this.appId = appId;
    this.time = time;
    this.sparkUser = sparkUser;
    this.appAttemptId = appAttemptId;
  }

  public String appName() {
    return appName;
  }

  public scala.Option<String> appId() {
    return appId;
  }

  public long time() {
    return time;
  }

  public String sparkUser() {
    return sparkUser;
  }

  public scala.Option<String> appAttemptId() {
    return appAttemptId;
  }
}
