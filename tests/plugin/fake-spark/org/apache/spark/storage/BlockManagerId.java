package org.apache.spark.storage;

/** Test stand-in: the three ids. */
public class BlockManagerId {
  private final String executorId;
  private final String host;
  private final int port;

  public BlockManagerId(String executorId, String host, int port) {
    this.executorId = executorId;
    this.host = host;
    this.port = port;
  }

  public String executorId() {
    return executorId;
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }
}
