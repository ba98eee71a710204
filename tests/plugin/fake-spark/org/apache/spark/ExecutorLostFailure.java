package org.apache.spark;

/** Test stand-in: the case class's constructor and accessors. */
public class ExecutorLostFailure implements TaskFailedReason {
  private final String execId;
  private final boolean exitCausedByApp;
  private final scala.Option<String> reason;

  public ExecutorLostFailure(String execId, boolean exitCausedByApp, scala.Option<String> reason) {
    this.execId = execId;
    this.exitCausedByApp = exitCausedByApp;
    this.reason = reason;
  }

  public String execId() {
    return execId;
  }

  public boolean exitCausedByApp() {
    return exitCausedByApp;
  }

  public scala.Option<String> reason() {
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
