package org.apache.spark;

/**
 * Compile-only declaration: {@code case class ExceptionFailure(className: String, description:
 * String, stackTrace: Array[StackTraceElement], fullStackTrace: String, ...)}.
 */
public class ExceptionFailure implements TaskFailedReason {
  public String className() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String description() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String fullStackTrace() {
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
