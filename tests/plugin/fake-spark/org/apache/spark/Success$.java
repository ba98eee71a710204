package org.apache.spark;

/** Test stand-in: the case object. */
public final class Success$ implements TaskEndReason {
  public static final Success$ MODULE$ = new Success$();

  private Success$() {}
}
