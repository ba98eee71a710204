package org.apache.spark.executor;

/** Test stand-in: settable values (writeTime in ns). */
public class ShuffleWriteMetrics {
  private long bytesWritten = 0;
  private long recordsWritten = 0;
  private long writeTime = 0;

  public ShuffleWriteMetrics() {
  }

  public long bytesWritten() {
    return bytesWritten;
  }

  public ShuffleWriteMetrics setBytesWritten(long value) {
    bytesWritten = value;
    return this;
  }

  public long recordsWritten() {
    return recordsWritten;
  }

  public ShuffleWriteMetrics setRecordsWritten(long value) {
    recordsWritten = value;
    return this;
  }

  public long writeTime() {
    return writeTime;
  }

  public ShuffleWriteMetrics setWriteTime(long value) {
    writeTime = value;
    return this;
  }
}
