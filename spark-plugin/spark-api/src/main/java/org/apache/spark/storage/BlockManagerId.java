package org.apache.spark.storage;

/** Compile-only declaration of the BlockManagerId members sparkprof calls. */
public class BlockManagerId {
  public String executorId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String host() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int port() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
