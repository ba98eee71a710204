package org.apache.spark;

/** Compile-only declaration: Scala {@code sealed trait TaskFailedReason extends TaskEndReason}. */
public interface TaskFailedReason {
  String toErrorString();

  boolean countTowardsTaskFailures();
}
