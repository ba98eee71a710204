package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerEnvironmentUpdate(environmentDetails:
 * Map[String, collection.Seq[(String, String)]])}. The accessor is not declared: its Scala
 * collection types differ between 2.12 and 2.13, so sparkprof calls it by reflection and walks it
 * as {@code scala.collection.Iterable}.
 */
public class SparkListenerEnvironmentUpdate implements SparkListenerEvent {
}
