package org.apache.spark.scheduler;

/**
 * Test stand-in: environmentDetails is a Map[String, Seq[(String, String)]]; here any Iterable of
 * Tuple2 (see scala.collection.FakeSeq).
 */
public class SparkListenerEnvironmentUpdate implements SparkListenerEvent {
  private final scala.collection
      .Iterable<scala.Tuple2<String, scala.collection.Iterable<scala.Tuple2<String, String>>>>
          environmentDetails;

  public SparkListenerEnvironmentUpdate(
      scala.collection
          .Iterable<scala.Tuple2<String, scala.collection.Iterable<scala.Tuple2<String, String>>>>
              environmentDetails) {
    this.environmentDetails = environmentDetails;
  }

  public scala.collection
      .Iterable<scala.Tuple2<String, scala.collection.Iterable<scala.Tuple2<String, String>>>>
      environmentDetails() {
    return environmentDetails;
  }
}
