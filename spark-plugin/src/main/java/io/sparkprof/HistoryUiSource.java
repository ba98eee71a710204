package io.sparkprof;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * One finished application's sparkprof outputs for the History Server's tab: the folder the
 * driver stored beside the event log ({@code <spark.eventLog.dir>/<appId>.sparkprof/}, any
 * Hadoop file system) or its local directory ({@code <spark.sparkprof.outputDir>/<appId>/}):
 * report.json and {@code stage-<id>-attempt-<n>.html}, read through Hadoop's FileSystem when a
 * page asks. Without a directory the tab says that no profile was stored for this run, where it
 * looked, and shows the analysis of the application's event log alone ({@link
 * HistoryEventLogAnalysis}).
 */
final class HistoryUiSource implements SparkProfUi.Source {
  /** report.json files larger than this are not served (the tab says so). */
  static final long MAX_REPORT_BYTES = 256L << 20;

  private static final Pattern FLAME_GRAPH = Pattern.compile("stage-(\\d+)-attempt-(\\d+)\\.html");

  /** What the tab says of an application without a profile. */
  static final String NO_PROFILE = "no sparkprof profile was stored for this run";
  /** Longest a page's data/ request waits for the event log's analysis before "pending". */
  static final long EVENT_LOG_WAIT_MS = 3000;

  private final FileSystem fs;  // null: no profile found
  private final Path directory;  // null: no profile found
  private final List<String> searched;
  private final HistoryEventLogAnalysis eventLog;  // without a profile; null: none
  private final boolean keepDiffs;  // false: the profile may still grow (the live driver's copy)
  private final long maxProfileBytes;

  HistoryUiSource(FileSystem fs, Path directory, List<String> searched,
      HistoryEventLogAnalysis eventLog) {
    this(fs, directory, searched, eventLog, true, MAX_PROFILE_BYTES);
  }

  /**
   * With a lower bound than {@link #MAX_PROFILE_BYTES}, so that a test reaches it with a small
   * file rather than 256 MiB in memory.
   */
  HistoryUiSource(FileSystem fs, Path directory, List<String> searched, long maxProfileBytes) {
    this(fs, directory, searched, null, true, maxProfileBytes);
  }

  private HistoryUiSource(FileSystem fs, Path directory, List<String> searched,
      HistoryEventLogAnalysis eventLog, boolean keepDiffs, long maxProfileBytes) {
    this.fs = directory == null ? null : fs;
    this.directory = fs == null ? null : directory;
    this.searched = searched;
    this.eventLog = eventLog;
    this.keepDiffs = keepDiffs;
    this.maxProfileBytes = maxProfileBytes;
  }

  /**
   * The live driver's own output directory (its working copy, still written), or null: its files
   * for what the driver no longer keeps in memory; diffs drawn from it are not kept.
   */
  HistoryUiSource(File directory, List<String> searched) {
    this(directory == null ? null : localFileSystem(), directory == null ? null
        : new Path(directory.getAbsoluteFile().toURI()), searched, null, false,
        MAX_PROFILE_BYTES);
  }

  /** Hadoop's raw local file system (no checksum files), or null when Hadoop is missing. */
  static FileSystem localFileSystem() {
    try {
      return FileSystem.getLocal(new Configuration()).getRaw();
    } catch (IOException | RuntimeException | LinkageError e) {
      return null;
    }
  }

  /**
   * Whether a folder holds the driver's outputs: report.json or a stage flame graph. False when
   * it cannot be read.
   */
  static boolean hasOutputs(FileSystem fs, Path directory) {
    try {
      if (fileStatus(fs, new Path(directory, "report.json")) != null) return true;
      for (FileStatus status : fs.listStatus(directory)) {
        if (FLAME_GRAPH.matcher(status.getPath().getName()).matches()) return true;
      }
    } catch (IOException | RuntimeException e) {
      // not there, or not readable: not this folder
    }
    return false;
  }

  /** The file's status, or null when it is not there or not a file. */
  static FileStatus fileStatus(FileSystem fs, Path path) throws IOException {
    try {
      FileStatus status = fs.getFileStatus(path);
      return status.isFile() ? status : null;
    } catch (java.io.FileNotFoundException e) {
      return null;
    }
  }

