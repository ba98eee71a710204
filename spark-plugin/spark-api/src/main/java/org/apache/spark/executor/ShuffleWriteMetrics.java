package org.apache.spark.executor;

/** Compile-only declaration; writeTime is in nanoseconds. */
public class ShuffleWriteMetrics {
  public long bytesWritten() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long recordsWritten() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long writeTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
