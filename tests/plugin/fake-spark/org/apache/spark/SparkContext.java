package org.apache.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.scheduler.SparkListenerInterface;

/** Test stand-in for SparkContext: records the listeners the plugin adds. */
public class SparkContext {
  public final List<SparkListenerInterface> listeners = new ArrayList<>();

  public void addSparkListener(SparkListenerInterface listener) {
    listeners.add(listener);
  }
}