  /** The file's bytes as UTF-8 text, or null when missing or larger than {@code maxBytes}. */
  private String read(String name, long maxBytes) throws IOException {
    Path path = new Path(directory, name);
    FileStatus status = fileStatus(fs, path);
    if (status == null || status.getLen() > maxBytes) return null;
    ByteArrayOutputStream bytes =
        new ByteArrayOutputStream((int) Math.min(status.getLen(), 1 << 20));
    try (InputStream in = fs.open(path)) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        if (bytes.size() + n > maxBytes) return null;
        bytes.write(buffer, 0, n);
      }
    }
    return new String(bytes.toByteArray(), StandardCharsets.UTF_8);
  }

  @Override
  public String dataJson() {
    StringBuilder json = new StringBuilder();
    json.append("{\"schema\":\"sparkprof.ui/v1\",\"source\":\"history\",\"searched\":[");
    for (int i = 0; i < searched.size(); i++) {
      if (i > 0) json.append(',');
      appendString(json, searched.get(i));
    }
    json.append("],\"profiled_stages\":[");
    String report = null;
    String message = null;
    String reportSource = "profile";
    HistoryEventLogAnalysis.Outcome analysed = null;
    if (directory == null) {
      message = NO_PROFILE;
      reportSource = "none";
      if (eventLog != null) {
        analysed = eventLog.view(EVENT_LOG_WAIT_MS);
        report = analysed.reportJson;
        reportSource = "event_log";
      }
    } else {
      FileStatus[] files;
      try {
        files = fs.listStatus(directory);
      } catch (IOException | RuntimeException e) {
        files = new FileStatus[0];
        message = "cannot list " + directory + ": " + e.getMessage();
      }
      boolean first = true;
      for (FileStatus file : files) {
        Matcher matcher = FLAME_GRAPH.matcher(file.getPath().getName());
        if (!matcher.matches()) continue;
        if (!first) json.append(',');
        first = false;
        json.append("{\"stage_id\":").append(matcher.group(1)).append(",\"attempt\":")
            .append(matcher.group(2)).append('}');
      }
      Path reportFile = new Path(directory, "report.json");
      try {
        FileStatus status = fileStatus(fs, reportFile);
        if (status == null) {
          if (message == null) {
            message = "no report.json in " + directory + " (the driver writes it at the end)";
          }
        } else if (status.getLen() > MAX_REPORT_BYTES) {
          message = "report.json is larger than " + MAX_REPORT_BYTES + " bytes; not shown";
        } else {
          report = read("report.json", MAX_REPORT_BYTES);
        }
      } catch (IOException | RuntimeException e) {
        message = "cannot read " + reportFile + ": " + e.getMessage();
      }
    }
    json.append("],\"directory\":");
    if (directory == null) json.append("null"); else appendString(json, displayed(directory));
    if (message != null) {
      json.append(",\"message\":");
      appendString(json, message);
    }
    json.append(",\"report_source\":\"").append(reportSource).append('"');
    if (analysed != null) {
      json.append(",\"pending\":").append(analysed.pending);
      json.append(",\"event_log\":");
      if (analysed.eventLog == null) json.append("null"); else appendString(json, analysed.eventLog);
      json.append(",\"event_log_bytes\":").append(analysed.decodedBytes);
      json.append(",\"analysis_ms\":").append(analysed.analysisMs);
      if (analysed.message != null) {
        json.append(",\"event_log_message\":");
        appendString(json, analysed.message);
      }
    }
    json.append(",\"report\":").append(report == null || report.trim().isEmpty() ? "null" : report);
    return json.append('}').toString();
  }

  /** A local folder as a plain path (as before), any other as its URI. */
  static String displayed(Path path) {
    java.net.URI uri = path.toUri();
    return "file".equals(uri.getScheme()) ? uri.getPath() : path.toString();
  }

  @Override
  public String flameGraphHtml(int stageId, int stageAttempt) {
    if (directory == null) return null;
    try {
      return read("stage-" + stageId + "-attempt-" + stageAttempt + ".html", MAX_REPORT_BYTES);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Decompressed profiles larger than this are not read for a diff (the page says so). */
  static final long MAX_PROFILE_BYTES = 256L << 20;
  private static final int MAX_KEPT_DIFFS = 16;
  // The last diff pages drawn (a second view of one costs nothing), least recently viewed first.
  private static final Map<String, String> DIFFS = new LinkedHashMap<String, String>(16, 0.75f,
      true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
      return size() > MAX_KEPT_DIFFS;
    }
  };

  /**
   * From the profile the driver stored ({@code profile.sparkprof.zstd}, {@code .gz}, or the
   * working copy's {@code profile.sparkprof}), decompressed into memory up to {@link
   * #MAX_PROFILE_BYTES} (unless a test lowered it), by the engine ({@link
   * NativeAggregator#profileStageDiffHtml}).
   */
  @Override
  public String stageDiffHtml(int beforeStage, int beforeAttempt, int afterStage,
      int afterAttempt) {
    if (directory == null) {
      throw new IllegalArgumentException(NO_PROFILE + ": no diff of stages without one");
    }
    String key = directory + "/" + beforeStage + "." + beforeAttempt + "/" + afterStage + "."
        + afterAttempt;
    if (keepDiffs) {
      synchronized (DIFFS) {
        String kept = DIFFS.get(key);
        if (kept != null) return kept;
      }
    }
    String unavailable = NativeLibraries.loadDriverLibraryFromJar();
    if (unavailable != null) {
      throw new IllegalArgumentException("no diff in this History Server: " + unavailable);
    }
    Path profile = null;
    for (String name : new String[] {EventLogDirOutputs.PROFILE_ZSTD,
        EventLogDirOutputs.PROFILE_GZIP, "profile.sparkprof"}) {
      try {
        if (fileStatus(fs, new Path(directory, name)) != null) {
          profile = new Path(directory, name);
          break;
        }
      } catch (IOException | RuntimeException e) {
        // next name
      }
    }
    if (profile == null) {
      throw new IllegalArgumentException("no profile in " + displayed(directory)
          + " (the driver stores profile.sparkprof.zstd beside the event log)");
    }
    String name = profile.getName();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(1 << 20);
    try (InputStream raw = fs.open(profile);
        InputStream in = name.endsWith(".zstd") ? new com.github.luben.zstd.ZstdInputStream(raw)
            : name.endsWith(".gz") ? new java.util.zip.GZIPInputStream(raw) : raw) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        if (bytes.size() + n > maxProfileBytes) {
          throw new IllegalArgumentException(displayed(profile) + " decompresses to more than "
              + maxProfileBytes + " bytes; not read here (`sparkprof flamegraph` draws it)");
        }
        bytes.write(buffer, 0, n);
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + displayed(profile) + ": " + e);
    }
    byte[] data = bytes.toByteArray();
    String html = NativeAggregator.profileStageDiffHtml(data, data.length, displayed(profile),
        beforeStage, beforeAttempt, afterStage, afterAttempt);
    if (keepDiffs) {
      synchronized (DIFFS) {
        DIFFS.put(key, html);
      }
    }
    return html;
  }

  /** A JSON string of {@code text} (quotes, backslashes and control characters escaped). */
  static void appendString(StringBuilder out, String text) {
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    out.append('"');
  }
}
