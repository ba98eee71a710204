package io.sparkprof;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The event-log analysis the History Server's sparkprof tab shows for an application whose driver
 * stored no profile: the application's event log, found and read through Spark's own reader
 * ({@code EventLogFileReader}: single files and rolling {@code eventlog_v2_*} directories, every
 * codec Spark writes, any Hadoop file system, exactly as the History Server reads it), its decoded
 * bytes handed in chunks to the engine ({@link NativeAggregator#eventLogAnalysisStart}: the same
 * parser, model and rules as {@code sparkprof analyze}), the report kept per application attempt.
 *
 * <p>Bounded, so that a huge log never stalls the History Server: analyses run one at a time on
 * one daemon thread of their own (at most {@value #MAX_QUEUED} waiting; more are refused, the
 * page says to come back), never on a request's thread, which waits at most {@code waitMs} and
 * otherwise answers "still analysing" (the page asks again); a log whose files are larger than
 * {@link SparkProfConfig#HISTORY_MAX_EVENT_LOG_BYTES} is not opened, one that decodes to more is
 * stopped there, and an analysis running longer than {@link
 * SparkProfConfig#HISTORY_ANALYSIS_TIMEOUT} is stopped; each says so on the page with the command
 * that analyses the log whole. The results (reports and refusals) are kept for the next views: at
 * most {@value #CACHE_MAX_ENTRIES} applications and {@value #CACHE_MAX_CHARS} characters; a
 * finished log's for as long as they stay in the cache, an in-progress log's for
 * {@value #IN_PROGRESS_TTL_MS} ms. See docs/spark-ui.md and docs/limits.md.
 */
final class HistoryEventLogAnalysis {
  /** What a page view gets. */
  static final class Outcome {
    final String reportJson;  // the sparkprof.report/v1 document, or null (see message)
    final String message;  // why there is no report (or what limited it), or null
    final boolean pending;  // still analysing: ask again
    final String eventLog;  // the log read, or null when none was found
    final long decodedBytes;
    final long analysisMs;
    final boolean completedLog;  // the log was complete (not .inprogress) when read
    final long madeAtMs;

    Outcome(String reportJson, String message, boolean pending, String eventLog,
        long decodedBytes, long analysisMs, boolean completedLog) {
      this.reportJson = reportJson;
      this.message = message;
      this.pending = pending;
      this.eventLog = eventLog;
      this.decodedBytes = decodedBytes;
      this.analysisMs = analysisMs;
      this.completedLog = completedLog;
      this.madeAtMs = System.currentTimeMillis();
    }

    long chars() {
      return (reportJson == null ? 0 : reportJson.length()) + (message == null ? 0
          : message.length()) + 256;
    }
  }

  static final int MAX_QUEUED = 8;
  static final int CACHE_MAX_ENTRIES = 64;
  static final long CACHE_MAX_CHARS = 64L << 20;
  static final long IN_PROGRESS_TTL_MS = 30_000;
  private static final int CHUNK_BYTES = 1 << 20;
  /** The names Spark gives a single-file log: its codecs' short names, in progress or not. */
  private static final String[] CODEC_SUFFIXES = {"", ".zstd", ".lz4", ".snappy", ".lzf"};

  private static final Object LOCK = new Object();
  // guarded by LOCK: the kept results (least recently viewed first), and the analyses queued or
  // running, by application attempt.
  private static final LinkedHashMap<String, Outcome> CACHE = new LinkedHashMap<>(16, 0.75f, true);
  private static long cachedChars;
  private static final Map<String, Future<Outcome>> RUNNING = new HashMap<>();
  private static ThreadPoolExecutor worker;

  private final Configuration hadoop;
  private final List<String> logDirectories;
  private final String appId;
  private final String attemptId;
  private final long maxBytes;
  private final long timeoutMs;
  private final String key;

  HistoryEventLogAnalysis(Configuration hadoop, List<String> logDirectories, String appId,
      String attemptId, SparkProfConfig config) {
    this.hadoop = hadoop;
    this.logDirectories = logDirectories;
    this.appId = appId;
    this.attemptId = attemptId;
    this.maxBytes = config.historyMaxEventLogBytes();
    this.timeoutMs = config.historyAnalysisTimeoutMs();
    this.key = appId + '\u0000' + (attemptId == null ? "" : attemptId) + '\u0000'
        + logDirectories;
  }

  /**
   * The application attempt's analysis: the kept one, else the one queued or running (started
   * now if none), waited for at most {@code waitMs}; a pending outcome when it is not done by
   * then.
   */
  Outcome view(long waitMs) {
    Future<Outcome> running;
    synchronized (LOCK) {
      Outcome kept = CACHE.get(key);
      if (kept != null && (kept.completedLog
          || System.currentTimeMillis() - kept.madeAtMs < IN_PROGRESS_TTL_MS)) {
        return kept;
      }
      running = RUNNING.get(key);
      if (running == null) {
        try {
          running = worker().submit(this::analyseAndKeep);
        } catch (RejectedExecutionException e) {
          return new Outcome(null, MAX_QUEUED + " event-log analyses are waiting already in this "
              + "History Server; reload the page in a while", false, null, 0, 0, false);
        }
        RUNNING.put(key, running);
      }
    }
    try {
      return running.get(Math.max(0, waitMs), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return new Outcome(null, "analysing the event log (one analysis at a time in this History "
          + "Server); the page asks again", true, null, 0, 0, false);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Outcome(null, "interrupted", true, null, 0, 0, false);
    } catch (ExecutionException e) {
      return new Outcome(null, "the event-log analysis failed: " + e.getCause(), false, null, 0,
          0, false);
    }
  }

  private static ThreadPoolExecutor worker() {
    if (worker == null) {
      worker = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS,
          new ArrayBlockingQueue<Runnable>(MAX_QUEUED), runnable -> {
            Thread thread = new Thread(runnable, "sparkprof-history-analysis");
            thread.setDaemon(true);
            thread.setPriority(Thread.MIN_PRIORITY);
            return thread;
          });
      worker.allowCoreThreadTimeOut(true);
    }
    return worker;
  }

  private Outcome analyseAndKeep() {
    Outcome outcome;
    try {
      outcome = analyse();
    } catch (RuntimeException | LinkageError e) {
      outcome = new Outcome(null, "the event-log analysis failed: " + e, false, null, 0, 0, false);
    }
    synchronized (LOCK) {
      RUNNING.remove(key);
      Outcome previous = CACHE.put(key, outcome);
      if (previous != null) cachedChars -= previous.chars();
      cachedChars += outcome.chars();
      for (Iterator<Outcome> it = CACHE.values().iterator();
          it.hasNext() && CACHE.size() > 1
              && (CACHE.size() > CACHE_MAX_ENTRIES || cachedChars > CACHE_MAX_CHARS); ) {
        cachedChars -= it.next().chars();
        it.remove();
      }
    }
    return outcome;
  }

  /** Finds, bounds and reads the log; on the worker thread. */
  private Outcome analyse() {
    if (maxBytes <= 0) {
      return new Outcome(null, "the event-log analysis is off in this History Server ("
          + SparkProfConfig.HISTORY_MAX_EVENT_LOG_BYTES + "=0)", false, null, 0, 0, false);
    }
    String unavailable = NativeLibraries.loadDriverLibraryFromJar();
    if (unavailable != null) {
      return new Outcome(null, "the event log cannot be analysed in this History Server: "
          + unavailable, false, null, 0, 0, false);
    }
    List<String> looked = new ArrayList<>();
    for (String directory : logDirectories) {
      java.net.URI uri = EventLogDirOutputs.resolveDirectory(directory);
      if (uri == null) continue;
      Path root = new Path(uri);
      looked.add(HistoryUiSource.displayed(root));
      FileSystem fs;
      try {
        fs = EventLogDirOutputs.fileSystem(root, hadoop);
      } catch (IOException | RuntimeException e) {
        continue;  // that file system is not served here
      }
      for (Path candidate : candidates(root)) {
        Object reader = SparkEventLogs.reader(fs, candidate);
        if (reader != null) return read(fs, reader, candidate);
      }
    }
    return new Outcome(null, "the event log of " + appId + " was not found (looked for "
        + EventLogDirOutputs.eventLogName(appId, attemptId) + " in " + looked + ")", false, null,
        0, 0, false);
  }

  /** Spark's names for the attempt's log in {@code root}: single files, then a rolling folder. */
  private List<Path> candidates(Path root) {
    String name = EventLogDirOutputs.eventLogName(appId, attemptId);
    List<Path> paths = new ArrayList<>();
    for (String codec : CODEC_SUFFIXES) {
      paths.add(new Path(root, name + codec));
      paths.add(new Path(root, name + codec + ".inprogress"));
    }
    paths.add(new Path(root, "eventlog_v2_" + name));
    return paths;
  }

  private Outcome read(FileSystem fs, Object reader, Path log) {
    String shown = HistoryUiSource.displayed(log);
    String whole = " (`sparkprof analyze " + shown + "` analyses it whole)";
    List<FileStatus> files = SparkEventLogs.files(reader);
    long onDisk = 0;
    for (FileStatus file : files) onDisk += file.getLen();
    boolean completed = SparkEventLogs.completed(reader);
    if (onDisk > maxBytes) {
      return new Outcome(null, "the event log " + shown + " is " + onDisk + " bytes, more than "
          + SparkProfConfig.HISTORY_MAX_EVENT_LOG_BYTES + " (" + maxBytes + "); not analysed "
          + "here" + whole, false, shown, 0, 0, completed);
    }
    long started = System.nanoTime();
    long deadline = started + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    long decoded = 0;
    long handle = NativeAggregator.eventLogAnalysisStart();
    boolean reported = false;
    try {
      byte[] buffer = new byte[CHUNK_BYTES];
      for (FileStatus file : files) {
        try (InputStream in = SparkEventLogs.open(fs, file.getPath())) {
          for (int n; (n = in.read(buffer)) > 0; ) {
            decoded += n;
            if (decoded > maxBytes) {
              return new Outcome(null, "the event log " + shown + " decodes to more than "
                  + maxBytes + " bytes (" + SparkProfConfig.HISTORY_MAX_EVENT_LOG_BYTES
                  + "); not analysed here" + whole, false, shown, decoded, elapsedMs(started),
                  completed);
            }
            if (System.nanoTime() > deadline) {
              return new Outcome(null, "the analysis of the event log " + shown + " was stopped "
                  + "after " + timeoutMs + " ms (" + SparkProfConfig.HISTORY_ANALYSIS_TIMEOUT
                  + ") at " + decoded + " bytes" + whole, false, shown, decoded,
                  elapsedMs(started), completed);
            }
            NativeAggregator.eventLogAnalysisAdd(handle, buffer, n);
          }
        }
      }
      reported = true;
      String report = NativeAggregator.eventLogAnalysisReport(handle, shown);
      return new Outcome(report, null, false, shown, decoded, elapsedMs(started), completed);
    } catch (IOException | IllegalArgumentException e) {
      return new Outcome(null, "the event log " + shown + " could not be analysed: "
          + e.getMessage(), false, shown, decoded, elapsedMs(started), completed);
    } finally {
      if (!reported) NativeAggregator.eventLogAnalysisClose(handle);
    }
  }

  private static long elapsedMs(long startedNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos);
  }

  /**
   * Spark's {@code org.apache.spark.deploy.history.EventLogFileReader}, by reflection: its Scala
   * companion's {@code apply(FileSystem, Path)} and {@code openEventLog(Path, FileSystem)} and the
   * reader's {@code listEventLogFiles} and {@code completed}. The same members in Spark 3.5 and 4;
   * {@code Seq}'s class differs between Scala 2.12 and 2.13, so it is read as a {@code
   * scala.collection.Iterable}.
   */
  static final class SparkEventLogs {
    private SparkEventLogs() {}

    private static final String READER = "org.apache.spark.deploy.history.EventLogFileReader";

    private static Object companion() throws ReflectiveOperationException {
      return Class.forName(READER + "$").getField("MODULE$").get(null);
    }

    /** The reader of the log at {@code path}, or null when there is none (or not a log). */
    static Object reader(FileSystem fs, Path path) {
      try {
        if (!fs.exists(path)) return null;
        Object companion = companion();
        Method apply = companion.getClass().getMethod("apply", FileSystem.class, Path.class);
        Object option = apply.invoke(companion, fs, path);
        return option instanceof scala.Option && ((scala.Option<?>) option).isDefined()
            ? ((scala.Option<?>) option).get() : null;
      } catch (IOException | ReflectiveOperationException | RuntimeException | LinkageError e) {
        return null;
      }
    }

    /** The log's files in Spark's reading order. */
    static List<FileStatus> files(Object reader) {
      List<FileStatus> files = new ArrayList<>();
      try {
        Object list = Class.forName(READER).getMethod("listEventLogFiles").invoke(reader);
        scala.collection.Iterator<?> it = ((scala.collection.Iterable<?>) list).iterator();
        while (it.hasNext()) files.add((FileStatus) it.next());
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        throw new IllegalStateException("this Spark's EventLogFileReader: " + e, e);
      }
      return files;
    }

    static boolean completed(Object reader) {
      try {
        return (Boolean) Class.forName(READER).getMethod("completed").invoke(reader);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        return false;
      }
    }

    /** The file's decoded bytes (Spark's codec for its name). */
    static InputStream open(FileSystem fs, Path file) throws IOException {
      try {
        Object companion = companion();
        return (InputStream) companion.getClass()
            .getMethod("openEventLog", Path.class, FileSystem.class)
            .invoke(companion, file, fs);
      } catch (InvocationTargetException e) {
        Throwable cause = e.getCause();
        if (cause instanceof IOException) throw (IOException) cause;
        throw new IOException(String.valueOf(cause), cause);
      } catch (ReflectiveOperationException | LinkageError e) {
        throw new IOException("this Spark's EventLogFileReader.openEventLog: " + e, e);
      }
    }
  }
}
