package io.sparkprof;

import static io.sparkprof.SparkPluginTest.check;
import static io.sparkprof.SparkPluginTest.conf;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPOutputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The History Server side's bounds (docs/limits.md), each driven past its limit: the event-log
 * analysis's timeout, its queue of waiting analyses, and the decompressed size of a profile read
 * for a diff. The event logs are read through {@link SlowFileSystem}, a local file system whose
 * reads the test slows or holds, so that "takes longer than the timeout" and "is still running"
 * are facts the test sets, not races it hopes to win on a loaded machine.
 */
final class HistoryLimitsChecks {
  private HistoryLimitsChecks() {}

  /**
   * The local file system under its own scheme, each read paused by {@link #pause}. Public:
   * Hadoop makes it by name ({@code fs.sparkprofslow.impl}).
   */
  public static final class SlowFileSystem extends RawLocalFileSystem {
    static final String SCHEME = "sparkprofslow";
    /** Reads wait for this to open (held: a count of 1). */
    static volatile CountDownLatch gate = new CountDownLatch(0);
    /** Then sleep this long. */
    static volatile long delayMs;
    /** Each read hands out at most this much, so a 1 MiB chunk takes several paused reads. */
    static final int READ_BYTES = 128 << 10;
    /** Reads inside {@link #pause} now. */
    static final AtomicInteger heldReads = new AtomicInteger();

    @Override
    public URI getUri() {
      return URI.create(SCHEME + ":///");
    }

    @Override
    public String getScheme() {
      return SCHEME;
    }

    @Override
    public FSDataInputStream open(org.apache.hadoop.fs.Path path, int bufferSize)
        throws IOException {
      return new FSDataInputStream(new SlowStream(super.open(path, bufferSize)));
    }

    static void pause() throws IOException {
      heldReads.incrementAndGet();
      try {
        gate.await();
        Thread.sleep(delayMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted in a slowed read");
      } finally {
        heldReads.decrementAndGet();
      }
    }

    /** A Hadoop configuration that serves {@code SCHEME} paths with this file system. */
    static Configuration configured() {
      Configuration hadoop = new Configuration();
      hadoop.setClass("fs." + SCHEME + ".impl", SlowFileSystem.class,
          org.apache.hadoop.fs.FileSystem.class);
      return hadoop;
    }
  }

  static final class SlowStream extends FSInputStream {
    private final FSDataInputStream in;

    SlowStream(FSDataInputStream in) {
      this.in = in;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      SlowFileSystem.pause();
      return in.read(buffer, offset, Math.min(length, SlowFileSystem.READ_BYTES));
    }

    @Override
    public void seek(long position) throws IOException {
      in.seek(position);
    }

    @Override
    public long getPos() throws IOException {
      return in.getPos();
    }

    @Override
    public boolean seekToNewSource(long target) {
      return false;
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  static void run(Path work) throws Exception {
    analysisTimeoutChecks(work);
    queueChecks(work);
    profileBoundChecks(work);
  }

  /**
   * An uncompressed event log of about {@code bytes}: a start, lines of an event no one knows
   * (Spark's replay and the engine skip it), an end.
   */
  static long writeEventLog(Path file, String appId, long bytes) throws IOException {
    StringBuilder padding = new StringBuilder();
    for (int i = 0; i < 60_000; i++) padding.append('x');
    try (OutputStream out = Files.newOutputStream(file)) {
      out.write(("{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.9\"}\n"
          + "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"history limits\","
          + "\"App ID\":\"" + appId + "\",\"Timestamp\":1767268800000,\"User\":\"test\"}\n")
          .getBytes(StandardCharsets.UTF_8));
      byte[] line = ("{\"Event\":\"org.example.sparkprof.Padding\",\"padding\":\"" + padding
          + "\"}\n").getBytes(StandardCharsets.UTF_8);
      for (long written = 0; written < bytes; written += line.length) out.write(line);
      out.write("{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":1767268860000}\n"
          .getBytes(StandardCharsets.UTF_8));
    }
    return Files.size(file);
  }

