package io.sparkprof;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;

/**
 * Driver side: starts the native aggregator (Prometheus endpoint, flame graph directory), feeds it
 * the executors' batches from {@link #receive} and Spark's listener events ({@link
 * SparkProfListener}, as event-log lines for the live application model), asks it for a stage's
 * flame graph when the stage completes, and for the full report (report.txt/.json/.md/.html) at
 * shutdown, once the application's end and every executor's last batch arrived (bounded wait).
 *
 * <p>{@code receive} runs on Spark's single plugin dispatcher thread: it only copies a batch into
 * the native ingest queue (bounded; a batch past its limits is dropped and counted as
 * {@code queue_full}), a sparkprof thread folds it. It never throws (a bad batch is counted
 * natively, in {@code sparkprof_driver_batches_total{outcome}}).
 */
public final class SparkProfDriverPlugin implements DriverPlugin {
  private volatile boolean running;
  private SparkProfConfig config;
  private ScheduledExecutorService flameGraphWriter;
  /** Completed stage attempts whose flame graph is not written yet ("stage:attempt"). */
  private final Map<String, int[]> pendingFlameGraphs = new ConcurrentHashMap<>();
  private volatile boolean badBatchLogged;
  private volatile LiveUiSource uiSource;  // the UI tab's, when Spark's UI has it
  private volatile boolean drainsDriverAgent;  // this plugin drains the driver JVM's agent
  private final Object driverDrainLock = new Object();
  private volatile SparkProfListener listener;
  private volatile boolean ownQueue;  // the listener is on its own listener-bus queue
  /** The OpenTelemetry export at the end, when spark.sparkprof.otel.enabled. */
  private volatile ApplicationTrace trace;
  private volatile OutputStream liveEventLogCopy;
  private volatile boolean liveEventLogClosed;
  /** Executors whose final marker arrived; also the lock of the end-of-application wait. */
  private final Set<String> finalBatches = new HashSet<>();
  private boolean applicationEnded;
  /** Spark's event-log directory when the outputs are stored beside the log too, else null. */
  private volatile String eventLogDir;
  private volatile org.apache.hadoop.conf.Configuration hadoopConf;
  private volatile SparkContext context;
  /** The application's folder beside the event log, once its id is known. */
  private volatile org.apache.hadoop.fs.Path besideEventLog;
  private volatile File applicationDirectory;

