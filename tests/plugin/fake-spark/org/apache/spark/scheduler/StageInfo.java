package org.apache.spark.scheduler;

/**
 * Test stand-in: ids, name, task count, parents (a Seq: scala.collection.FakeSeq) and the mutable
 * times Spark sets as the stage runs (set*). The times are Option[Long] like Spark's.
 */
public class StageInfo {
  private final int stageId;
  private final int attemptNumber;
  private final String name;
  private final int numTasks;
  private final scala.collection.Iterable<Object> parentIds;
  private final String details;
  private scala.Option<Object> submissionTime = scala.Option.empty();
  private scala.Option<Object> completionTime = scala.Option.empty();
  private scala.Option<String> failureReason = scala.Option.empty();

  public StageInfo(int stageId, int attemptNumber, String name, int numTasks,
      scala.collection.Iterable<Object> parentIds, String details) {
    this.stageId = stageId;
    this.attemptNumber = attemptNumber;
    this.name = name;
    this.numTasks = numTasks;
    this.parentIds = parentIds;
    this.details = details;
  }

  public int stageId() {
    return stageId;
  }

  public int attemptNumber() {
    return attemptNumber;
  }

  public String name() {
    return name;
  }

  public int numTasks() {
    return numTasks;
  }

  public scala.collection.Iterable<Object> parentIds() {
    return parentIds;
  }

  public String details() {
    return details;
  }

  public scala.Option<Object> submissionTime() {
    return submissionTime;
  }

  public StageInfo setSubmissionTime(scala.Option<Object> value) {
    submissionTime = value;
    return this;
  }

  public scala.Option<Object> completionTime() {
    return completionTime;
  }

  public StageInfo setCompletionTime(scala.Option<Object> value) {
    completionTime = value;
    return this;
  }

  public scala.Option<String> failureReason() {
    return failureReason;
  }

  public StageInfo setFailureReason(scala.Option<String> value) {
    failureReason = value;
    return this;
  }

  /** The ids-only stage the first plugin tests use. */
  public StageInfo(int stageId, int attemptNumber) {
    this(stageId, attemptNumber, "stage " + stageId, 1, new scala.collection.FakeSeq<>(), "");
  }
}
