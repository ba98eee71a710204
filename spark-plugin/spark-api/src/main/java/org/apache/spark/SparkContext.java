package org.apache.spark;

import org.apache.spark.scheduler.SparkListenerInterface;

/** Compile-only declaration of the one SparkContext member sparkprof calls. */
public class SparkContext {
  public void addSparkListener(SparkListenerInterface listener) {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
