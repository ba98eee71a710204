package org.apache.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.scheduler.SparkListenerInterface;

/** Test stand-in for SparkContext: records the listeners the plugin adds. */
public class SparkContext {
  public final List<SparkListenerInterface> listeners = new ArrayList<>();
  private String version = "3.5.1";

  public void addSparkListener(SparkListenerInterface listener) {
    listeners.add(listener);
  }

  public String version() {
    return version;
  }

  public SparkContext setVersion(String version) {
    this.version = version;
    return this;
  }
}
