package org.apache.spark;

/**
 * Compile-only declaration: Scala {@code abstract class TaskContext}, with the static forwarder.
 */
public abstract class TaskContext {
  /** The running task's context on this thread, or null. */
  public static TaskContext get() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public abstract int stageId();

  public abstract int stageAttemptNumber();

  public abstract long taskAttemptId();
}
