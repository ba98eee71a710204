package io.sparkprof;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.network.util.JavaUtils;

/**
 * Every {@code spark.sparkprof.*} key, typed, with its default. This class is the one place the
 * keys are documented. A value that does not parse is reported once (by the caller, through
 * {@link #problems()}) and its default is used: a typo in a profiler key never stops a job.
 *
 * <p>Durations and sizes are read with Spark's own parser (as {@code SparkConf.getTimeAsMs} and
 * {@code getSizeAsBytes} read them): {@code 1min}, {@code 30s}, {@code 2h}; {@code 16m},
 * {@code 512k}, {@code 1g}, {@code 1gb}. A bare number keeps the unit each key names.
 *
 * <p>The driver aggregator's limits ({@link #DRIVER_SETTINGS}) are not interpreted here: their
 * defaults, ranges and checks are the native library's ({@code
 * driver-aggregator/driver_settings.h}); {@link #driverSettings()} passes on what the user set.
 */
public final class SparkProfConfig {
  /** Boolean, default {@code true}. {@code false} turns both plugin sides into no-ops. */
  public static final String ENABLED = "spark.sparkprof.enabled";

  /**
   * Duration, default {@code 5s}: how often each executor drains its agent and sends one batch to
   * the driver. Spark's units ({@code ms}, {@code s}, {@code m} or {@code min}, {@code h}); a bare
   * number is milliseconds. Clamped to 100ms..10m.
   */
  public static final String FLUSH_INTERVAL = "spark.sparkprof.flushInterval";

  /**
   * Integer, default {@code 9405}: driver port of the Prometheus {@code /metrics} endpoint.
   * {@code 0} picks a free port (logged at start); {@code -1} serves no endpoint, and so does a
   * value that is not a port (with one logged line).
   */
  public static final String PROMETHEUS_PORT = "spark.sparkprof.prometheus.port";

  /**
   * String, default {@code 127.0.0.1}: address the endpoint binds to. Use {@code 0.0.0.0} when
   * Prometheus scrapes from another host or pod.
   */
  public static final String PROMETHEUS_BIND_ADDRESS = "spark.sparkprof.prometheus.bindAddress";

  /**
   * Path, default {@code /tmp/sparkprof-<user.name>} (one per user: a shared directory would let
   * other users of the host read or plant outputs; not java.io.tmpdir, which YARN points into the
   * container's directory, deleted when the application ends): driver directory for the
   * outputs, one subdirectory per application id: {@code stage-<id>-attempt-<n>.html} flame graphs
   * and {@code profile.sparkprof}. The driver refuses a directory another user could replace.
   */
  public static final String OUTPUT_DIR = "spark.sparkprof.outputDir";

  /**
   * Size (a bare number is bytes), driver aggregator's default: largest batch the driver accepts;
   * larger ones are counted and dropped.
   */
  public static final String MAX_BATCH_BYTES = "spark.sparkprof.maxBatchBytes";

  /**
   * Size (a bare number is bytes), driver aggregator's default: cap of the saved profile {@code
   * <outputDir>/<appId>/profile.sparkprof} (every accepted batch, for {@code sparkprof
   * flamegraph}); {@code 0} writes none.
   */
  public static final String MAX_PROFILE_FILE_BYTES = "spark.sparkprof.maxProfileFileBytes";

  /** Integer, driver aggregator's default: batches accepted per second over all executors. */
  public static final String MAX_BATCHES_PER_SECOND = "spark.sparkprof.maxBatchesPerSecond";

  /** Integer, driver aggregator's default: call-tree nodes kept per stage attempt. */
  public static final String MAX_NODES_PER_STAGE = "spark.sparkprof.maxNodesPerStage";

  /** Integer, driver aggregator's default: stage attempts whose profiles the driver keeps. */
  public static final String MAX_STAGES = "spark.sparkprof.maxStages";

  /**
   * Integer, driver aggregator's default: call-tree nodes kept over all stage attempts (about 85
   * bytes each of driver native memory); past it the least recently fed stages are dropped.
   */
  public static final String MAX_TOTAL_NODES = "spark.sparkprof.maxTotalNodes";

