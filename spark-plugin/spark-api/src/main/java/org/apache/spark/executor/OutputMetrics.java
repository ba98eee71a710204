package org.apache.spark.executor;

/** Compile-only declaration. */
public class OutputMetrics {
  public long bytesWritten() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long recordsWritten() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
