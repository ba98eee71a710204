package org.apache.spark;

/** Test stand-in: the case class's constructor and accessors. */
public class FetchFailed implements TaskFailedReason {
  private final org.apache.spark.storage.BlockManagerId bmAddress;
  private final int shuffleId;
  private final long mapId;
  private final int mapIndex;
  private final int reduceId;
  private final String message;

  public FetchFailed(org.apache.spark.storage.BlockManagerId bmAddress, int shuffleId, long mapId,
      int mapIndex, int reduceId, String message) {
    this.bmAddress = bmAddress;
    this.shuffleId = shuffleId;
    this.mapId = mapId;
    this.mapIndex = mapIndex;
    this.reduceId = reduceId;
    this.message = message;
  }

  public org.apache.spark.storage.BlockManagerId bmAddress() {
    return bmAddress;
  }

  public int shuffleId() {
    return shuffleId;
  }

  public long mapId() {
    return mapId;
  }

  public int mapIndex() {
    return mapIndex;
  }

  public int reduceId() {
    return reduceId;
  }

  public String message() {
    return message;
  }

  @Override
  public String toErrorString() {
    return getClass().getSimpleName();
  }

  @Override
  public boolean countTowardsTaskFailures() {
    return true;
  }
}