  /**
   * Integer, driver aggregator's default: executor batches waiting between Spark's plugin
   * dispatcher thread and the driver's ingest thread; past it a batch is dropped and counted as
   * {@code sparkprof_driver_batches_total{outcome="queue_full"}}.
   */
  public static final String INGEST_QUEUE_MAX_BATCHES = "spark.sparkprof.ingestQueue.maxBatches";

  /**
   * Size (a bare number is bytes), driver aggregator's default: bytes of the batches waiting in
   * the driver's ingest queue (native memory); past it a batch is dropped ({@code queue_full}).
   */
  public static final String INGEST_QUEUE_MAX_BYTES = "spark.sparkprof.ingestQueue.maxBytes";

  /**
   * Path, default unset: the driver-side library {@code libsparkprof_driver.so} (aggregator,
   * metrics, reports). Unset, the driver plugin loads it from the directory of the {@code
   * -agentpath} library; set it when the driver runs without the agent or keeps it elsewhere.
   */
  public static final String LIBRARY_PATH = "spark.sparkprof.libraryPath";

  /**
   * Duration (a bare number is milliseconds), driver aggregator's default: the live metrics that
   * need the whole application model (phase breakdown, resource wait, spill, skew, task duration
   * histograms) are recomputed at a scrape when at least this long passed since the last time;
   * task and executor counts are current at every scrape.
   */
  public static final String METRICS_REFRESH_INTERVAL = "spark.sparkprof.metricsRefreshInterval";

  /**
   * Path, default unset: the driver also appends every line the live model receives (the
   * listener bridge's event-log lines, UTF-8, one per line) to this file. For debugging and for
   * the test that the live feed equals Spark's own event log.
   */
  public static final String LIVE_EVENT_LOG = "spark.sparkprof.liveEventLog";

  /**
   * String, default empty: the agent's options ({@code key=value,...}, the syntax after
   * {@code -agentpath:...=}) when the plugin starts the agent itself because the JVM was started
   * without {@code -agentpath} (plugin-only install). Ignored when {@code -agentpath} is given.
   */
  public static final String AGENT_OPTIONS = "spark.sparkprof.agentOptions";

  /**
   * Duration, default {@code 5s}: at the application's end the driver waits at most this long
   * for every executor's last batch (sent when Spark stops the executor) before it writes the
   * report and the remaining flame graphs. Clamped to 0..10m; 0 does not wait.
   */
  public static final String FINAL_BATCH_TIMEOUT = "spark.sparkprof.finalBatchTimeout";

  /**
   * Boolean, default {@code true}: executors measure each task's Hadoop S3A work (bytes, S3
   * requests, multipart uploads, retries; per-thread statistics read by reflection at task start
   * and end) and the whole JVM's, and send them with the profile batches; the driver
   * exports them ({@code spark_s3a_*}, docs/metrics.md) and the report's write findings cite them.
   * Nothing is measured in a JVM without Hadoop's FileSystem classes.
   */
  public static final String S3A_METRICS_ENABLED = "spark.sparkprof.s3aMetrics.enabled";

  /**
   * Boolean, default {@code true}: executors sample their PySpark workers per task (the plugin
   * sets {@code spark.python.daemon.module} to sparkprof's daemon, which is Spark's own with a
   * sampler in each forked worker; docs/agent.md, "Python workers"). Needs the agent, the
   * default daemon module and Spark's daemon ({@code spark.python.use.daemon}); off in local mode.
   */
  public static final String PYTHON_ENABLED = "spark.sparkprof.python.enabled";

  /**
   * Boolean, default {@code true}: the driver samples its own JVM -- the application's main
   * thread, query planning, file listing on the driver -- outside any task, so the report can say
   * what the driver did while no task ran (the driver-bound finding). It drains the agent its JVM
   * was started with ({@code -agentpath} in {@code spark.driver.extraJavaOptions}) or, in a
   * plugin-only install, starts the agent from the jar. In local mode the executor side, which
   * shares the driver's JVM, already does this.
   */
  public static final String DRIVER_ENABLED = "spark.sparkprof.driver.enabled";

  /**
   * Duration, default {@code 10ms}: the Python workers' sampling interval (1ms..1s).
   */
  public static final String PYTHON_INTERVAL = "spark.sparkprof.python.interval";

