package io.sparkprof;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkFirehoseListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.StageInfo;

/**
 * The listener bridge: every event Spark's event logger would write becomes the same line ({@link
 * EventLogLines}) and goes, as UTF-8 bytes (what the log file holds), to the native live model
 * ({@link NativeAggregator#onEvent}), which runs it through the parser and model builder of
 * {@code sparkprof analyze}. Stage completion also schedules the stage's flame graph, and the
 * application's end writes the report.
 *
 * <p>Runs on Spark's listener thread: never throws (a failing event is counted and the first
 * failure logged once), never blocks beyond the native model's lock. Its cost per event is
 * measured by {@link #nanosPerEvent()} (JSON and the native model together).
 */
final class SparkProfListener extends SparkFirehoseListener {
  /** Where the lines go: the native model in production, a list in tests. */
  interface Sink {
    void accept(byte[] utf8Line);
  }

  private final SparkProfDriverPlugin plugin;
  private final Sink sink;
  private final EventLogLines lines;
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong events = new AtomicLong();
  private final AtomicLong nanos = new AtomicLong();
  private final AtomicLong jsonNanos = new AtomicLong();
  private final AtomicLong cpuNanos = new AtomicLong();
  private static final ThreadMXBean THREADS = threads();
  private volatile boolean failureLogged;
  private volatile long firstEventNanos;
  private final Set<String> liveExecutors = ConcurrentHashMap.newKeySet();

  SparkProfListener(SparkProfDriverPlugin plugin, SparkConf conf, Sink sink) {
    this.plugin = plugin;
    this.sink = sink;
    this.lines = new EventLogLines(conf);
  }

  /** The first line of the feed, as the event log starts. */
  void logStart(String sparkVersion) {
    try {
      sink.accept(lines.logStart(sparkVersion).getBytes(StandardCharsets.UTF_8));
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  @Override
  public void onEvent(SparkListenerEvent event) {
    if (!EventLogLines.forwarded(event)) return;
    long start = System.nanoTime();
    long startCpu = cpuNanos();
    try {
      String line = lines.line(event);
      if (line == null) {
        failed(new IllegalStateException(event.getClass().getName() + " could not be redacted"));
      } else {
        byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
        long encoded = System.nanoTime();
        jsonNanos.addAndGet(encoded - start);
        sink.accept(bytes);
      }
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
    long elapsed = System.nanoTime() - start;
    if (events.incrementAndGet() == 1) {
      firstEventNanos = elapsed;  // loads and links Spark's JSON writer: reported apart
    } else {
      nanos.addAndGet(elapsed);
      if (startCpu >= 0) cpuNanos.addAndGet(cpuNanos() - startCpu);
    }
    if (plugin == null) return;
    try {
      if (event instanceof SparkListenerExecutorAdded) {
        liveExecutors.add(((SparkListenerExecutorAdded) event).executorId());
        plugin.onExecutorsChanged();
      } else if (event instanceof SparkListenerExecutorRemoved) {
        liveExecutors.remove(((SparkListenerExecutorRemoved) event).executorId());
        plugin.onExecutorsChanged();
      } else if (event instanceof SparkListenerStageCompleted) {
        StageInfo info = ((SparkListenerStageCompleted) event).stageInfo();
        if (info != null) plugin.onStageCompleted(info.stageId(), info.attemptNumber());
      } else if (event instanceof SparkListenerApplicationEnd) {
        plugin.onApplicationEnd();
      }
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  private static ThreadMXBean threads() {
    try {
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      return threads.isCurrentThreadCpuTimeSupported() ? threads : null;
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }

  /** This thread's CPU time, -1 when the JVM cannot tell. */
  private static long cpuNanos() {
    try {
      return THREADS == null ? -1 : THREADS.getCurrentThreadCpuTime();
    } catch (RuntimeException e) {
      return -1;
    }
  }

  /** Mean listener-thread CPU time per forwarded event after the first, in nanoseconds. */
  long cpuNanosPerEvent() {
    long count = events.get() - 1;
    return count <= 0 ? 0 : cpuNanos.get() / count;
  }

  /** Executors added and not removed, as the events so far tell. */
  Set<String> liveExecutors() {
    return new HashSet<>(liveExecutors);
  }

  /** Events that could not be turned into a line. */
  long failures() {
    return failures.get();
  }

  /** Events forwarded so far. */
  long events() {
    return events.get();
  }

  /**
   * Mean listener-thread time per forwarded event after the first (JSON + native model), in
   * nanoseconds; the first, which loads Spark's JSON writer, is {@link #firstEventNanos()}.
   */
  long nanosPerEvent() {
    long count = events.get() - 1;
    return count <= 0 ? 0 : nanos.get() / count;
  }

  /** Of all events' time, the part spent making their lines (the rest is the native model). */
  double jsonShare() {
    long total = nanos.get() + firstEventNanos;
    return total == 0 ? 0 : (double) jsonNanos.get() / total;
  }

  long firstEventNanos() {
    return firstEventNanos;
  }

  private void failed(Throwable e) {
    failures.incrementAndGet();
    if (failureLogged) return;
    failureLogged = true;
    Log.warn("a listener event was not recorded (further failures are counted, not "
        + "logged): " + e);
  }
}
