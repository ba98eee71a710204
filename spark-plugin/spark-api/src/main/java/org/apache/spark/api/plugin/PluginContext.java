package org.apache.spark.api.plugin;

import java.io.IOException;
import org.apache.spark.SparkConf;

/**
 * Compile-only declaration (Spark 3.0+; identical in 3.5 and 4.0) of the members sparkprof calls.
 * Spark's interface also has {@code metricRegistry()} and {@code resources()}, left out here so
 * no Dropwizard or resource types need declaring.
 */
public interface PluginContext {
  SparkConf conf();

  String executorID();

  String hostname();

  void send(Object message) throws IOException;

  Object ask(Object message) throws Exception;
}