  /**
   * Boolean, default {@code false}: at the application's end the driver exports its trace over
   * OTLP: the application span, its phases, jobs and stages, with the report's figures
   * (docs/recipes/observability/observability-stack.md). The standard {@code OTEL_*} environment
   * variables and {@code otel.*} system properties apply; the keys below override them when set.
   */
  public static final String OTEL_ENABLED = "spark.sparkprof.otel.enabled";

  /**
   * Boolean, default {@code true}: the driver adds a "sparkprof" tab to Spark's web UI (findings
   * so far, phases, stages with their live flame graphs, executors; docs/spark-ui.md). Nothing is
   * added when Spark's UI is off ({@code spark.ui.enabled=false}); the tab computes its figures
   * only when a page asks for them.
   */
  public static final String UI_ENABLED = "spark.sparkprof.ui.enabled";

  /**
   * Path, read by the History Server (its own {@code spark.history.*} configuration, e.g. {@code
   * SPARK_HISTORY_OPTS=-Dspark.sparkprof.history.outputDir=...}), default unset: where the
   * History Server's sparkprof tab looks for {@code <dir>/<appId>/report.json} and the stage
   * flame graphs when the application's own {@code spark.sparkprof.outputDir} (recorded in its
   * event log's environment) is not readable from the History Server's host.
   */
  public static final String HISTORY_OUTPUT_DIR = "spark.sparkprof.history.outputDir";

  /**
   * Size, read by the History Server, default {@code 2g}: the largest event log (its decoded
   * JSON, all parts) the History Server's sparkprof tab analyses for an application without a
   * stored profile. A larger log is not analysed there (the tab says so, with the command that
   * analyses it); a log whose files alone are larger is not even opened. {@code 0}: no
   * event-log analysis in the History Server. See docs/limits.md.
   */
  public static final String HISTORY_MAX_EVENT_LOG_BYTES =
      "spark.sparkprof.history.maxEventLogBytes";

  /**
   * Duration, read by the History Server, default {@code 2min}: longest one event-log analysis
   * of the History Server's sparkprof tab runs; past it the analysis stops and the tab says so.
   * Analyses run one at a time on one thread, never on a request's thread.
   */
  public static final String HISTORY_ANALYSIS_TIMEOUT = "spark.sparkprof.history.analysisTimeout";

  /**
   * {@code auto}, {@code true} or {@code false}, default {@code auto}: whether the driver also
   * stores the application's outputs (report.json/.txt/.md/.html, the stage flame graphs and the
   * profile, zstd-compressed as {@code profile.sparkprof.zstd}) beside Spark's event log, in
   * {@code <spark.eventLog.dir>/<appId>[_<attemptId>].sparkprof/}, through Hadoop's FileSystem
   * (any scheme the driver's Hadoop configuration serves: file, hdfs, s3a, gs, abfs...), once, at
   * the application's end. {@code auto}: when {@code spark.eventLog.enabled} is true and {@code
   * spark.sparkprof.outputDir} is not set (an explicit output directory says where outputs go);
   * {@code true}: whenever the event log is on; {@code false}: never. The local directory stays
   * the working copy either way. See {@link EventLogDirOutputs} and docs/spark-ui.md.
   */
  public static final String BESIDE_EVENT_LOG = "spark.sparkprof.besideEventLog";

  /**
   * Size, default {@code 512m}: most bytes one application stores beside its event log. Files
   * are taken in order (report.json, report.html, report.md, report.txt, the compressed profile,
   * then the stage flame graphs by stage) while they fit; the rest stay local, named in one log
   * line. {@code 0} stores nothing.
   */
  public static final String BESIDE_EVENT_LOG_MAX_BYTES = "spark.sparkprof.besideEventLog.maxBytes";

  /**
   * Duration, default {@code 2min}: longest the driver's shutdown waits for the copy beside the
   * event log (an object store that does not answer costs at most this, and one log line).
   */
  public static final String BESIDE_EVENT_LOG_TIMEOUT = "spark.sparkprof.besideEventLog.timeout";

  /**
   * URL, default unset ({@code OTEL_EXPORTER_OTLP_ENDPOINT}, else {@code http://localhost:4317}
   * for gRPC, {@code http://localhost:4318} for HTTP): the collector's OTLP endpoint. For HTTP,
   * {@code /v1/traces} is appended unless the URL ends with it.
   */
  public static final String OTEL_ENDPOINT = "spark.sparkprof.otel.endpoint";

