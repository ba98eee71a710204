package io.sparkprof;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPOutputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;

/**
 * An application's sparkprof outputs stored beside its event log: {@code
 * <spark.eventLog.dir>/<appId>[_<attemptId>].sparkprof/}, written through Hadoop's FileSystem as
 * Spark's event logger writes the log (any scheme the Hadoop configuration serves), so the
 * History Server's tab, {@code sparkprof analyze --profile} and the collectors find the profile
 * where they find the log. See docs/spark-ui.md ("Profiles beside the event log").
 *
 * <p>The folder's name is Spark's own name for the application's event log (its {@code
 * nameForAppAndAttempt}: id and attempt, lower-cased, {@code [ :/]} to {@code -}, {@code
 * [.${}'"]} to {@code _}) plus {@code .sparkprof}. Spark's History Server lists {@code
 * spark.eventLog.dir} and reads a plain file as one event log and a directory only when it is
 * named {@code eventlog_v2_*} (a rolling log): this directory is skipped, without a log line and
 * without an application in the listing.
 *
 * <p>Each file is written to a hidden temporary name in the folder ({@code .<name>.<uuid>.tmp})
 * and renamed when complete, so a reader sees a whole file or none (on object stores, where a
 * rename is a copy, the new object appears whole when the copy ends); {@code report.json} is
 * written last, so its presence says the folder is complete. The profile is zstd-compressed
 * (Spark's own codec library, as Spark's {@code .zstd} event logs; gzip when zstd-jni is
 * missing), the HTML and text files are stored as they are. The total is bounded ({@code
 * spark.sparkprof.besideEventLog.maxBytes}). Nothing here throws: a failure is one log line and
 * the local outputs stay.
 */
final class EventLogDirOutputs {
  /** The folder's suffix, after Spark's name for the application's event log. */
  static final String SUFFIX = ".sparkprof";
  /** The profile as stored here (the local working copy is {@code profile.sparkprof}). */
  static final String PROFILE_ZSTD = "profile.sparkprof.zstd";

  static final String PROFILE_GZIP = "profile.sparkprof.gz";
  private static final String PROFILE = "profile.sparkprof";
  private static final String REPORT_JSON = "report.json";
  private static final List<String> REPORTS_FIRST =
      Arrays.asList(REPORT_JSON, "report.html", "report.md", "report.txt");
  private static final Pattern FLAME_GRAPH = Pattern.compile("stage-(\\d+)-attempt-(\\d+)\\.html");

  private EventLogDirOutputs() {}

  /** Spark's {@code Utils.sanitizeDirName}, and any other character outside [a-z0-9._-] as _. */
  static String sparkLogName(String text) {
    return sanitizeDirName(text).replaceAll("[^a-z0-9._-]", "_");
  }

  /** Spark's {@code Utils.sanitizeDirName}. */
  private static String sanitizeDirName(String text) {
    return text.replaceAll("[ :/]", "-").replaceAll("[.${}'\"]", "_").toLowerCase(Locale.ROOT);
  }

  /**
   * Spark's own name for the application attempt's event log ({@code
   * EventLogFileWriter.nameForAppAndAttempt}), without codec or in-progress suffix.
   */
  static String eventLogName(String appId, String attemptId) {
    String base = sanitizeDirName(appId);
    return attemptId == null || attemptId.isEmpty() ? base : base + "_" + sanitizeDirName(attemptId);
  }

  /** The folder's name for an application attempt (attempt null or empty: none). */
  static String folderName(String appId, String attemptId) {
    String base = sparkLogName(appId == null || appId.isEmpty() ? "unknown-application" : appId);
    if (attemptId != null && !attemptId.isEmpty()) base += "_" + sparkLogName(attemptId);
    return base + SUFFIX;
  }

  /**
   * The event-log directory as Spark's event logger resolves it ({@code Utils.resolveURI}): a
   * URI with a scheme as it is, a bare path as a local {@code file:} path (not the default file
   * system); null for an empty value.
   */
  static URI resolveDirectory(String eventLogDir) {
    if (eventLogDir == null) return null;
    String trimmed = eventLogDir.trim();
    while (trimmed.length() > 1 && trimmed.endsWith("/")) {
      trimmed = trimmed.substring(0, trimmed.length() - 1);
    }
    if (trimmed.isEmpty()) return null;
    try {
      URI uri = new URI(trimmed);
      if (uri.getScheme() != null) return uri;
    } catch (URISyntaxException e) {
      // a local path with characters a URI does not allow: below
    }
    return new File(trimmed).getAbsoluteFile().toURI();
  }

