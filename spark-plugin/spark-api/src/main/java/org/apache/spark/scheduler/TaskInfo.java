package org.apache.spark.scheduler;

/**
 * Compile-only declaration of the TaskInfo members sparkprof calls (3.5 and 4.0). {@code
 * taskLocality} (a Scala Enumeration value) is read by reflection and printed with toString().
 */
public class TaskInfo {
  public long taskId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int index() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int attemptNumber() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int partitionId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long launchTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String executorId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String host() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public boolean speculative() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long gettingResultTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long finishTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public boolean failed() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public boolean killed() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
