package org.apache.spark;

/** Test stand-in: the case class's constructor and accessors. */
public class TaskKilled implements TaskFailedReason {
  private final String reason;

  public TaskKilled(String reason) {
    this.reason = reason;
  }

  public String reason() {
    return reason;
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
