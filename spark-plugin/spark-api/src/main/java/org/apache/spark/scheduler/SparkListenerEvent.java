package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code trait SparkListenerEvent} (scheduler package in 3.5; same
 * package, moved to common/utils, in 4.0). Every listener event implements it.
 */
public interface SparkListenerEvent {}