  /** The folder beside the event log in {@code eventLogDir}, or null without a directory. */
  static Path folder(String eventLogDir, String appId, String attemptId) {
    URI directory = resolveDirectory(eventLogDir);
    if (directory == null) return null;
    return new Path(new Path(directory), folderName(appId, attemptId));
  }

  /**
   * The file system serving {@code path}: Hadoop's cached instance (shared with Spark's event
   * logger, so never closed here); for local paths the raw one, as Spark's event logger writes
   * local logs (no {@code .crc} files beside them).
   */
  static FileSystem fileSystem(Path path, Configuration conf) throws IOException {
    FileSystem fs = path.getFileSystem(conf);
    if (fs instanceof LocalFileSystem) return ((LocalFileSystem) fs).getRaw();
    return fs;
  }

  /** What one {@link #store} did. */
  static final class Outcome {
    final List<String> stored = new ArrayList<>();
    final List<String> leftOut = new ArrayList<>();  // past the size bound
    long bytes;
    String failure;  // null when every chosen file was stored

    @Override
    public String toString() {
      return stored.size() + " files, " + bytes + " bytes"
          + (leftOut.isEmpty() ? "" : ", left out past the size bound: " + leftOut)
          + (failure == null ? "" : ", failed: " + failure);
    }
  }

  /**
   * Copies the outputs in {@code local} (the driver's working copy) into {@code target}: the
   * reports, the profile compressed, the stage flame graphs by stage, while the total stays
   * within {@code maxBytes}; each file atomically, {@code report.json} last. Never throws.
   */
  static Outcome store(File local, Path target, Configuration conf, long maxBytes) {
    Outcome outcome = new Outcome();
    try {
      List<File> chosen = new ArrayList<>();
      for (String name : REPORTS_FIRST) {
        File file = new File(local, name);
        if (file.isFile()) chosen.add(file);
      }
      File profile = new File(local, PROFILE);
      if (profile.isFile()) chosen.add(profile);
      File[] files = local.listFiles();
      List<File> flameGraphs = new ArrayList<>();
      for (File file : files == null ? new File[0] : files) {
        if (file.isFile() && FLAME_GRAPH.matcher(file.getName()).matches()) flameGraphs.add(file);
      }
      flameGraphs.sort((a, b) -> Long.compare(stageOrder(a.getName()), stageOrder(b.getName())));
      chosen.addAll(flameGraphs);
      if (chosen.isEmpty()) {
        outcome.failure = "no outputs in " + local;
        return outcome;
      }
      FileSystem fs = fileSystem(target, conf);
      if (!fs.mkdirs(target)) throw new IOException("cannot create " + target);
      File reportJson = null;
      long budget = maxBytes;
      for (File file : chosen) {
        if (file.getName().equals(REPORT_JSON)) {
          // Written last (the folder's completeness marker), but its room is kept first.
          if (file.length() <= budget) {
            reportJson = file;
            budget -= file.length();
          } else {
            outcome.leftOut.add(file.getName());
          }
          continue;
        }
        long written = file == profile ? storeCompressed(fs, file, target, budget)
            : storeAsIs(fs, file, target, budget);
        if (written < 0) {
          outcome.leftOut.add(file.getName());
          continue;
        }
        budget -= written;
        outcome.bytes += written;
        outcome.stored.add(file == profile ? profileName() : file.getName());
      }
      if (reportJson != null) {
        long written = storeAsIs(fs, reportJson, target, Long.MAX_VALUE);
        outcome.bytes += written;
        outcome.stored.add(REPORT_JSON);
      }
    } catch (IOException | RuntimeException | LinkageError e) {
      outcome.failure = e.toString();
    }
    return outcome;
  }

