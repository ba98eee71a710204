package io.sparkprof;

/**
 * The JNI boundary to the sparkprof native agent ({@code libsparkprof.so}, loaded with
 * {@code -agentpath}). HotSpot resolves these natives in agent libraries, so no
 * {@code System.load} is needed when the agent is present; without it every method is a cheap
 * no-op and {@link #isLoaded()} is false. No method throws on the task path.
 *
 * <p>Tags are per thread: call {@link #setTaskTag} on the task thread when a task starts (from
 * {@code ExecutorPlugin.onTaskStart}) and {@link #clearTaskTag} on the same thread when it ends.
 */
public final class NativeAgent {
  private static final boolean LOADED = probe();

  private NativeAgent() {}

  /** True when the native agent is loaded into this JVM and sampling. */
  public static boolean isLoaded() {
    return LOADED && isLoaded0();
  }

  /** Attributes this thread's samples to the task until {@link #clearTaskTag()}. */
  public static void tagCurrentThread(int stageId, int stageAttempt, long taskAttemptId) {
    if (LOADED) setTaskTag(stageId, stageAttempt, taskAttemptId);
  }

  /** Marks this thread as running no task. */
  public static void untagCurrentThread() {
    if (LOADED) clearTaskTag();
  }

  /**
   * Names this JVM in every later batch (Spark's {@code PluginContext.executorID()}): every
   * executor gets the same {@code -agentpath} line. The agent option {@code executor=} wins when
   * given. Null is ignored; empty, over-long (above 256 bytes of UTF-8) or control-character ids
   * are refused with one agent log line. Never throws from the agent; an older library without
   * this native throws {@link UnsatisfiedLinkError}.
   */
  public static void nameExecutor(String executorId) {
    if (LOADED) setExecutorId(executorId);
  }

  /** The next flatbuffers {@code Batch} (schema/profile.fbs), or null when there is nothing new. */
  public static byte[] drainBatchOrNull() {
    return LOADED ? drainBatch() : null;
  }

  /** A small JSON object with the agent's state and health counters. */
  public static String statusJson() {
    return LOADED ? status() : "{\"running\":false}";
  }

  private static boolean probe() {
    try {
      isLoaded0();
      return true;
    } catch (UnsatisfiedLinkError e) {
      return false;
    }
  }

  // Natives (jni/sparkprof_jni.cc).
  private static native boolean isLoaded0();

  public static native void setTaskTag(int stageId, int stageAttempt, long taskAttemptId);

  public static native void clearTaskTag();

  public static native byte[] drainBatch();

  public static native void setExecutorId(String id);

  public static native String status();
}
