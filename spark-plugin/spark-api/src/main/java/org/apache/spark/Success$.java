package org.apache.spark;

/** Compile-only declaration: {@code case object Success extends TaskEndReason}. */
public final class Success$ implements TaskEndReason {
  public static final Success$ MODULE$ = null;

  private Success$() {}
}
