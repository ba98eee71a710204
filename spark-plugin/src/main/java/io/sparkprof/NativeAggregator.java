package io.sparkprof;

/**
 * The JNI boundary to the driver-side aggregator in {@code libsparkprof_driver.so} (native side:
 * {@code jni/sparkprof_driver_jni.cc}). The executor side is {@link NativeAgent}, in the agent.
 *
 * <p>Only the driver loads this library ({@link SparkProfDriverPlugin} calls {@code System.load}
 * with {@code spark.sparkprof.libraryPath}, or the copy next to the {@code -agentpath} library),
 * so executors need nothing beyond libsparkprof.so.
 */
public final class NativeAggregator {
  /** {@link #ingest} results, as the native side numbers them. */
  public static final int NOT_RUNNING = -1;
  public static final int ACCEPTED = 0;
  private static final String[] OUTCOMES = {
    "accepted", "too_large", "invalid", "unsupported_version", "rate_limited", "queue_full"
  };

  private static volatile boolean available;

  private NativeAggregator() {}

  /** True when the library's natives can be called (probed again until they can). */
  public static boolean isAvailable() {
    if (!available) {
      try {
        status0();
        available = true;
      } catch (UnsatisfiedLinkError e) {
        return false;
      }
    }
    return true;
  }

  /**
   * Starts the aggregator of this JVM (a second call returns the first one's port). Returns the
   * bound Prometheus port, or -1 without an endpoint. Throws IllegalStateException when the port
   * cannot be bound or the output directory cannot be created. The aggregator's limits are the
   * keys the user set ({@link SparkProfConfig#driverSettings}); the native side owns their
   * defaults and ranges, and a value it refuses is logged, once, with the default it uses.
   */
  public static int start(SparkProfConfig config) {
    String[] settings = config.driverSettings();
    String problems = settingsProblems0(settings);
    if (problems != null && !problems.isEmpty()) Log.warn(problems);
    return start0(config.prometheusEndpoint(), config.outputDir(), settings);
  }

  /**
   * Hands one batch to the aggregator: copied into its bounded ingest queue (folded on a sparkprof
   * thread, not the caller's); never throws. Returns an outcome code ({@link #ACCEPTED} when
   * queued, "queue_full" when dropped for the queue's limits).
   */
  public static int ingest(byte[] batch) {
    return ingest0(batch);
  }

  /**
   * Hands the Python driver program's samples of one window ({@link PythonDriverProfiling}) to
   * the aggregator, as a batch of executor "driver" outside any task; never throws. Returns an
   * outcome code as {@link #ingest} (2, invalid, for a file or window refused).
   */
  public static int ingestPythonDriver(byte[] file, long startEpochNs, long endEpochNs) {
    return ingestPythonDriver0(file, startEpochNs, endEpochNs);
  }

  /**
   * Waits until every batch handed to {@link #ingest} before this call was folded, at most
   * {@code timeoutMs}; false when the time ran out or the aggregator is not running.
   */
  public static boolean drain(long timeoutMs) {
    return drain0(timeoutMs);
  }

  public static String outcomeName(int outcome) {
    return outcome >= 0 && outcome < OUTCOMES.length ? OUTCOMES[outcome] : "not_running";
  }

  /**
   * Files go to {@code <outputDir>/<applicationId>/} from now on (flame graphs and
   * {@code profile.sparkprof}), and {@code spark_application_info} carries the id and name. Throws IllegalStateException when the directory cannot be made.
   */
  public static void setApplication(String applicationId, String applicationName) {
    setApplication0(applicationId, applicationName);
  }

  /** Writes the stage attempt's flame graph; its path, or null when no sample of it arrived. */
  public static String writeStageFlameGraph(int stageId, int stageAttempt) {
    return writeStageFlameGraph0(stageId, stageAttempt);
  }

  /**
   * Feeds one listener event, as the UTF-8 bytes of the event-log line Spark writes for it (no
   * line break), to the live application model (metrics now, the report at the end). Never
   * throws. Returns {@link #ACCEPTED}, 1 when the line was refused (counted natively) or {@link
   * #NOT_RUNNING}.
   */
  public static int onEvent(byte[] utf8Line) {
    return onEvent0(utf8Line);
  }

  /**
   * End of the application: writes report.txt/.json/.md/.html (the same analysis as
   * {@code sparkprof analyze}) into the application's output directory, once; later calls return
   * the first call's paths. Returns the paths, one per line, or null when the aggregator is not
   * running. Throws IllegalStateException when the reports cannot be written.
   */
  public static String finishApplication() {
    return finishApplication0();
  }

