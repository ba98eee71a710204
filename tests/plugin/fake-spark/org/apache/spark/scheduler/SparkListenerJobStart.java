package org.apache.spark.scheduler;

/**
 * Test stand-in: stageInfos is a Seq[StageInfo] (use scala.collection.FakeSeq); stageIds is derived
 * from it, as in Spark.
 */
public class SparkListenerJobStart implements SparkListenerEvent {
  private final int jobId;
  private final long time;
  private final scala.collection.Iterable<StageInfo> stageInfos;
  private final java.util.Properties properties;

  public SparkListenerJobStart(int jobId, long time,
      scala.collection.Iterable<StageInfo> stageInfos, java.util.Properties properties) {
    this.jobId = jobId;
    this.time = time;
    this.stageInfos = stageInfos;
    this.properties = properties;
  }

  public int jobId() {
    return jobId;
  }

  public long time() {
    return time;
  }

  public scala.collection.Iterable<StageInfo> stageInfos() {
    return stageInfos;
  }

  public java.util.Properties properties() {
    return properties;
  }

  public scala.collection.Iterable<Object> stageIds() {
    java.util.List<Object> ids = new java.util.ArrayList<>();
    scala.collection.Iterator<StageInfo> it = stageInfos.iterator();
    while (it.hasNext()) ids.add(it.next().stageId());
    return new scala.collection.FakeSeq<>(ids);
  }
}
