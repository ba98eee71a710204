package org.apache.spark;

import org.apache.spark.scheduler.SparkListenerInterface;

/** Compile-only declaration of the SparkContext members sparkprof calls. */
public class SparkContext {
  public void addSparkListener(SparkListenerInterface listener) {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  /** The Spark version, e.g. "3.5.1". */
  public String version() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
