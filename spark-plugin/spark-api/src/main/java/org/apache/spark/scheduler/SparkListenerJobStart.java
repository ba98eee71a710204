package org.apache.spark.scheduler;

/**
 * Compile-only declaration: {@code case class SparkListenerJobStart(jobId: Int, time: Long,
 * stageInfos: Seq[StageInfo], properties: Properties)} with {@code val stageIds: Seq[Int]}. The two
 * Seq accessors are not declared: their descriptors differ between Scala 2.12 and 2.13
 * (spark-facts.md 3.5), so sparkprof calls them by reflection and iterates them as {@code
 * scala.collection.Iterable}.
 */
public class SparkListenerJobStart implements SparkListenerEvent {
  public int jobId() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long time() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public java.util.Properties properties() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
