package org.apache.spark.executor;

/**
 * Compile-only declaration of the TaskMetrics accessors sparkprof reads (identical in 3.5 and 4.0;
 * CPU times in ns, the others in ms or bytes).
 */
public class TaskMetrics {
  public long executorDeserializeTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long executorDeserializeCpuTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long executorRunTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long executorCpuTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long resultSize() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long jvmGCTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long resultSerializationTime() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long memoryBytesSpilled() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long diskBytesSpilled() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public long peakExecutionMemory() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public InputMetrics inputMetrics() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public OutputMetrics outputMetrics() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public ShuffleReadMetrics shuffleReadMetrics() {
    throw new UnsupportedOperationException("compile-only declaration");
  }

  public ShuffleWriteMetrics shuffleWriteMetrics() {
    throw new UnsupportedOperationException("compile-only declaration");
  }
}