  /**
   * The ended jobs among {@code jobIds} as the report's {@code jobs[]} entries, with their stage
   * attempts ({@code stages[]}, each naming its {@code job_id}) and the application's id, name
   * and start: figures of the live model so far. "" once the application finished (its report
   * has every job), null when the aggregator is not running.
   */
  public static String endedJobsJson(int[] jobIds) {
    return endedJobsJson0(jobIds);
  }

  /**
   * The sparkprof tab's data ({@code sparkprof.ui/v1}: the report of the model so far, the stage
   * attempts with samples, the agents' health), computed now; null when the aggregator is not
   * running. For {@link SparkProfUi}, only when a page asks.
   */
  public static String liveUiJson() {
    return liveUiJson0();
  }

  /** The stage attempt's flame graph page from what arrived so far; null without samples. */
  public static String stageFlameGraphHtml(int stageId, int stageAttempt) {
    return stageFlameGraphHtml0(stageId, stageAttempt);
  }

  /**
   * A new event-log analysis in the History Server ({@link HistoryEventLogAnalysis}; native:
   * driver-aggregator/event_log_analysis.h), needing no running aggregator. Its handle is used
   * from one thread at a time and ends with {@link #eventLogAnalysisReport} or {@link
   * #eventLogAnalysisClose}.
   */
  static long eventLogAnalysisStart() {
    return eventLogAnalysisStart0();
  }

  /** The next {@code length} decoded bytes of the log (lines split anywhere). */
  static void eventLogAnalysisAdd(long handle, byte[] bytes, int length) {
    eventLogAnalysisAdd0(handle, bytes, length);
  }

  /**
   * The report ({@code sparkprof.report/v1}) of the bytes added, the log named {@code name}; the
   * handle is released. Throws IllegalArgumentException when no line was a Spark event.
   */
  static String eventLogAnalysisReport(long handle, String name) {
    return eventLogAnalysisReport0(handle, name);
  }

  /** Releases an analysis without its report. */
  static void eventLogAnalysisClose(long handle) {
    eventLogAnalysisClose0(handle);
  }

  /**
   * The differential flame graph page of two stage attempts from what arrived so far ({@code
   * after}'s call tree coloured by the change from {@code before}'s); null when either has no
   * samples.
   */
  public static String stageDiffHtml(int beforeStage, int beforeAttempt, int afterStage,
      int afterAttempt) {
    return stageDiffHtml0(beforeStage, beforeAttempt, afterStage, afterAttempt);
  }

  /**
   * The same from the first {@code length} bytes of a saved profile (decompressed), named {@code
   * name} in messages. Throws IllegalArgumentException when they are not a profile or either
   * attempt has no samples.
   */
  static String profileStageDiffHtml(byte[] profile, int length, String name, int beforeStage,
      int beforeAttempt, int afterStage, int afterAttempt) {
    return profileStageDiffHtml0(profile, length, name, beforeStage, beforeAttempt, afterStage,
        afterAttempt);
  }

  /** One-line JSON: port, batches by outcome, stages, executors. */
  public static String status() {
    return status0();
  }

  public static void stop() {
    stop0();
  }

  /** {@code settings}: key, value, key, value... (driver-aggregator/driver_settings.h). */
  private static native int start0(String prometheusBindAddress, String outputDir,
      String[] settings);

  /** What start0 would refuse in {@code settings} and the default it would use; "" if nothing. */
  private static native String settingsProblems0(String[] settings);

  private static native void setApplication0(String applicationId, String applicationName);

  private static native int ingest0(byte[] batch);

  private static native int ingestPythonDriver0(byte[] file, long startEpochNs, long endEpochNs);

  private static native boolean drain0(long timeoutMs);

  private static native String writeStageFlameGraph0(int stageId, int stageAttempt);

  private static native int onEvent0(byte[] utf8Line);

  private static native String finishApplication0();

  private static native String endedJobsJson0(int[] jobIds);

  private static native String liveUiJson0();

  private static native String stageFlameGraphHtml0(int stageId, int stageAttempt);

  private static native long eventLogAnalysisStart0();

  private static native boolean eventLogAnalysisAdd0(long handle, byte[] bytes, int length);

  private static native String eventLogAnalysisReport0(long handle, String name);

  private static native void eventLogAnalysisClose0(long handle);

  private static native String stageDiffHtml0(int beforeStage, int beforeAttempt,
      int afterStage, int afterAttempt);

  private static native String profileStageDiffHtml0(byte[] profile, int length, String name,
      int beforeStage, int beforeAttempt, int afterStage, int afterAttempt);

  private static native String status0();

  private static native void stop0();
}
