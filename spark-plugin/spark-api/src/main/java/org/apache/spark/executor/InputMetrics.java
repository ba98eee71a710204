package org.apache.spark.executor;

/** Compile-only declaration. */
public class InputMetrics {
  public long bytesRead() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long recordsRead() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