  /**
   * spark.sparkprof.history.analysisTimeout at its minimum (1 s) against a 4 MiB log whose reads
   * take 100 ms each (128 KiB), 3.2 s in all: stopped between two chunks, said with the bytes
   * read and the command. The same log read at full speed is analysed whole, so it is the timeout
   * that stops it, not the log.
   */
  static void analysisTimeoutChecks(Path work) throws Exception {
    Path events = work.resolve("timeout-events");
    Files.createDirectories(events);
    String appId = "app-20260101120000-0101";
    long logBytes = writeEventLog(events.resolve(appId), appId, 4L << 20);
    SparkProfConfig oneSecond = SparkProfConfig.from(conf("history.analysisTimeout", "1s")::get);

    HistoryEventLogAnalysis whole = new HistoryEventLogAnalysis(new Configuration(),
        Collections.singletonList(events.toUri().toString()), appId, null,
        SparkProfConfig.from(conf()::get));
    HistoryEventLogAnalysis.Outcome read = whole.view(120_000);
    check(read.reportJson != null && read.reportJson.contains("\"sparkprof.report/v1\"")
        && read.message == null && read.decodedBytes == logBytes,
        "the padded log at full speed is analysed whole in " + read.analysisMs + " ms: "
            + read.decodedBytes + " of " + logBytes + " bytes, " + read.message);

    SlowFileSystem.delayMs = 100;
    HistoryEventLogAnalysis slow = new HistoryEventLogAnalysis(SlowFileSystem.configured(),
        Collections.singletonList(SlowFileSystem.SCHEME + "://" + events.toUri().getPath()),
        appId, null, oneSecond);
    HistoryEventLogAnalysis.Outcome stopped = slow.view(120_000);
    SlowFileSystem.delayMs = 0;
    String message = String.valueOf(stopped.message);
    Matcher said = Pattern.compile("the analysis of the event log (\\S+) was stopped after 1000 "
        + "ms \\(spark\\.sparkprof\\.history\\.analysisTimeout\\) at (\\d+) bytes "
        + "\\(`sparkprof analyze \\1` analyses it whole\\)").matcher(message);
    check(stopped.reportJson == null && !stopped.pending && said.matches()
        && said.group(1).startsWith(SlowFileSystem.SCHEME + ":")
        && Long.parseLong(said.group(2)) == stopped.decodedBytes && stopped.decodedBytes > 0
        && stopped.decodedBytes < logBytes && stopped.analysisMs >= 1000,
        "a slow log is stopped after analysisTimeout between two chunks, bytes and command said ("
            + stopped.analysisMs + " ms, " + stopped.decodedBytes + " of " + logBytes
            + " bytes): " + message);
    String data = new HistoryUiSource(null, null, Collections.singletonList("nowhere"), slow)
        .dataJson();
    check(data.contains("\"report_source\":\"event_log\"") && data.contains("\"report\":null")
        && data.contains("\"event_log_message\":\"the analysis of the event log ")
        && data.contains("was stopped after 1000 ms (spark.sparkprof.history.analysisTimeout) at "
            + stopped.decodedBytes + " bytes"),
        "the tab's data says the analysis was stopped, without a report: " + data);
  }

