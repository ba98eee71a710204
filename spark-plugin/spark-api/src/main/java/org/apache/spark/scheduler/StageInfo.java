package org.apache.spark.scheduler;

/** Compile-only declaration of the StageInfo members sparkprof calls. */
public class StageInfo {
  public int stageId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int attemptNumber() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