  /** {@code grpc} or {@code http} (OTLP/HTTP protobuf), default unset (OTEL_*, else grpc). */
  public static final String OTEL_PROTOCOL = "spark.sparkprof.otel.protocol";

  /**
   * Number 0..1, default unset (OTEL_TRACES_SAMPLER*, else 1): share of application traces kept
   * (parent-based: a sampled or dropped parent decides for its children).
   */
  public static final String OTEL_SAMPLING_RATIO = "spark.sparkprof.otel.samplingRatio";

  /** String, default unset (OTEL_SERVICE_NAME, else {@code spark}): {@code service.name}. */
  public static final String OTEL_SERVICE_NAME = "spark.sparkprof.otel.serviceName";

  /**
   * {@code otlp}, {@code logging} (spans printed to the driver log) or {@code none}, default unset
   * (OTEL_TRACES_EXPORTER, else otlp).
   */
  public static final String OTEL_EXPORTER_TYPE = "spark.sparkprof.otel.exporterType";

  /**
   * W3C {@code traceparent}, default unset (the driver's {@code TRACEPARENT} environment variable,
   * as Airflow's OpenTelemetry integration sets it): the application span's parent.
   */
  public static final String OTEL_TRACEPARENT = "spark.sparkprof.otel.traceparent";

  /**
   * Integer, default {@code 10000}: most spans one application exports (the export queue's
   * size); past it stage spans are left out and the application span says how many.
   */
  public static final String OTEL_MAX_SPANS = "spark.sparkprof.otel.maxSpans";

  /**
   * Duration, default {@code 10s}: how long the driver's shutdown waits for the export; a
   * collector that does not answer costs at most this, once, and one log line.
   */
  public static final String OTEL_EXPORT_TIMEOUT = "spark.sparkprof.otel.exportTimeout";

  /**
   * Duration, default {@code 5s}: how often the driver exports the spans of the jobs that ended
   * since the last time (each job with its stages, under the application's trace, whose own span
   * follows at the end), so a long-running driver — a Spark Connect server, a notebook, a
   * streaming query — traces its jobs while it runs. {@code 0}: every span at the end.
   */
  public static final String OTEL_JOB_SPANS_INTERVAL = "spark.sparkprof.otel.jobSpansInterval";

  /**
   * The driver aggregator's keys (driver-aggregator/driver_settings.cc owns their defaults and
   * ranges), each with how its value is passed on: sizes as bytes, durations as milliseconds.
   */
  static final String[][] DRIVER_SETTINGS = {
    {MAX_BATCH_BYTES, "bytes"},
    {MAX_BATCHES_PER_SECOND, "count"},
    {MAX_NODES_PER_STAGE, "count"},
    {MAX_STAGES, "count"},
    {MAX_TOTAL_NODES, "count"},
    {MAX_PROFILE_FILE_BYTES, "bytes"},
    {METRICS_REFRESH_INTERVAL, "ms"},
    {INGEST_QUEUE_MAX_BATCHES, "count"},
    {INGEST_QUEUE_MAX_BYTES, "bytes"},
  };

  /** Reads a key; null when unset. */
  public interface Lookup {
    String get(String key);
  }

  private final StringBuilder problems = new StringBuilder();
  private final boolean enabled;
  private final long flushIntervalMs;
  private final int prometheusPort;
  private final String prometheusBindAddress;
  private final String outputDir;
  private final String libraryPath;
  private final String[] driverSettings;
  private final String liveEventLog;
  private final String agentOptions;
  private final long finalBatchTimeoutMs;
  private final boolean s3aMetricsEnabled;
  private final boolean pythonEnabled;
  private final boolean driverEnabled;
  private final long pythonIntervalMs;
  private final boolean otelEnabled;
  private final boolean uiEnabled;
  private final String besideEventLog;
  private final long besideEventLogMaxBytes;
  private final long besideEventLogTimeoutMs;
  private final long historyMaxEventLogBytes;
  private final long historyAnalysisTimeoutMs;
  private final boolean outputDirSet;
  private final String otelEndpoint;
  private final String otelProtocol;
  private final double otelSamplingRatio;
  private final String otelServiceName;
  private final String otelExporterType;
  private final String otelTraceparent;
  private final int otelMaxSpans;
  private final long otelExportTimeoutMs;
  private final long otelJobSpansIntervalMs;

