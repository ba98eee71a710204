package org.apache.spark;

/** Test stand-in for Spark's TaskContext: a thread-local the harness sets, as Task.run does. */
public abstract class TaskContext {
  private static final ThreadLocal<TaskContext> CURRENT = new ThreadLocal<>();

  public static TaskContext get() {
    return CURRENT.get();
  }

  public static void setForTest(TaskContext context) {
    CURRENT.set(context);
  }

  public static void unsetForTest() {
    CURRENT.remove();
  }

  public abstract int stageId();

  public abstract int stageAttemptNumber();

  public abstract long taskAttemptId();
}
