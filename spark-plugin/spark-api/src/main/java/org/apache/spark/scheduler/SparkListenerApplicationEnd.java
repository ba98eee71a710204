package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerApplicationEnd(time: Long)} in 3.5; 4.0
 * adds {@code exitCode: Option[Int]}, read by reflection so the plugin links against both.
 */
public class SparkListenerApplicationEnd implements SparkListenerEvent {
  public long time() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