  private static long stageOrder(String name) {
    Matcher matcher = FLAME_GRAPH.matcher(name);
    if (!matcher.matches()) return Long.MAX_VALUE;
    try {
      long attempt = Math.min(999, Long.parseLong(matcher.group(2)));
      return Long.parseLong(matcher.group(1)) * 1000 + attempt;
    } catch (NumberFormatException e) {
      return Long.MAX_VALUE;
    }
  }

  private static volatile Boolean zstdAvailable;

  /** zstd-jni (on Spark's class path since 2.3) present: the profile is stored as .zstd. */
  static boolean zstdAvailable() {
    Boolean known = zstdAvailable;
    if (known == null) {
      try {
        Class.forName("com.github.luben.zstd.ZstdOutputStream", false,
            EventLogDirOutputs.class.getClassLoader());
        new com.github.luben.zstd.ZstdOutputStream(new java.io.ByteArrayOutputStream()).close();
        known = true;
      } catch (ClassNotFoundException | IOException | RuntimeException | LinkageError e) {
        known = false;
      }
      zstdAvailable = known;
    }
    return known;
  }

  static String profileName() {
    return zstdAvailable() ? PROFILE_ZSTD : PROFILE_GZIP;
  }

  /** The file as it is; -1 when larger than {@code budget} (nothing written). */
  private static long storeAsIs(FileSystem fs, File file, Path target, long budget)
      throws IOException {
    if (file.length() > budget) return -1;
    return writeAtomically(fs, new Path(target, file.getName()), file, false, budget);
  }

  /** The profile compressed; -1 when the compressed bytes pass {@code budget} (nothing left). */
  private static long storeCompressed(FileSystem fs, File file, Path target, long budget)
      throws IOException {
    return writeAtomically(fs, new Path(target, profileName()), file, true, budget);
  }

  /**
   * {@code source} (compressed when asked) into a hidden temporary file beside {@code
   * destination}, then renamed to it. Returns the bytes stored, or -1 when they would pass
   * {@code budget} (the temporary file is deleted). On a failure the temporary file is deleted
   * and the exception passes on.
   */
  static long writeAtomically(FileSystem fs, Path destination, File source, boolean compress,
      long budget) throws IOException {
    Path temporary = new Path(destination.getParent(),
        "." + destination.getName() + "." + UUID.randomUUID() + ".tmp");
    boolean done = false;
    try {
      long stored;
      try (BoundedOutputStream counted = new BoundedOutputStream(fs.create(temporary, true),
          budget)) {
        try (OutputStream out = compress ? compressor(counted) : counted;
            InputStream in = new FileInputStream(source)) {
          byte[] buffer = new byte[1 << 16];
          for (int n; (n = in.read(buffer)) > 0; ) out.write(buffer, 0, n);
        }
        stored = counted.count;
      } catch (BoundedOutputStream.OverBudget e) {
        return -1;
      }
      if (fs.exists(destination)) fs.delete(destination, false);
      if (!fs.rename(temporary, destination)) {
        throw new IOException("cannot rename " + temporary + " to " + destination);
      }
      done = true;
      return stored;
    } finally {
      if (!done) {
        try {
          fs.delete(temporary, false);
        } catch (IOException | RuntimeException e) {
          // the temporary file stays, hidden; the caller reports the first failure
        }
      }
    }
  }

  private static OutputStream compressor(OutputStream out) throws IOException {
    if (zstdAvailable()) {
      // Level 3 (zstd's default): the profile's frames and stacks repeat; ~5-10x smaller.
      return new com.github.luben.zstd.ZstdOutputStream(out, 3);
    }
    return new GZIPOutputStream(out, 1 << 16);
  }

  /** Counts the bytes written and stops (OverBudget) past a bound. */
  static final class BoundedOutputStream extends OutputStream {
    static final class OverBudget extends IOException {
      private static final long serialVersionUID = 1L;

      OverBudget() {
        super("past the size bound");
      }
    }

    private final OutputStream out;
    private final long budget;
    long count;

    BoundedOutputStream(OutputStream out, long budget) {
      this.out = out;
      this.budget = budget;
    }

    @Override
    public void write(int b) throws IOException {
      if (count + 1 > budget) throw new OverBudget();
      out.write(b);
      count++;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      if (count + len > budget) throw new OverBudget();
      out.write(b, off, len);
      count += len;
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }
}
