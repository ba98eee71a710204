package org.apache.spark;

/** Compile-only declaration: Scala {@code sealed trait TaskFailedReason extends TaskEndReason}. */
public interface TaskFailedReason extends TaskEndReason {
  String toErrorString();

  boolean countTowardsTaskFailures();
}
