package org.apache.spark;

/** Test stand-in: a failure case object the plugin knows only by its class name. */
public final class Resubmitted$ implements TaskFailedReason {
  public static final Resubmitted$ MODULE$ = new Resubmitted$();

  private Resubmitted$() {}

  @Override
  public String toErrorString() {
    return getClass().getSimpleName();
  }

  @Override
  public boolean countTowardsTaskFailures() {
    return true;
  }
}
