package org.apache.spark;

/**
 * Compile-only declaration: {@code case class FetchFailed(bmAddress: BlockManagerId, shuffleId:
 * Int, mapId: Long, mapIndex: Int, reduceId: Int, message: String); bmAddress may be null}.
 */
public class FetchFailed implements TaskFailedReason {
  public org.apache.spark.storage.BlockManagerId bmAddress() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int shuffleId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long mapId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int mapIndex() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int reduceId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String message() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  @Override
  public String toErrorString() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  @Override
  public boolean countTowardsTaskFailures() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
