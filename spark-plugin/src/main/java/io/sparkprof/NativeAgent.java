package io.sparkprof;

/**
 * The JNI boundary to the sparkprof native agent ({@code libsparkprof.so}). The agent runs either
 * from {@code -agentpath} (HotSpot resolves these natives in agent libraries, so no
 * {@code System.load} is needed) or, in a JVM started without it, from {@link #startFromJar},
 * which loads the library out of the plugin jar and starts the agent in the running JVM. Until
 * then every method is a cheap no-op and {@link #isLoaded()} is false. No method throws on the
 * task path.
 *
 * <p>Tags are per thread: call {@link #setTaskTag} on the task thread when a task starts (from
 * {@code ExecutorPlugin.onTaskStart}) and {@link #clearTaskTag} on the same thread when it ends.
 */
public final class NativeAgent {
  /** {@link #startFromJar} result: this call started the agent. */
  public static final String STARTED = "started";
  /** {@link #startFromJar} result: an agent already ran (-agentpath or an earlier call). */
  public static final String ALREADY_RUNNING = "already running";

  // startInProcess0 results (native-agent/agent_entry.h, StartOutcome).
  private static final int OUTCOME_STARTED = 0;
  private static final int OUTCOME_ALREADY_RUNNING = 1;
  private static final int OUTCOME_ANOTHER_COPY_RUNNING = 2;

  /** Whether the natives resolve; probed again until they do (see {@link #startFromJar}). */
  private static volatile boolean linked = probe();
  /** Why the first {@link #startFromJar} that had to start the agent failed; null until then. */
  private static String startFailure;  // guarded by NativeAgent.class

  private NativeAgent() {}

  /** True when the native agent is loaded into this JVM and sampling. */
  public static boolean isLoaded() {
    if (!linked) linked = probe();
    return linked && isLoaded0();
  }

  /**
   * Starts the agent in this running JVM unless one already runs: extracts libsparkprof.so from
   * the plugin jar ({@link NativeLibraries}), loads it and starts sampling with
   * {@code agentOptions} (the {@code -agentpath} option syntax, e.g. {@code "interval=10ms"}; null
   * means the defaults). Never loads a second copy next to an {@code -agentpath} agent.
   *
   * <p>Returns {@link #STARTED}, {@link #ALREADY_RUNNING} (an {@code -agentpath} agent or an
   * earlier call: nothing was done), or else the reason profiling stays off, which has been logged
   * as one {@code sparkprof:} line (by the agent or here). After a failure every later call returns
   * the same reason without trying or logging again. Thread-safe; never throws.
   *
   * <p>Work done before this call is not profiled, and threads that already existed are sampled
   * from their first {@link #setTaskTag} on (docs/agent.md, "Started by the plugin").
   */
  public static synchronized String startFromJar(String agentOptions) {
    try {
      if (isLoaded()) return ALREADY_RUNNING;
      if (startFailure != null) return startFailure;
      String result = startOnce(agentOptions == null ? "" : agentOptions);
      if (!STARTED.equals(result) && !ALREADY_RUNNING.equals(result)) startFailure = result;
      return result;
    } catch (RuntimeException | LinkageError e) {
      startFailure = "profiling off: " + e;
      NativeLibraries.log(startFailure);
      return startFailure;
    }
  }

  /** {@link #startFromJar}'s result, without the memo. */
  private static String startOnce(String agentOptions) {
    // With -agentpath the natives are already linked (a failed -agentpath agent included): no
    // second copy is ever loaded; the call below then reports the agent's state.
    if (!linked) {
      String failure = linkFromJar();
      if (failure != null) {
        failure = "profiling off: " + failure;
        NativeLibraries.log(failure);
        return failure;
      }
    }
    switch (startInProcess0(agentOptions)) {
      case OUTCOME_STARTED:
        return STARTED;
      case OUTCOME_ALREADY_RUNNING:  // e.g. attached meanwhile through the attach API
        return ALREADY_RUNNING;
      case OUTCOME_ANOTHER_COPY_RUNNING:
        // The agent said so in one line; this class's natives reach the idle copy.
        return "profiling off: another copy of " + NativeLibraries.AGENT_LIBRARY + " (another "
            + "class loader's) owns the agent in this JVM; this plugin instance cannot reach it";
      default:
        return "profiling off: the agent did not start (its reason is the sparkprof: line "
            + "above)";
    }
  }

