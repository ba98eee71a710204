package org.apache.spark;

/** Test stand-in: the case class's constructor and accessors. */
public class TaskCommitDenied implements TaskFailedReason {
  private final int jobID;
  private final int partitionID;
  private final int attemptNumber;

  public TaskCommitDenied(int jobID, int partitionID, int attemptNumber) {
    this.jobID = jobID;
    this.partitionID = partitionID;
    this.attemptNumber = attemptNumber;
  }

  public int jobID() {
    return jobID;
  }

  public int partitionID() {
    return partitionID;
  }

  public int attemptNumber() {
    return attemptNumber;
  }

  @Override
  public String toErrorString() {
    return getClass().getSimpleName();
  }

  @Override
  public boolean countTowardsTaskFailures() {
    return true;
  }
}