  /**
   * One analysis running (its read held), {@value HistoryEventLogAnalysis#MAX_QUEUED} new
   * applications waiting: a further new application is refused and the refusal not kept (once the
   * queue drained, its next view is analysed); a view of an application already waiting is not
   * refused.
   */
  static void queueChecks(Path work) throws Exception {
    Path events = work.resolve("queue-events");
    Files.createDirectories(events);
    String runningId = "app-20260101120000-0201";
    writeEventLog(events.resolve(runningId), runningId, 0);
    SparkProfConfig config = SparkProfConfig.from(conf()::get);
    // Applications without a log: analysed in no time once their turn comes.
    List<String> nowhere = Collections.singletonList(work.resolve("no-events").toUri().toString());
    List<HistoryEventLogAnalysis> waiting = new ArrayList<>();
    SlowFileSystem.gate = new CountDownLatch(1);
    try {
      HistoryEventLogAnalysis running = new HistoryEventLogAnalysis(SlowFileSystem.configured(),
          Collections.singletonList(SlowFileSystem.SCHEME + "://" + events.toUri().getPath()),
          runningId, null, config);
      HistoryEventLogAnalysis.Outcome first = running.view(0);
      // Taken off the queue by the worker only once its read is held: the 8 below all wait.
      long giveUp = System.nanoTime() + 60_000_000_000L;
      while (SlowFileSystem.heldReads.get() == 0 && System.nanoTime() < giveUp) Thread.sleep(10);
      check(first.pending && SlowFileSystem.heldReads.get() == 1,
          "the first analysis runs, its read held: " + first.message);

      List<String> waitingSaid = new ArrayList<>();
      for (int i = 0; i < HistoryEventLogAnalysis.MAX_QUEUED; i++) {
        HistoryEventLogAnalysis next = new HistoryEventLogAnalysis(new Configuration(), nowhere,
            "app-20260101120000-03" + i, null, config);
        waiting.add(next);
        HistoryEventLogAnalysis.Outcome outcome = next.view(0);
        if (!outcome.pending) waitingSaid.add(outcome.message);
      }
      check(waitingSaid.isEmpty(), HistoryEventLogAnalysis.MAX_QUEUED
          + " new applications' analyses wait: " + waitingSaid);
      HistoryEventLogAnalysis ninth = new HistoryEventLogAnalysis(new Configuration(), nowhere,
          "app-20260101120000-0399", null, config);
      HistoryEventLogAnalysis.Outcome refused = ninth.view(0);
      check(!refused.pending && refused.reportJson == null
          && String.valueOf(refused.message).startsWith(HistoryEventLogAnalysis.MAX_QUEUED
              + " event-log analyses are waiting already in this History Server"),
          "a ninth new application is refused: " + refused.message);
      HistoryEventLogAnalysis.Outcome again = waiting.get(0).view(0);
      check(again.pending, "a view of an application already waiting joins its analysis: "
          + again.message);
    } finally {
      SlowFileSystem.gate.countDown();
    }
    // The last waiting analysis done (they run in order): the queue is empty.
    HistoryEventLogAnalysis.Outcome lastDone = waiting.get(waiting.size() - 1).view(60_000);
    HistoryEventLogAnalysis.Outcome retried = new HistoryEventLogAnalysis(new Configuration(),
        nowhere, "app-20260101120000-0399", null, config).view(60_000);
    check(!lastDone.pending && !retried.pending
        && String.valueOf(retried.message).startsWith(
            "the event log of app-20260101120000-0399 was not found"),
        "the refusal was not kept: the next view of that application is analysed: "
            + retried.message);
  }

  /** {@code bytes} zeros through {@code compressed}'s codec: a file far smaller than that. */
  static long writeZeros(OutputStream compressed, long bytes) throws IOException {
    byte[] zeros = new byte[1 << 16];
    try (OutputStream out = compressed) {
      for (long left = bytes; left > 0; left -= zeros.length) {
        out.write(zeros, 0, (int) Math.min(left, zeros.length));
      }
    }
    return bytes;
  }

  /** The message of the diff's refusal (an IllegalArgumentException is Spark's HTTP 400). */
  static String diffRefusal(Path directory, long maxProfileBytes) {
    HistoryUiSource source = new HistoryUiSource(HistoryUiSource.localFileSystem(),
        new org.apache.hadoop.fs.Path(directory.toUri()),
        Collections.singletonList(directory.toString()), maxProfileBytes);
    try {
      return "drawn: " + new SparkProfUi(source, "history").stageDiff("0", "0", "1", "0").length()
          + " characters";
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  /**
   * HistoryUiSource.MAX_PROFILE_BYTES lowered to 1 MiB: a zstd and a gzip profile of a few bytes
   * that decompress to one byte more are refused while decompressing; one that decompresses to
   * exactly the bound is read whole and handed to the engine (which says it is not a profile).
   */
  static void profileBoundChecks(Path work) throws Exception {
    long bound = 1 << 20;
    for (String name : new String[] {EventLogDirOutputs.PROFILE_ZSTD,
        EventLogDirOutputs.PROFILE_GZIP}) {
      String codec = name.substring(name.lastIndexOf('.') + 1);
      Path over = work.resolve("profile-over-bound-" + codec);
      Path at = work.resolve("profile-at-bound-" + codec);
      for (Path directory : Arrays.asList(over, at)) {
        Files.createDirectories(directory);
        OutputStream file = Files.newOutputStream(directory.resolve(name));
        writeZeros(name.endsWith(".zstd") ? new com.github.luben.zstd.ZstdOutputStream(file)
            : new GZIPOutputStream(file), directory.equals(over) ? bound + 1 : bound);
      }
      long compressed = Files.size(over.resolve(name));
      String refused = diffRefusal(over, bound);
      check(compressed * 100 < bound && refused.equals(over.resolve(name) + " decompresses to "
          + "more than " + bound + " bytes; not read here (`sparkprof flamegraph` draws it)"),
          name + " of " + compressed + " bytes decompressing past the bound is not read: "
              + refused);
      String read = diffRefusal(at, bound);
      check(!read.contains("decompresses to more than") && read.contains(at.resolve(name)
          .toString()), name + " decompressing to exactly the bound is read whole: " + read);
    }
  }
}