  /** Loads the library from the plugin jar and links the natives; null, or why not. */
  private static String linkFromJar() {
    String failure = NativeLibraries.loadAgentLibraryFromJar();
    if (failure != null) return failure;
    linked = probe();
    return linked ? null : NativeLibraries.AGENT_LIBRARY + " was loaded from the plugin jar, but "
        + "io.sparkprof.NativeAgent's natives do not resolve in it";
  }

  /** Attributes this thread's samples to the task until {@link #clearTaskTag()}. */
  public static void tagCurrentThread(int stageId, int stageAttempt, long taskAttemptId) {
    if (linked) setTaskTag(stageId, stageAttempt, taskAttemptId);
  }

  /** Marks this thread as running no task. */
  public static void untagCurrentThread() {
    if (linked) clearTaskTag();
  }

  /**
   * Names this JVM in every later batch (Spark's {@code PluginContext.executorID()}): every
   * executor gets the same {@code -agentpath} line. The agent option {@code executor=} wins when
   * given. Null is ignored; empty, over-long (above 256 bytes of UTF-8) or control-character ids
   * are refused with one agent log line. Never throws from the agent; an older library without
   * this native throws {@link UnsatisfiedLinkError}.
   */
  public static void nameExecutor(String executorId) {
    if (linked) setExecutorId(executorId);
  }

  private static volatile boolean sparkMemoryLinked = true;

  /**
   * Spark's execution and storage memory in use, for the agent's next batches (its MemoryUse).
   * An older agent library without this native is remembered and never called again; never
   * throws.
   */
  public static void setSparkMemory(long executionBytes, long storageBytes) {
    if (!linked || !sparkMemoryLinked) return;
    try {
      setSparkMemory0(executionBytes, storageBytes);
    } catch (UnsatisfiedLinkError e) {
      sparkMemoryLinked = false;
    }
  }

  /**
   * Hands rows of S3A statistics ({@link S3aStatistics}, {@code rowLongs} longs each) to the
   * agent for its next batch. Rows past the agent's bound are dropped and counted there.
   */
  public static void addS3aRows(long[] rows, int rowLongs) {
    if (linked) addS3aStatistics(rows, rowLongs);
  }

  /**
   * Hands one Python worker's profile file ({@link PythonWorkerProfiling}) to the agent for its
   * next batch. Returns 0 queued, 1 too large, 2 the agent's queue is full, 3 no agent running.
   */
  public static int addPythonProfile(byte[] file) {
    return linked ? addPythonProfile0(file) : 3;
  }

  /** The next flatbuffers {@code Batch} (schema/profile.fbs), or null when there is nothing new. */
  public static byte[] drainBatchOrNull() {
    return linked ? drainBatch() : null;
  }

  /** A small JSON object with the agent's state and health counters. */
  public static String statusJson() {
    return linked ? status() : "{\"running\":false}";
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

  /** A StartOutcome number (native-agent/agent_entry.h); never throws. */
  private static native int startInProcess0(String options);

  public static native void setTaskTag(int stageId, int stageAttempt, long taskAttemptId);

  public static native void clearTaskTag();

  public static native byte[] drainBatch();

  public static native void addS3aStatistics(long[] rows, int rowLongs);

  public static native void setExecutorId(String id);

  private static native int addPythonProfile0(byte[] file);

  private static native void setSparkMemory0(long executionBytes, long storageBytes);

  public static native String status();
}
