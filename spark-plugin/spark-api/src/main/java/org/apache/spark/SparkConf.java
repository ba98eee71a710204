package org.apache.spark;

/** Compile-only declaration of the one SparkConf member sparkprof calls. */
public class SparkConf {
  /** The value of {@code key}, or {@code defaultValue} when it is not set. */
  public String get(String key, String defaultValue) {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
