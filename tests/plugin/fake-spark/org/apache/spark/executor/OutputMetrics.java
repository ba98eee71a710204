package org.apache.spark.executor;

/** Test stand-in: settable values. */
public class OutputMetrics {
  private long bytesWritten = 0;
  private long recordsWritten = 0;

  public OutputMetrics() {
  }

  public long bytesWritten() {
    return bytesWritten;
  }

  public OutputMetrics setBytesWritten(long value) {
    bytesWritten = value;
    return this;
  }

  public long recordsWritten() {
    return recordsWritten;
  }

  public OutputMetrics setRecordsWritten(long value) {
    recordsWritten = value;
    return this;
  }
}