  private SparkProfConfig(Lookup lookup) {
    enabled = parseBoolean(lookup, ENABLED, true);
    flushIntervalMs = clamp(parseDurationMs(lookup, FLUSH_INTERVAL, 5000), 100, 600_000);
    // A port that is not one serves nothing: the default port instead would answer where the
    // user did not ask (or collide with what listens there); the problem is logged.
    prometheusPort = (int) parseLong(lookup, PROMETHEUS_PORT, 9405, -1, 65535, -1,
        "-1 (no /metrics endpoint)");
    prometheusBindAddress = parseString(lookup, PROMETHEUS_BIND_ADDRESS, "127.0.0.1");
    outputDirSet = trimmed(lookup, OUTPUT_DIR) != null;
    outputDir = parseString(lookup, OUTPUT_DIR, defaultOutputDir());
    String beside = parseChoice(lookup, BESIDE_EVENT_LOG, "auto", "true", "false");
    besideEventLog = beside.isEmpty() ? "auto" : beside;
    besideEventLogMaxBytes = parseSizeBytes(lookup, BESIDE_EVENT_LOG_MAX_BYTES, 512L << 20);
    besideEventLogTimeoutMs =
        clamp(parseDurationMs(lookup, BESIDE_EVENT_LOG_TIMEOUT, 120_000), 1000, 3_600_000);
    historyMaxEventLogBytes = parseSizeBytes(lookup, HISTORY_MAX_EVENT_LOG_BYTES, 2L << 30);
    historyAnalysisTimeoutMs =
        clamp(parseDurationMs(lookup, HISTORY_ANALYSIS_TIMEOUT, 120_000), 1000, 3_600_000);
    driverSettings = readDriverSettings(lookup);
    libraryPath = parseString(lookup, LIBRARY_PATH, "");
    liveEventLog = parseString(lookup, LIVE_EVENT_LOG, "");
    agentOptions = parseString(lookup, AGENT_OPTIONS, "");
    finalBatchTimeoutMs = clamp(parseDurationMs(lookup, FINAL_BATCH_TIMEOUT, 5000), 0, 600_000);
    s3aMetricsEnabled = parseBoolean(lookup, S3A_METRICS_ENABLED, true);
    pythonEnabled = parseBoolean(lookup, PYTHON_ENABLED, true);
    driverEnabled = parseBoolean(lookup, DRIVER_ENABLED, true);
    pythonIntervalMs = clamp(parseDurationMs(lookup, PYTHON_INTERVAL, 10), 1, 1000);
    otelEnabled = parseBoolean(lookup, OTEL_ENABLED, false);
    uiEnabled = parseBoolean(lookup, UI_ENABLED, true);
    otelEndpoint = parseString(lookup, OTEL_ENDPOINT, "");
    otelProtocol = parseChoice(lookup, OTEL_PROTOCOL, "grpc", "http");
    otelSamplingRatio = parseRatio(lookup, OTEL_SAMPLING_RATIO);
    otelServiceName = parseString(lookup, OTEL_SERVICE_NAME, "");
    otelExporterType = parseChoice(lookup, OTEL_EXPORTER_TYPE, "otlp", "logging", "none");
    otelTraceparent = parseString(lookup, OTEL_TRACEPARENT, "");
    otelMaxSpans = (int) parseLong(lookup, OTEL_MAX_SPANS, 10_000, 1, 1_000_000);
    otelExportTimeoutMs =
        clamp(parseDurationMs(lookup, OTEL_EXPORT_TIMEOUT, 10_000), 100, 600_000);
    long jobSpansMs = parseDurationMs(lookup, OTEL_JOB_SPANS_INTERVAL, 5000);
    otelJobSpansIntervalMs = jobSpansMs <= 0 ? 0 : clamp(jobSpansMs, 100, 3_600_000);
  }

  public static SparkProfConfig from(Lookup lookup) {
    return new SparkProfConfig(lookup);
  }

  public static SparkProfConfig from(final SparkConf conf) {
    return new SparkProfConfig(key -> conf == null ? null : conf.get(key, null));
  }

