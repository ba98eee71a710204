package org.apache.spark.scheduler;

/** Test stand-in: just the ids. */
public class StageInfo {
  private final int stageId;
  private final int attemptNumber;

  public StageInfo(int stageId, int attemptNumber) {
    this.stageId = stageId;
    this.attemptNumber = attemptNumber;
  }

  public int stageId() {
    return stageId;
  }

  public int attemptNumber() {
    return attemptNumber;
  }
}
