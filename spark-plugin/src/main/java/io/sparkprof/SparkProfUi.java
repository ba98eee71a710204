package io.sparkprof;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The "sparkprof" tab's content, free of any servlet API: Spark 3.5 serves it through {@code
 * javax.servlet} and Jetty 9, Spark 4 through {@code jakarta.servlet} and Jetty 12, and {@link
 * SparkUiAttachment} is the only class that touches either (by reflection). Three resources under
 * the tab's path, all computed when asked and never before:
 *
 * <ul>
 *   <li>{@code sparkprof/}: the page (its script and style from this jar's resources); the script
 *       fetches the two below by relative URLs, so the tab works behind Spark's UI proxy ({@code
 *       spark.ui.proxyBase}, YARN's and Kubernetes' proxies) like Spark's own pages;
 *   <li>{@code sparkprof/data/}: the {@code sparkprof.ui/v1} JSON of the {@link Source};
 *   <li>{@code sparkprof/flamegraph/?stage=N&attempt=M}: a stage attempt's flame graph page;
 *   <li>{@code sparkprof/diff/?before=N&beforeAttempt=M&after=N&afterAttempt=M}: the
 *       differential flame graph of two stage attempts.
 * </ul>
 */
final class SparkProfUi {
  /** Where the tab's figures come from: the live driver, or files in the History Server. */
  interface Source {
    /** The {@code sparkprof.ui/v1} document, computed now. */
    String dataJson();

    /** The stage attempt's flame graph page, or null when there is none. */
    String flameGraphHtml(int stageId, int stageAttempt);

    /**
     * The differential flame graph page of two stage attempts ({@code after}'s call tree coloured
     * by the change from {@code before}'s). Throws IllegalArgumentException with the reason when
     * it cannot be drawn (no samples of one, no profile).
     */
    String stageDiffHtml(int beforeStage, int beforeAttempt, int afterStage, int afterAttempt);
  }

  /** The tab's path under the UI's base path, and its title in Spark's header. */
  static final String PREFIX = "sparkprof";

  private final Source source;
  private final String mode;

  /** {@code mode}: "live" or "history", written into the page for its script. */
  SparkProfUi(Source source, String mode) {
    this.source = source;
    this.mode = mode;
  }

  /** The page's body: a root element, the style and the script (which fetches data/). */
  String pageBody() {
    return "<div id=\"sparkprof-root\" data-mode=\"" + mode + "\">"
        + "<p id=\"sparkprof-loading\">Loading sparkprof's figures...</p></div>\n"
        + "<style>" + resource("tab.css") + "</style>\n"
        + "<script>" + resource("tab.js") + "</script>\n";
  }

  /** The whole page, for a UI whose header cannot be drawn (Spark's helper not found). */
  String standalonePage(String title) {
    return "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + escapeHtml(title)
        + "</title></head><body><h3>" + escapeHtml(title) + "</h3>" + pageBody()
        + "</body></html>";
  }

  String dataJson() {
    return source.dataJson();
  }

  /**
   * The flame graph of {@code ?stage=N&attempt=M}. Throws IllegalArgumentException (Spark's
   * servlet answers 400 with its message) for a bad parameter or a stage attempt without samples.
   */
  String flameGraph(String stageParameter, String attemptParameter) {
    int stage = parseId("stage", stageParameter);
    int attempt = attemptParameter == null || attemptParameter.isEmpty()
        ? 0 : parseId("attempt", attemptParameter);
    String html = source.flameGraphHtml(stage, attempt);
    if (html == null) {
      throw new IllegalArgumentException("no sparkprof samples for stage " + stage
          + " attempt " + attempt);
    }
    return html;
  }

  /**
   * The diff page of {@code ?before=N&beforeAttempt=M&after=N&afterAttempt=M} (attempts default
   * to 0). Throws IllegalArgumentException (HTTP 400 with its message) for a bad parameter or a
   * diff that cannot be drawn.
   */
  String stageDiff(String before, String beforeAttempt, String after, String afterAttempt) {
    return source.stageDiffHtml(parseId("before", before), parseAttempt("beforeAttempt",
        beforeAttempt), parseId("after", after), parseAttempt("afterAttempt", afterAttempt));
  }

  private static int parseAttempt(String name, String value) {
    return value == null || value.isEmpty() ? 0 : parseId(name, value);
  }

  private static int parseId(String name, String value) {
    try {
      int id = Integer.parseInt(value == null ? "" : value.trim());
      if (id >= 0) return id;
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException("parameter " + name + " must be a stage (attempt) id");
  }

  private static volatile String css;
  private static volatile String js;

  /** A text resource of this jar, read once. */
  static String resource(String name) {
    String cached = "tab.css".equals(name) ? css : js;
    if (cached != null) return cached;
    try (InputStream in = SparkProfUi.class.getResourceAsStream("/io/sparkprof/ui/" + name)) {
      if (in == null) return "";
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      for (int n; (n = in.read(buffer)) > 0;) bytes.write(buffer, 0, n);
      String text = new String(bytes.toByteArray(), StandardCharsets.UTF_8);
      // Inside <script>/<style>: a closing tag in the text would end the element early. In the
      // script every "</" is inside a string literal (tab.js writes no regular expression with
      // one), where "<\\/" means the same.
      text = text.replace("</", "<\\/");
      if ("tab.css".equals(name)) css = text; else js = text;
      return text;
    } catch (IOException e) {
      return "";
    }
  }

  static String escapeHtml(String text) {
    StringBuilder out = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '<': out.append("&lt;"); break;
        case '>': out.append("&gt;"); break;
        case '&': out.append("&amp;"); break;
        case '"': out.append("&quot;"); break;
        case '\'': out.append("&#39;"); break;
        default: out.append(c);
      }
    }
    return out.toString();
  }
}