  public boolean enabled() { return enabled; }

  public long flushIntervalMs() { return flushIntervalMs; }

  public int prometheusPort() { return prometheusPort; }

  public String prometheusBindAddress() { return prometheusBindAddress; }

  /** "HOST:PORT" for the native exposer, or "" when the endpoint is off. */
  public String prometheusEndpoint() {
    return prometheusPort < 0 ? "" : prometheusBindAddress + ":" + prometheusPort;
  }

  public String outputDir() { return outputDir; }

  /** Whether {@link #OUTPUT_DIR} was set (not the default). */
  public boolean outputDirSet() { return outputDirSet; }

  /** "auto", "true" or "false". */
  public String besideEventLog() { return besideEventLog; }

  public long besideEventLogMaxBytes() { return besideEventLogMaxBytes; }

  public long besideEventLogTimeoutMs() { return besideEventLogTimeoutMs; }

  public long historyMaxEventLogBytes() { return historyMaxEventLogBytes; }

  public long historyAnalysisTimeoutMs() { return historyAnalysisTimeoutMs; }

  /**
   * Whether the outputs go beside the event log too, given whether Spark writes one: {@link
   * #BESIDE_EVENT_LOG}'s rule.
   */
  public boolean storesBesideEventLog(boolean eventLogEnabled) {
    if (!eventLogEnabled || besideEventLog.equals("false")) return false;
    return besideEventLog.equals("true") || !outputDirSet;
  }

  /** {@code /tmp/sparkprof-<user.name>}, the user name reduced to [A-Za-z0-9._-]. */
  static String defaultOutputDir() {
    String user = System.getProperty("user.name", "");
    String safe = user.replaceAll("[^A-Za-z0-9._-]", "_");
    if (safe.isEmpty() || safe.equals(".") || safe.equals("..")) safe = "unknown";
    return "/tmp/sparkprof-" + safe;
  }

  /**
   * The {@link #DRIVER_SETTINGS} the user set, as key, value, key, value...: sizes in bytes and
   * durations in milliseconds, read with Spark's parser; a value it refuses is passed as given,
   * for the native side to refuse with the default it uses. The native side checks every range.
   */
  public String[] driverSettings() { return driverSettings.clone(); }

  public String libraryPath() { return libraryPath; }

  public long finalBatchTimeoutMs() { return finalBatchTimeoutMs; }

  public boolean s3aMetricsEnabled() { return s3aMetricsEnabled; }

  public boolean pythonEnabled() { return pythonEnabled; }

  public boolean driverEnabled() { return driverEnabled; }

  public long pythonIntervalMs() { return pythonIntervalMs; }

  /** Options for an agent the plugin starts; "" for the defaults. */
  public String agentOptions() { return agentOptions; }

  /** The live feed's copy, or "" for none. */
  public String liveEventLog() { return liveEventLog; }

  public boolean otelEnabled() { return otelEnabled; }

  public boolean uiEnabled() { return uiEnabled; }

  /** The OTLP endpoint, "" when unset (OTEL_* or the SDK's default then). */
  public String otelEndpoint() { return otelEndpoint; }

  /** "grpc", "http", or "" when unset. */
  public String otelProtocol() { return otelProtocol; }

  /** 0..1, or NaN when unset. */
  public double otelSamplingRatio() { return otelSamplingRatio; }

  public String otelServiceName() { return otelServiceName; }

  /** "otlp", "logging", "none", or "" when unset. */
  public String otelExporterType() { return otelExporterType; }

  /** The conf's traceparent, "" when unset (the caller falls back to TRACEPARENT). */
  public String otelTraceparent() { return otelTraceparent; }

  public int otelMaxSpans() { return otelMaxSpans; }

  public long otelExportTimeoutMs() { return otelExportTimeoutMs; }

  /** 0: job spans at the application's end only. */
  public long otelJobSpansIntervalMs() { return otelJobSpansIntervalMs; }

  /** Keys whose values did not parse, with the default used instead; empty when all were fine. */
  public String problems() { return problems.toString(); }

  private void problem(String key, String value, Object used) {
    if (problems.length() > 0) problems.append("; ");
    problems.append(key).append('=').append(value).append(" is not valid, using ").append(used);
  }

