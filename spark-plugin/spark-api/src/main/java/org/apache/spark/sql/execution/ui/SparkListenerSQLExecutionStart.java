package org.apache.spark.sql.execution.ui;

/**
 * Compile-only declaration (spark-sql; arrives through onOtherEvent): the members of {@code case
 * class SparkListenerSQLExecutionStart(executionId: Long, rootExecutionId: Option[Long],
 * description: String, details: String, physicalPlanDescription: String, sparkPlanInfo:
 * SparkPlanInfo, time: Long, ...)} sparkprof reads. rootExecutionId (3.4+) is read by reflection.
 */
public class SparkListenerSQLExecutionStart
    implements org.apache.spark.scheduler.SparkListenerEvent {
  public long executionId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String description() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String details() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String physicalPlanDescription() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long time() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
