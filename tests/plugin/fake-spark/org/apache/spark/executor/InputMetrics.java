package org.apache.spark.executor;

/** Test stand-in: settable values. */
public class InputMetrics {
  private long bytesRead = 0;
  private long recordsRead = 0;

  public InputMetrics() {
  }

  public long bytesRead() {
    return bytesRead;
  }

  public InputMetrics setBytesRead(long value) {
    bytesRead = value;
    return this;
  }

  public long recordsRead() {
    return recordsRead;
  }

  public InputMetrics setRecordsRead(long value) {
    recordsRead = value;
    return this;
  }
}
