package org.apache.spark.executor;

/** Test stand-in: settable values (CPU times in ns, other times in ms). */
public class TaskMetrics {
  private long executorDeserializeTime = 0;
  private long executorDeserializeCpuTime = 0;
  private long executorRunTime = 0;
  private long executorCpuTime = 0;
  private long resultSize = 0;
  private long jvmGCTime = 0;
  private long resultSerializationTime = 0;
  private long memoryBytesSpilled = 0;
  private long diskBytesSpilled = 0;
  private long peakExecutionMemory = 0;
  private InputMetrics inputMetrics = new InputMetrics();
  private OutputMetrics outputMetrics = new OutputMetrics();
  private ShuffleReadMetrics shuffleReadMetrics = new ShuffleReadMetrics();
  private ShuffleWriteMetrics shuffleWriteMetrics = new ShuffleWriteMetrics();

  public TaskMetrics() {
  }

  public long executorDeserializeTime() {
    return executorDeserializeTime;
  }

  public TaskMetrics setExecutorDeserializeTime(long value) {
    executorDeserializeTime = value;
    return this;
  }

  public long executorDeserializeCpuTime() {
    return executorDeserializeCpuTime;
  }

  public TaskMetrics setExecutorDeserializeCpuTime(long value) {
    executorDeserializeCpuTime = value;
    return this;
  }

  public long executorRunTime() {
    return executorRunTime;
  }

  public TaskMetrics setExecutorRunTime(long value) {
    executorRunTime = value;
    return this;
  }

  public long executorCpuTime() {
    return executorCpuTime;
  }

  public TaskMetrics setExecutorCpuTime(long value) {
    executorCpuTime = value;
    return this;
  }

  public long resultSize() {
    return resultSize;
  }

  public TaskMetrics setResultSize(long value) {
    resultSize = value;
    return this;
  }

  public long jvmGCTime() {
    return jvmGCTime;
  }

  public TaskMetrics setJvmGCTime(long value) {
    jvmGCTime = value;
    return this;
  }

  public long resultSerializationTime() {
    return resultSerializationTime;
  }

  public TaskMetrics setResultSerializationTime(long value) {
    resultSerializationTime = value;
    return this;
  }

  public long memoryBytesSpilled() {
    return memoryBytesSpilled;
  }

  public TaskMetrics setMemoryBytesSpilled(long value) {
    memoryBytesSpilled = value;
    return this;
  }

  public long diskBytesSpilled() {
    return diskBytesSpilled;
  }

  public TaskMetrics setDiskBytesSpilled(long value) {
    diskBytesSpilled = value;
    return this;
  }

  public long peakExecutionMemory() {
    return peakExecutionMemory;
  }

  public TaskMetrics setPeakExecutionMemory(long value) {
    peakExecutionMemory = value;
    return this;
  }

  public InputMetrics inputMetrics() {
    return inputMetrics;
  }

  public TaskMetrics setInputMetrics(InputMetrics value) {
    inputMetrics = value;
    return this;
  }

  public OutputMetrics outputMetrics() {
    return outputMetrics;
  }

  public TaskMetrics setOutputMetrics(OutputMetrics value) {
    outputMetrics = value;
    return this;
  }

  public ShuffleReadMetrics shuffleReadMetrics() {
    return shuffleReadMetrics;
  }

  public TaskMetrics setShuffleReadMetrics(ShuffleReadMetrics value) {
    shuffleReadMetrics = value;
    return this;
  }

  public ShuffleWriteMetrics shuffleWriteMetrics() {
    return shuffleWriteMetrics;
  }

  public TaskMetrics setShuffleWriteMetrics(ShuffleWriteMetrics value) {
    shuffleWriteMetrics = value;
    return this;
  }
}
