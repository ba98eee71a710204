package org.apache.spark.scheduler;

/**
 * Test stand-in: the constructor values, plus the end state Spark fills in when the task finishes
 * (set*). taskLocality is Spark's Enumeration value; here an object whose toString() is the
 * locality name.
 */
public class TaskInfo {
  private final long taskId;
  private final int index;
  private final int attemptNumber;
  private final int partitionId;
  private final long launchTime;
  private final String executorId;
  private final String host;
  private final Object taskLocality;
  private final boolean speculative;
  private long gettingResultTime = 0;
  private long finishTime = 0;
  private boolean failed = false;
  private boolean killed = false;

  public TaskInfo(long taskId, int index, int attemptNumber, int partitionId, long launchTime,
      String executorId, String host, Object taskLocality, boolean speculative) {
    this.taskId = taskId;
    this.index = index;
    this.attemptNumber = attemptNumber;
    this.partitionId = partitionId;
    this.launchTime = launchTime;
    this.executorId = executorId;
    this.host = host;
    this.taskLocality = taskLocality;
    this.speculative = speculative;
  }

  public long taskId() {
    return taskId;
  }

  public int index() {
    return index;
  }

  public int attemptNumber() {
    return attemptNumber;
  }

  public int partitionId() {
    return partitionId;
  }

  public long launchTime() {
    return launchTime;
  }

  public String executorId() {
    return executorId;
  }

  public String host() {
    return host;
  }

  public Object taskLocality() {
    return taskLocality;
  }

  public boolean speculative() {
    return speculative;
  }

  public long gettingResultTime() {
    return gettingResultTime;
  }

  public TaskInfo setGettingResultTime(long value) {
    gettingResultTime = value;
    return this;
  }

  public long finishTime() {
    return finishTime;
  }

  public TaskInfo setFinishTime(long value) {
    finishTime = value;
    return this;
  }

  public boolean failed() {
    return failed;
  }

  public TaskInfo setFailed(boolean value) {
    failed = value;
    return this;
  }

  public boolean killed() {
    return killed;
  }

  public TaskInfo setKilled(boolean value) {
    killed = value;
    return this;
  }
}
