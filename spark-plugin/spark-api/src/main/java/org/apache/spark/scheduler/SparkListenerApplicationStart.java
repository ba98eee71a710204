package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerApplicationStart(appName: String, appId:
 * Option[String], time: Long, sparkUser: String, appAttemptId: Option[String], ...)} (3.5 and 4.0).
 */
public class SparkListenerApplicationStart implements SparkListenerEvent {
  public String appName() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public scala.Option<String> appId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long time() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String sparkUser() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public scala.Option<String> appAttemptId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
