package org.apache.spark;

/** Test stand-in: the case class's constructor and accessors. */
public class ExceptionFailure implements TaskFailedReason {
  private final String className;
  private final String description;
  private final String fullStackTrace;

  public ExceptionFailure(String className, String description, String fullStackTrace) {
    this.className = className;
    this.description = description;
    this.fullStackTrace = fullStackTrace;
  }

  public String className() {
    return className;
  }

  public String description() {
    return description;
  }

  public String fullStackTrace() {
    return fullStackTrace;
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
