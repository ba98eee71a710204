package org.apache.spark.scheduler;

/** Compile-only declaration: {@code sealed trait JobResult} (JobSucceeded$ or JobFailed). */
public interface JobResult {}
