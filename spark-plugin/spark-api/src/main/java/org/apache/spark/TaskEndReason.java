package org.apache.spark;

/**
 * Compile-only declaration: {@code sealed trait TaskEndReason} (Success$ or a TaskFailedReason).
 */
public interface TaskEndReason {}
