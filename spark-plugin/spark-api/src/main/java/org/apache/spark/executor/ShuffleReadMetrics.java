package org.apache.spark.executor;

/** Compile-only declaration; fetchWaitTime and remoteReqsDuration (3.4+) in ms. */
public class ShuffleReadMetrics {
  public long remoteBlocksFetched() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long localBlocksFetched() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long fetchWaitTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long remoteBytesRead() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long remoteBytesReadToDisk() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long localBytesRead() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long recordsRead() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long remoteReqsDuration() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
