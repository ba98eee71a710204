package org.apache.spark;

/**
 * Compile-only declaration: {@code case class ExecutorLostFailure(execId: String, exitCausedByApp:
 * Boolean, reason: Option[String])}.
 */
public class ExecutorLostFailure implements TaskFailedReason {
  public String execId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public boolean exitCausedByApp() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public scala.Option<String> reason() {
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