  private static String trimmed(Lookup lookup, String key) {
    String value = lookup.get(key);
    if (value == null) return null;
    value = value.trim();
    return value.isEmpty() ? null : value;
  }

  private String parseString(Lookup lookup, String key, String fallback) {
    String value = trimmed(lookup, key);
    return value == null ? fallback : value;
  }

  /** One of the choices (lower-cased), or "" when unset or not one of them (reported). */
  private String parseChoice(Lookup lookup, String key, String... choices) {
    String value = trimmed(lookup, key);
    if (value == null) return "";
    for (String choice : choices) {
      if (choice.equalsIgnoreCase(value)) return choice;
    }
    problem(key, value, "the default");
    return "";
  }

  /** A number in 0..1, or NaN when unset or invalid (reported). */
  private double parseRatio(Lookup lookup, String key) {
    String value = trimmed(lookup, key);
    if (value == null) return Double.NaN;
    try {
      double parsed = Double.parseDouble(value);
      if (parsed >= 0 && parsed <= 1) return parsed;
    } catch (NumberFormatException e) {
      // reported below
    }
    problem(key, value, "the default");
    return Double.NaN;
  }

  private boolean parseBoolean(Lookup lookup, String key, boolean fallback) {
    String value = trimmed(lookup, key);
    if (value == null) return fallback;
    if (value.equalsIgnoreCase("true")) return true;
    if (value.equalsIgnoreCase("false")) return false;
    problem(key, value, fallback);
    return fallback;
  }

  private long parseLong(Lookup lookup, String key, long fallback, long min, long max) {
    return parseLong(lookup, key, fallback, min, max, fallback, Long.toString(fallback));
  }

  /** {@code unset} when the key is absent, {@code invalid} (said as {@code said}) when bad. */
  private long parseLong(Lookup lookup, String key, long unset, long min, long max,
      long invalid, String said) {
    String value = trimmed(lookup, key);
    if (value == null) return unset;
    try {
      long parsed = Long.parseLong(value);
      if (parsed >= min && parsed <= max) return parsed;
    } catch (NumberFormatException e) {
      // reported below
    }
    problem(key, value, said);
    return invalid;
  }

  private long parseSizeBytes(Lookup lookup, String key, long fallbackBytes) {
    return parseSparkValue(lookup, key, fallbackBytes, SparkProfConfig::sparkSizeBytes, " bytes");
  }

  private long parseDurationMs(Lookup lookup, String key, long fallbackMs) {
    return parseSparkValue(lookup, key, fallbackMs, SparkProfConfig::sparkDurationMs, "ms");
  }

  /** A value in one of Spark's syntaxes; the fallback (said with its unit) when absent or bad. */
  private long parseSparkValue(Lookup lookup, String key, long fallback,
      java.util.function.Function<String, Long> parser, String unit) {
    String value = trimmed(lookup, key);
    if (value == null) return fallback;
    Long parsed = parser.apply(value);
    if (parsed != null) return parsed;
    problem(key, value, fallback + unit);
    return fallback;
  }

  /** Spark's duration syntax (a bare number is milliseconds); null when it is not one, or < 0. */
  static Long sparkDurationMs(String value) {
    return nonNegative(() -> JavaUtils.timeStringAsMs(value));
  }

  /** Spark's size syntax (a bare number is bytes); null when it is not one. */
  static Long sparkSizeBytes(String value) {
    return nonNegative(() -> JavaUtils.byteStringAsBytes(value));
  }

  private static Long nonNegative(java.util.function.LongSupplier parse) {
    try {
      long parsed = parse.getAsLong();
      return parsed >= 0 ? parsed : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static String[] readDriverSettings(Lookup lookup) {
    List<String> settings = new ArrayList<>();
    for (String[] setting : DRIVER_SETTINGS) {
      String value = trimmed(lookup, setting[0]);
      if (value == null) continue;
      Long converted = null;
      if (setting[1].equals("bytes")) converted = sparkSizeBytes(value);
      if (setting[1].equals("ms")) converted = sparkDurationMs(value);
      settings.add(setting[0]);
      settings.add(converted != null ? Long.toString(converted) : value);
    }
    return settings.toArray(new String[0]);
  }

  private static long clamp(long value, long min, long max) {
    return Math.max(min, Math.min(max, value));
  }
}
