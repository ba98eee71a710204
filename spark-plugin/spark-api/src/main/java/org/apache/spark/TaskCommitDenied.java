package org.apache.spark;

/**
 * Compile-only declaration: {@code case class TaskCommitDenied(jobID: Int, partitionID: Int,
 * attemptNumber: Int)}.
 */
public class TaskCommitDenied implements TaskFailedReason {
  public int jobID() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int partitionID() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int attemptNumber() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  @Override
  public String toErrorString() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  @Override
  public boolean countTowardsTaskFailures() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
