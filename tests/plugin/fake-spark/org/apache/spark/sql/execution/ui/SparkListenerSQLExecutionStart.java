package org.apache.spark.sql.execution.ui;

/** Test stand-in: the members the plugin reads. */
public class SparkListenerSQLExecutionStart
    implements org.apache.spark.scheduler.SparkListenerEvent {
  private final long executionId;
  private final scala.Option<Object> rootExecutionId;
  private final String description;
  private final String details;
  private final String physicalPlanDescription;
  private final long time;

  public SparkListenerSQLExecutionStart(long executionId, scala.Option<Object> rootExecutionId,
      String description, String details, String physicalPlanDescription, long time) {
    this.executionId = executionId;
    this.rootExecutionId = rootExecutionId;
    this.description = description;
    this.details = details;
    this.physicalPlanDescription = physicalPlanDescription;
    this.time = time;
  }

  public long executionId() {
    return executionId;
  }

  public scala.Option<Object> rootExecutionId() {
    return rootExecutionId;
  }

  public String description() {
    return description;
  }

  public String details() {
    return details;
  }

  public String physicalPlanDescription() {
    return physicalPlanDescription;
  }

  public long time() {
    return time;
  }
}
