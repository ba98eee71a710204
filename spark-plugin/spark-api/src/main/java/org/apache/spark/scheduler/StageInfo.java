package org.apache.spark.scheduler;

/**
 * Compile-only declaration of the StageInfo members sparkprof calls (identical in 3.5 and 4.0).
 * {@code parentIds: Seq[Int]} is not declared: its descriptor differs between Scala 2.12 and 2.13,
 * so it is called by reflection and iterated as {@code scala.collection.Iterable}. The {@code
 * Option[Long]} times hold boxed {@code java.lang.Long}s.
 */
public class StageInfo {
  public int stageId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int attemptNumber() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String name() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public int numTasks() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public String details() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public scala.Option<Object> submissionTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public scala.Option<Object> completionTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public scala.Option<String> failureReason() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
