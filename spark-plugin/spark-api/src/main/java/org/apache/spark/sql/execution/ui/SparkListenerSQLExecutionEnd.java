package org.apache.spark.sql.execution.ui;

/**
 * Compile-only declaration (spark-sql; arrives through onOtherEvent): {@code case class
 * SparkListenerSQLExecutionEnd(executionId: Long, time: Long, errorMessage: Option[String] =
 * None)}; errorMessage (3.4+) is read by reflection.
 */
public class SparkListenerSQLExecutionEnd implements org.apache.spark.scheduler.SparkListenerEvent {
  public long executionId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long time() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
