package org.apache.spark.executor;

/** Test stand-in: settable values (fetchWaitTime in ms). */
public class ShuffleReadMetrics {
  private long remoteBlocksFetched = 0;
  private long localBlocksFetched = 0;
  private long fetchWaitTime = 0;
  private long remoteBytesRead = 0;
  private long remoteBytesReadToDisk = 0;
  private long localBytesRead = 0;
  private long recordsRead = 0;
  private long remoteReqsDuration = 0;

  public ShuffleReadMetrics() {
  }

  public long remoteBlocksFetched() {
    return remoteBlocksFetched;
  }

  public ShuffleReadMetrics setRemoteBlocksFetched(long value) {
    remoteBlocksFetched = value;
    return this;
  }

  public long localBlocksFetched() {
    return localBlocksFetched;
  }

  public ShuffleReadMetrics setLocalBlocksFetched(long value) {
    localBlocksFetched = value;
    return this;
  }

  public long fetchWaitTime() {
    return fetchWaitTime;
  }

  public ShuffleReadMetrics setFetchWaitTime(long value) {
    fetchWaitTime = value;
    return this;
  }

  public long remoteBytesRead() {
    return remoteBytesRead;
  }

  public ShuffleReadMetrics setRemoteBytesRead(long value) {
    remoteBytesRead = value;
    return this;
  }

  public long remoteBytesReadToDisk() {
    return remoteBytesReadToDisk;
  }

  public ShuffleReadMetrics setRemoteBytesReadToDisk(long value) {
    remoteBytesReadToDisk = value;
    return this;
  }

  public long localBytesRead() {
    return localBytesRead;
  }

  public ShuffleReadMetrics setLocalBytesRead(long value) {
    localBytesRead = value;
    return this;
  }

  public long recordsRead() {
    return recordsRead;
  }

  public ShuffleReadMetrics setRecordsRead(long value) {
    recordsRead = value;
    return this;
  }

  public long remoteReqsDuration() {
    return remoteReqsDuration;
  }

  public ShuffleReadMetrics setRemoteReqsDuration(long value) {
    remoteReqsDuration = value;
    return this;
  }
}
