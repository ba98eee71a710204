package org.apache.spark;

/** Compile-only declaration: {@code case class TaskKilled(reason: String, ...)}. */
public class TaskKilled implements TaskFailedReason {
  public String reason() {
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
