package org.apache.spark.scheduler;

/**
 * Test stand-in: Spark 4.0's shape (time, exitCode: Option[Int]); the plugin reads exitCode by
 * reflection.
 */
public class SparkListenerApplicationEnd implements SparkListenerEvent {
  private final long time;
  private final scala.Option<Object> exitCode;

  public SparkListenerApplicationEnd(long time, scala.Option<Object> exitCode) {
    this.time = time;
    this.exitCode = exitCode;
  }

  public long time() {
    return time;
  }

  public scala.Option<Object> exitCode() {
    return exitCode;
  }

  /** Spark 3.5's constructor: no exit code. */
  public SparkListenerApplicationEnd(long time) {
    this(time, scala.Option.empty());
  }
}