  @Override
  public Map<String, String> init(SparkContext sc, PluginContext pluginContext) {
    // For the executors' plugin init (extraConf): what they cannot see from where they run.
    Map<String, String> extraConf = new HashMap<>();
    try {
      Log.routeNativeLibraries();
      config = SparkProfConfig.from(pluginContext.conf());
      if (!config.problems().isEmpty()) Log.warn(config.problems());
      if (!config.enabled()) return Collections.emptyMap();
      // The workers' interpreter as PySpark's driver picks it: the executors probe that one.
      extraConf.put(PythonWorkerProfiling.DRIVER_PYTHON_EXEC, PythonWorkerProfiling.driverChoice(
          pluginContext.conf(), System.getenv("PYSPARK_PYTHON")));
      if (!NativeAggregator.isAvailable()) {
        String library = driverLibraryPath(config);
        if (library == null) {
          // Plugin-only install: the copy inside this jar (a failure is logged there, once).
          if (NativeLibraries.loadDriverLibraryFromJar() != null) return extraConf;
        } else {
          try {
            NativeLibraries.loadDriverDependenciesFromJar();
            System.load(library);
          } catch (UnsatisfiedLinkError | SecurityException e) {
            Log.warn("driver: cannot load " + library + " (" + e.getMessage()
                + "); no metrics or flame graphs");
            return extraConf;
          }
        }
        if (!NativeAggregator.isAvailable()) {
          Log.warn("driver: " + DRIVER_LIBRARY + " is loaded by another class loader; "
              + "no metrics or flame graphs");
          return extraConf;
        }
      }
      int port = NativeAggregator.start(config);
      flameGraphWriter = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "sparkprof-flamegraphs");
        thread.setDaemon(true);
        return thread;
      });
      running = true;
      startDriverSampling(sc);
      if (sc != null) {
        listener = new SparkProfListener(this, sc.conf(), liveFeed(config));
        listener.logStart(sparkVersion(sc));
        ownQueue = SparkCompat.addListener(sc, listener);
        if (config.otelEnabled()) {
          trace = new ApplicationTrace(config);
          trace.start(System.getenv("TRACEPARENT"));
          SparkCompat.addListener(sc, trace);
        }
      }
      if (sc != null && config.uiEnabled()) attachUiTab(sc);
      if (sc != null) planBesideEventLog(sc);
      Log.info("driver aggregator started"
          + (port >= 0 ? ", metrics at http://" + config.prometheusBindAddress() + ":" + port
              + "/metrics" : ", no metrics endpoint")
          + ", stage flame graphs in " + config.outputDir());
    } catch (RuntimeException | LinkageError e) {
      Log.warn("driver plugin disabled: " + e);
      if (running) {
        running = false;
        flameGraphWriter.shutdownNow();
        NativeAggregator.stop();  // started, so the natives are there: this does not throw
      }
    }
    return extraConf;
  }

  /**
   * Whether the outputs are also stored beside the event log ({@link
   * SparkProfConfig#BESIDE_EVENT_LOG}): the event-log directory and Hadoop configuration Spark's
   * event logger uses. Never throws.
   */
  private void planBesideEventLog(SparkContext sc) {
    try {
      boolean eventLog = sc.conf().getBoolean("spark.eventLog.enabled", false);
      if (!config.storesBesideEventLog(eventLog) || config.besideEventLogMaxBytes() <= 0) return;
      context = sc;
      hadoopConf = sc.hadoopConfiguration();
      eventLogDir = sc.conf().get("spark.eventLog.dir", "/tmp/spark-events");
    } catch (RuntimeException | LinkageError e) {
      Log.warn("outputs not stored beside the event log: " + e);
    }
  }

  /**
   * The sparkprof tab in Spark's UI (when the UI is on: {@code spark.ui.enabled}), served through
   * Spark's own handlers, filters and ACLs ({@link SparkUiAttachment}); its figures are computed
   * only when a page asks. A failure leaves the application without the tab after one log line.
   */
  private void attachUiTab(SparkContext sc) {
    try {
      scala.Option<org.apache.spark.ui.SparkUI> ui = sc.ui();
      if (ui.isEmpty()) return;
      uiSource = new LiveUiSource();
      SparkUiAttachment.attach(ui.get(), new SparkProfUi(uiSource, "live"));
    } catch (RuntimeException | LinkageError e) {
      Log.warn("no sparkprof tab in Spark's UI: " + e);
    }
  }

  /**
   * With {@code spark.sparkprof.driver.enabled}: the agent in this JVM ({@code -agentpath}, or
   * started from the jar in a plugin-only install) is drained every flush interval into the
   * aggregator, so the driver's own samples join the profile (executor id "driver"). Local mode
   * is left to the executor plugin sharing this JVM. Never throws; a failure leaves the driver
   * unsampled after one log line.
   */
  private void startDriverSampling(SparkContext sc) {
    if (!config.driverEnabled()) return;
    try {
      if (sc != null && sc.isLocal()) return;  // the executor side drains this JVM's agent
      if (!NativeAgent.isLoaded()) {
        String outcome = NativeAgent.startFromJar(config.agentOptions());
        if (!NativeAgent.STARTED.equals(outcome) && !NativeAgent.ALREADY_RUNNING.equals(outcome)) {
          Log.warn("driver unsampled: " + outcome);
          return;
        }
      }
      long intervalMs = config.flushIntervalMs();
      flameGraphWriter.scheduleWithFixedDelay(this::drainDriverAgent, intervalMs, intervalMs,
          TimeUnit.MILLISECONDS);
      drainsDriverAgent = true;
    } catch (RuntimeException | LinkageError e) {
      Log.warn("driver unsampled: " + e);
    }
  }

  /** One batch of this JVM's agent into the aggregator; on the flame-graph thread and at the end. */
  private void drainDriverAgent() {
    if (!drainsDriverAgent || SparkProfExecutorPlugin.drainsThisJvm) return;
    try {
      byte[] batch;
      synchronized (driverDrainLock) {  // the scheduled drain may still run at shutdown
        batch = NativeAgent.drainBatchOrNull();
      }
      if (batch == null) return;
      int outcome = NativeAggregator.ingest(batch);
      if (outcome != NativeAggregator.ACCEPTED && outcome != NativeAggregator.NOT_RUNNING) {
        logBadBatchOnce("a batch of the driver's own samples was dropped ("
            + NativeAggregator.outcomeName(outcome) + ")");
      }
    } catch (RuntimeException | LinkageError e) {
      logBadBatchOnce("a batch of the driver's own samples was dropped: " + e);
    }
  }

  /** The native model, and the copy file when {@code spark.sparkprof.liveEventLog} is set. */
  private SparkProfListener.Sink liveFeed(SparkProfConfig config) {
    if (config.liveEventLog().isEmpty()) return NativeAggregator::onEvent;
    try {
      liveEventLogCopy = new BufferedOutputStream(new FileOutputStream(config.liveEventLog()));
    } catch (IOException | SecurityException e) {
      Log.warn(SparkProfConfig.LIVE_EVENT_LOG + ": cannot write "
          + config.liveEventLog() + " (" + e.getMessage() + "); the live feed is not copied");
      return NativeAggregator::onEvent;
    }
    final OutputStream copy = liveEventLogCopy;
    return line -> {
      NativeAggregator.onEvent(line);
      synchronized (copy) {
        if (liveEventLogClosed) return;
        try {
          copy.write(line);
          copy.write('\n');
        } catch (IOException e) {
          throw new IllegalStateException("live event log copy: " + e.getMessage(), e);
        }
      }
    };
  }

  private void closeLiveEventLogCopy() {
    OutputStream copy = liveEventLogCopy;
    if (copy == null) return;
    synchronized (copy) {
      liveEventLogClosed = true;
      try {
        copy.close();
      } catch (IOException e) {
        Log.warn("live event log copy: " + e.getMessage());
      }
    }
  }

  private static String sparkVersion(SparkContext sc) {
    try {
      String version = sc.version();
      return version == null ? "" : version;
    } catch (RuntimeException | LinkageError e) {
      return "";
    }
  }

  /** The driver-side library: the aggregator and the engine, loaded only by the driver. */
  static final String DRIVER_LIBRARY = "libsparkprof_driver.so";

  /**
   * {@code spark.sparkprof.libraryPath} when set; otherwise libsparkprof_driver.so in the directory
   * of the {@code -agentpath} library this JVM was started with, when it is there; else null.
   */
  static String driverLibraryPath(SparkProfConfig config) {
    if (!config.libraryPath().isEmpty()) return new File(config.libraryPath()).getAbsolutePath();
    List<String> arguments;
    try {
      arguments = ManagementFactory.getRuntimeMXBean().getInputArguments();
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
    for (String argument : arguments) {
      if (!argument.startsWith("-agentpath:")) continue;
      String agent = argument.substring("-agentpath:".length());
      int options = agent.indexOf('=');
      if (options >= 0) agent = agent.substring(0, options);
      if (!new File(agent).getName().startsWith("libsparkprof")) continue;
      File directory = new File(agent).getAbsoluteFile().getParentFile();
      File library = new File(directory, DRIVER_LIBRARY);
      if (library.isFile()) return library.getPath();
    }
    return null;
  }

  /** The application id is known now (not yet in init): outputs go to its own directory. */
  @Override
  public void registerMetrics(String appId, PluginContext pluginContext) {
    if (!running) return;
    try {
      NativeAggregator.setApplication(appId, pluginContext.conf().get("spark.app.name", ""));
      applicationDirectory = new File(config.outputDir(), SparkProfHistoryPlugin.safeName(appId));
      LiveUiSource source = uiSource;
      if (source != null) source.setApplicationDirectory(applicationDirectory);
      if (eventLogDir != null) {
        String attempt = null;
        SparkContext sc = context;
        if (sc != null && sc.applicationAttemptId().isDefined()) {
          attempt = sc.applicationAttemptId().get();
        }
        besideEventLog = EventLogDirOutputs.folder(eventLogDir, appId, attempt);
      }
    } catch (RuntimeException | LinkageError e) {
      Log.warn("outputs stay in " + config.outputDir() + ": " + e.getMessage());
    }
  }

  @Override
  public Object receive(Object message) {
    if (!running) return null;
    try {
      if (message instanceof String
          && ((String) message).startsWith(SparkProfExecutorPlugin.FINAL_MARKER)) {
        synchronized (finalBatches) {
          finalBatches.add(((String) message).substring(
              SparkProfExecutorPlugin.FINAL_MARKER.length()));
          finalBatches.notifyAll();
        }
        return null;
      }
      if (!(message instanceof byte[])) {
        logBadBatchOnce("a message of type "
            + (message == null ? "null" : message.getClass().getName()) + " was ignored");
        return null;
      }
      int outcome = NativeAggregator.ingest((byte[]) message);
      if (outcome != NativeAggregator.ACCEPTED && outcome != NativeAggregator.NOT_RUNNING) {
        logBadBatchOnce("a batch was dropped (" + NativeAggregator.outcomeName(outcome) + ")");
      }
    } catch (RuntimeException | LinkageError e) {
      logBadBatchOnce("a batch was dropped: " + e);
    }
    return null;
  }

  private void logBadBatchOnce(String what) {
    if (badBatchLogged) return;
    badBatchLogged = true;
    Log.warn(what + "; further drops are counted in sparkprof_driver_batches_total, "
        + "not logged");
  }

  /**
   * Called from the listener thread. The flame graph is written after two flush intervals, so
   * the batches the executors send after the stage's last task still arrive in time.
   */
  void onStageCompleted(final int stageId, final int stageAttempt) {
    if (!running) return;
    final String key = stageId + ":" + stageAttempt;
    pendingFlameGraphs.put(key, new int[] {stageId, stageAttempt});
    try {
      flameGraphWriter.schedule(() -> writeFlameGraph(key), 2 * config.flushIntervalMs(),
          TimeUnit.MILLISECONDS);
    } catch (RuntimeException e) {
      // Shutting down: shutdown() writes what is pending.
    }
  }

  private void writeFlameGraph(String key) {
    int[] stage = pendingFlameGraphs.remove(key);
    if (stage == null) return;
    try {
      NativeAggregator.writeStageFlameGraph(stage[0], stage[1]);
    } catch (RuntimeException | LinkageError e) {
      Log.warn("flame graph of stage " + stage[0] + " (attempt " + stage[1]
          + ") not written: " + e.getMessage());
    }
  }

  /** From the listener thread, after the ApplicationEnd event went to the live model. */
  void onApplicationEnd() {
    synchronized (finalBatches) {
      applicationEnded = true;
      finalBatches.notifyAll();
    }
  }

  /** From the listener thread: an executor came or went. */
  void onExecutorsChanged() {
    synchronized (finalBatches) {
      finalBatches.notifyAll();
    }
  }

  /**
   * Waits, at most {@code spark.sparkprof.finalBatchTimeout}, until the listener has seen the
   * application's end and every executor still registered sent its final marker (its last batch
   * is then in: markers ride behind the batches). Spark calls the plugins' shutdown after the
   * scheduler told the executors to stop and before the listener bus drains, so both arrive
   * while this waits.
   */
  private void awaitFinalBatches() {
    SparkProfListener events = listener;
    long deadline = System.nanoTime() + config.finalBatchTimeoutMs() * 1_000_000L;
    Set<String> missing = new TreeSet<>();
    boolean ended;
    synchronized (finalBatches) {
      while (true) {
        missing.clear();
        if (events != null) missing.addAll(events.liveExecutors());
        missing.removeAll(finalBatches);
        ended = applicationEnded || events == null;
        long remainingMs = (deadline - System.nanoTime()) / 1_000_000L;
        if ((ended && missing.isEmpty()) || remainingMs <= 0) break;
        try {
          finalBatches.wait(remainingMs);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    if (!missing.isEmpty() || !ended) {
      Log.warn("stopped waiting after " + config.finalBatchTimeoutMs() + " ms for "
          + (ended ? "" : "the application's end and ") + "the last batches of executors "
          + missing + "; the report and flame graphs may miss their last samples");
    }
  }

  /** The end-of-application report, from shutdown (after the final batches). */
  private void writeReport() {
    SparkProfListener events = listener;
    closeLiveEventLogCopy();
    if (events != null) {
      Log.info(String.format(java.util.Locale.ROOT, "listener: %d events forwarded, "
          + "%.1f us each on the listener thread after the first (%.1f ms; %.1f us of CPU), "
          + "%.0f%% of it making the JSON lines, %d not recorded; %s", events.events(),
          events.nanosPerEvent() / 1e3, events.firstEventNanos() / 1e6,
          events.cpuNanosPerEvent() / 1e3, 100 * events.jsonShare(), events.failures(),
          ownQueue ? "on its own listener-bus queue '" + SparkCompat.LISTENER_QUEUE + "'"
              : "on Spark's shared listener-bus queue"));
    }
    String paths = null;
    try {
      paths = NativeAggregator.finishApplication();
      if (paths != null && !paths.isEmpty()) {
        Log.info("report written: " + paths.replace('\n', ' '));
      }
      exportTrace(paths);
    } catch (RuntimeException | LinkageError e) {
      Log.warn("report not written: " + e.getMessage());
      ApplicationTrace export = trace;
      if (export != null) export.abandon();
    }
    try {
      storeBesideEventLog(paths);  // what was written (flame graphs and profile without a report)
    } catch (RuntimeException | LinkageError e) {
      Log.warn("outputs not stored beside the event log: " + e);
    }
  }

  /**
   * The outputs, once written, also beside the event log ({@link EventLogDirOutputs}), on a
   * thread of their own: the shutdown waits at most {@code spark.sparkprof.besideEventLog.timeout}.
   * Never throws; one log line either way.
   */
  private void storeBesideEventLog(String reportPaths) {
    final org.apache.hadoop.fs.Path target = besideEventLog;
    if (target == null) return;
    File local = applicationDirectory;
    for (String path : reportPaths == null ? new String[0] : reportPaths.split("\n")) {
      if (path.endsWith("report.json")) local = new File(path).getParentFile();
    }
    if (local == null) return;
    final File from = local;
    final long maxBytes = config.besideEventLogMaxBytes();
    final EventLogDirOutputs.Outcome[] result = new EventLogDirOutputs.Outcome[1];
    long started = System.nanoTime();
    Thread copier = new Thread(() -> {
      result[0] = EventLogDirOutputs.store(from, target, hadoopConf, maxBytes);
    }, "sparkprof-beside-event-log");
    copier.setDaemon(true);
    copier.start();
    try {
      copier.join(config.besideEventLogTimeoutMs());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long tookMs = (System.nanoTime() - started) / 1_000_000L;
    EventLogDirOutputs.Outcome outcome = copier.isAlive() ? null : result[0];
    if (outcome == null) {
      Log.warn("outputs not stored beside the event log in " + target + ": not done after "
          + config.besideEventLogTimeoutMs() + " ms (" + SparkProfConfig.BESIDE_EVENT_LOG_TIMEOUT
          + "); they stay in " + from);
    } else if (outcome.failure != null) {
      Log.warn("outputs not stored beside the event log in " + target + " (" + outcome
          + "); they stay in " + from);
    } else {
      Log.info("outputs stored beside the event log in " + target + " in " + tookMs + " ms: "
          + outcome + (outcome.leftOut.isEmpty() ? "" : " (" + SparkProfConfig
              .BESIDE_EVENT_LOG_MAX_BYTES + "=" + config.besideEventLogMaxBytes()
              + "; they stay in " + from + ")"));
    }
  }

  /** The application's spans, from the report just written (never throws). */
  private void exportTrace(String reportPaths) {
    ApplicationTrace export = trace;
    if (export == null) return;
    File reportJson = null;
    for (String path : reportPaths == null ? new String[0] : reportPaths.split("\n")) {
      if (path.endsWith(".json")) reportJson = new File(path);
    }
    if (reportJson == null) {
      Log.warn("OpenTelemetry: no application span, no report.json was written");
      export.abandon();
      return;
    }
    try {
      export.export(reportJson);
    } catch (RuntimeException | LinkageError e) {
      Log.warn("OpenTelemetry: no spans: " + e);
    }
  }

  /**
   * The final markers only say that the executors' last batches reached the ingest queue: wait
   * until the queue folded them (bounded, like the marker wait) before flame graphs and report.
   */
  private void drainIngestQueue() {
    try {
      if (!NativeAggregator.drain(config.finalBatchTimeoutMs())) {
        Log.warn("the ingest queue was not drained within "
            + config.finalBatchTimeoutMs() + " ms; the report and flame graphs may miss the "
            + "last batches");
      }
      Log.info("driver status at shutdown: " + NativeAggregator.status()
          + PythonDriverProfiling.counts());
    } catch (RuntimeException | LinkageError e) {
      Log.warn("draining the ingest queue: " + e);
    }
  }

  @Override
  public void shutdown() {
    if (!running) return;
    awaitFinalBatches();
    flameGraphWriter.shutdownNow();
    drainDriverAgent();  // the driver's last samples, behind the executors' last batches
    drainIngestQueue();
    for (String key : pendingFlameGraphs.keySet()) writeFlameGraph(key);
    writeReport();
    running = false;
    try {
      NativeAggregator.stop();
    } catch (RuntimeException | LinkageError e) {
      Log.warn("stopping the aggregator: " + e);
    }
  }
}
