package org.apache.spark;

import java.util.HashMap;
import java.util.Map;

/** Test stand-in for SparkConf: a map. */
public class SparkConf {
  private final Map<String, String> values = new HashMap<>();

  public SparkConf set(String key, String value) {
    values.put(key, value);
    return this;
  }

  public String get(String key, String defaultValue) {
    String value = values.get(key);
    return value == null ? defaultValue : value;
  }
}
