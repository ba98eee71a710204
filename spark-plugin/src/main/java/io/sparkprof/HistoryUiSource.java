package io.sparkprof;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One finished application's sparkprof outputs for the History Server's tab: the directory the
 * driver wrote ({@code <spark.sparkprof.outputDir>/<appId>/}: report.json and {@code
 * stage-<id>-attempt-<n>.html}), read when a page asks. Without a directory the tab says that
 * this application has no sparkprof profile, and where it looked.
 */
final class HistoryUiSource implements SparkProfUi.Source {
  /** report.json files larger than this are not served (the tab says so). */
  static final long MAX_REPORT_BYTES = 256L << 20;

  private static final Pattern FLAME_GRAPH = Pattern.compile("stage-(\\d+)-attempt-(\\d+)\\.html");

  private final File directory;  // null: no profile found
  private final List<String> searched;

  HistoryUiSource(File directory, List<String> searched) {
    this.directory = directory;
    this.searched = searched;
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
    if (directory == null) {
      message = "no sparkprof profile for this application";
    } else {
      File[] files = directory.listFiles();
      boolean first = true;
      if (files != null) {
        for (File file : files) {
          Matcher matcher = FLAME_GRAPH.matcher(file.getName());
          if (!matcher.matches()) continue;
          if (!first) json.append(',');
          first = false;
          json.append("{\"stage_id\":").append(matcher.group(1)).append(",\"attempt\":")
              .append(matcher.group(2)).append('}');
        }
      }
      File reportFile = new File(directory, "report.json");
      if (reportFile.length() > MAX_REPORT_BYTES) {
        message = "report.json is larger than " + MAX_REPORT_BYTES + " bytes; not shown";
      } else if (reportFile.isFile()) {
        try {
          report = new String(Files.readAllBytes(reportFile.toPath()), StandardCharsets.UTF_8);
        } catch (IOException e) {
          message = "cannot read " + reportFile + ": " + e.getMessage();
        }
      } else {
        message = "no report.json in " + directory + " (the driver writes it at the end)";
      }
    }
    json.append("],\"directory\":");
    if (directory == null) json.append("null"); else appendString(json, directory.getPath());
    if (message != null) {
      json.append(",\"message\":");
      appendString(json, message);
    }
    json.append(",\"report\":").append(report == null || report.trim().isEmpty() ? "null" : report);
    return json.append('}').toString();
  }

  @Override
  public String flameGraphHtml(int stageId, int stageAttempt) {
    if (directory == null) return null;
    File file = new File(directory, "stage-" + stageId + "-attempt-" + stageAttempt + ".html");
    if (!file.isFile() || file.length() > MAX_REPORT_BYTES) return null;
    try {
      return new String(Files.readAllBytes(file.toPath()), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return null;
    }
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
