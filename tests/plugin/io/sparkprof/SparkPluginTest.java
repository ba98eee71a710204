package io.sparkprof;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import io.sparkprof.shaded.io.opentelemetry.sdk.common.CompletableResultCode;
import io.sparkprof.shaded.io.opentelemetry.sdk.trace.data.SpanData;
import io.sparkprof.shaded.io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The plugin inside a real Spark (the distribution's jars on the class path, local mode in this
 * JVM: driver and executor plugin side by side), one mode per run:
 *
 * <ul>
 *   <li>{@code agent WORKDIR} (JVM started with -agentpath): jobs with serialization, compute, a
 *       failing-then-retried task, a SQL query, hostile strings and a secret in the conf; then the
 *       live feed copy must equal Spark's own event log (the forwarded events, line for line),
 *       the secret must be redacted everywhere, batches must arrive with serialization samples,
 *       and the stage flame graphs and the end-of-application reports must be written.
 *   <li>{@code plugin-only WORKDIR} (no -agentpath): the plugin starts the agent and loads the
 *       driver library from its own jar; the same outputs must appear.
 *   <li>{@code disabled WORKDIR}: spark.sparkprof.enabled=false leaves no trace.
 *   <li>{@code compat}: the members SparkCompat resolves by reflection exist on this Spark.
 *   <li>{@code config}: SparkProfConfig parsing.
 *   <li>{@code beside-event-log WORKDIR}: EventLogDirOutputs through this Spark's Hadoop: the
 *       folder's name and place, every file stored atomically (no temporary or checksum file
 *       left, the profile zstd-compressed and whole), the size bound, a second store over the
 *       first, failures (a parent that is a file, a scheme without a file system) as a value,
 *       and the History Server's reading of the folder (HistoryUiSource).
 *   <li>{@code history-limits WORKDIR}: the History Server's bounds past their limits (the
 *       event-log analysis's timeout and queue, a diff's profile size): HistoryLimitsChecks.
 * </ul>
 * Prints "ok"/"FAIL" per check and PASS at the end.
 */
public final class SparkPluginTest {
  /** Quotes, backslashes, control characters, non-ASCII and a surrogate pair. */
  static final String HOSTILE = "q\"uote\\ back\nline\ttab \u0001 caf\u00e9 \u2603 \ud83d\ude00 end";
  static final String SECRET = "hunter2-do-not-log";

  static int failures = 0;

  static void check(boolean condition, String what) {
    System.out.println((condition ? "ok   " : "FAIL ") + what);
    if (!condition) failures++;
  }

  static final class Record implements Serializable {
    private static final long serialVersionUID = 1L;
    final String name;
    final long[] values;
    final Map<String, Integer> attributes = new HashMap<>();

    Record(int i) {
      name = "record-" + i;
      values = new long[16];
      for (int j = 0; j < values.length; j++) values[j] = i * 31L + j;
      for (int j = 0; j < 4; j++) attributes.put("k" + j, i + j);
    }
  }

  /** Java serialization of object graphs for about {@code millis} on the task thread. */
  static long serializationWork(long millis) throws IOException {
    long end = System.nanoTime() + millis * 1_000_000L;
    List<Record> records = new ArrayList<>();
    for (int i = 0; i < 200; i++) records.add(new Record(i));
    long bytesWritten = 0;
    while (System.nanoTime() < end) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        out.writeObject(new ArrayList<>(records));
      }
      bytesWritten += bytes.size();
    }
    return bytesWritten;
  }

  /** Sum of the series {@code name} whose labels contain {@code label} ("" for all). */
  static double metric(String exposition, String name, String label) {
    double sum = 0;
    boolean found = false;
    for (String line : exposition.split("\n")) {
      int space = line.lastIndexOf(' ');
      if (line.startsWith("#") || space < 0) continue;
      String series = line.substring(0, space);
      if ((series.equals(name) || series.startsWith(name + "{")) && series.contains(label)) {
        sum += Double.parseDouble(line.substring(space + 1));
        found = true;
      }
    }
    return found ? sum : Double.NaN;
  }

  static String httpGet(String url) throws IOException {
    HttpURLConnection connection = (HttpURLConnection) new URL(url).openConnection();
    connection.setConnectTimeout(2000);
    connection.setReadTimeout(5000);
    try (InputStream in = connection.getInputStream()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      for (int n; (n = in.read(buffer)) > 0; ) out.write(buffer, 0, n);
      return new String(out.toByteArray(), StandardCharsets.UTF_8);
    }
  }

  static int metricsPort() {
    Matcher port = Pattern.compile("\"port\":(\\d+)").matcher(NativeAggregator.status());
    return port.find() ? Integer.parseInt(port.group(1)) : -1;
  }

  static String read(Path path) throws IOException {
    return new String(Files.readAllBytes(path), StandardCharsets.UTF_8);
  }

  static List<Path> list(Path directory, String glob) throws IOException {
    if (!Files.isDirectory(directory)) return new ArrayList<>();
    try (Stream<Path> files = Files.list(directory)) {
      return files.filter(p -> p.getFileSystem().getPathMatcher("glob:" + glob)
          .matches(p.getFileName())).sorted().collect(Collectors.toList());
    }
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) return;
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
        Files.delete(path);
      }
    }
  }

  static final Pattern EVENT_NAME = Pattern.compile("^\\{\"Event\":\"([^\"]+)\"");

  /** Event-log lines of the events the live feed carries (EventLogLines.forwarded). */
  static List<String> forwardedLines(List<String> eventLog) {
    List<String> kept = new ArrayList<>();
    for (String line : eventLog) {
      Matcher name = EVENT_NAME.matcher(line);
      String event = name.find() ? name.group(1) : "";
      if (event.equals("SparkListenerExecutorMetricsUpdate")
          || event.equals("SparkListenerStageExecutorMetrics")
          || event.equals("SparkListenerBlockUpdated")) {
        continue;
      }
      kept.add(line);
    }
    return kept;
  }

  /** Runs the application; returns its id. */
  static String runApplication(Path work, boolean enabled) throws Exception {
    SparkConf conf = new SparkConf()
        .setMaster("local[2,3]")  // 2 task threads, 3 attempts per task
        .setAppName("sparkprof plugin test " + HOSTILE)
        .set("spark.plugins", "io.sparkprof.SparkProfPlugin")
        .set("spark.ui.enabled", "false")
        .set("spark.sql.shuffle.partitions", "4")
        .set("spark.eventLog.enabled", "true")
        .set("spark.eventLog.dir", work.resolve("eventlog").toUri().toString())
        .set("spark.eventLog.compress", "false")  // Spark 4 compresses with zstd by default
        .set("spark.sparkprof.enabled", Boolean.toString(enabled))
        .set("spark.sparkprof.outputDir", work.resolve("sparkprof").toString())
        .set("spark.sparkprof.prometheus.port", "0")
        .set("spark.sparkprof.flushInterval", "200ms")
        .set("spark.sparkprof.metricsRefreshInterval", "1ms")
        .set("spark.sparkprof.liveEventLog", work.resolve("live.jsonl").toString())
        .set("spark.sparkprof.test.password", SECRET);
    Files.createDirectories(work.resolve("eventlog"));
    SparkSession spark = SparkSession.builder().config(conf).getOrCreate();
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    String appId = sc.sc().applicationId();
    try {
      sc.setJobDescription("serialization " + HOSTILE);
      sc.setLocalProperty("spark.sparkprof.test.password", SECRET);
      long serialized = sc.parallelize(Arrays.asList(1, 2, 3, 4), 4)
          .map(i -> serializationWork(1500)).reduce(Long::sum);
      check(serialized > 0, "serialization job ran");
      sc.setLocalProperty("spark.sparkprof.test.password", null);

      sc.setJobDescription("skewed shuffle");
      JavaRDD<Integer> numbers = sc.parallelize(
          java.util.stream.IntStream.range(0, 200_000).boxed().collect(Collectors.toList()), 4);
      long groups = numbers.mapToPair(i -> new scala.Tuple2<>(i % 10 == 0 ? i % 7 : 0, i))
          .groupByKey(4).count();
      check(groups == 7, "skewed shuffle ran: " + groups + " groups");

      sc.setJobDescription("a task fails once");
      long counted = sc.parallelize(Arrays.asList(1, 2, 3, 4), 2).map(i -> {
        org.apache.spark.TaskContext task = org.apache.spark.TaskContext.get();
        if (i == 3 && task.attemptNumber() == 0) throw new IllegalStateException("planned " + HOSTILE);
        return i;
      }).count();
      check(counted == 4, "retried task's job finished");

      sc.setJobDescription("many small tasks");
      long small = sc.parallelize(java.util.stream.IntStream.range(0, 300).boxed()
          .collect(Collectors.toList()), 300).count();
      check(small == 300, "300 one-record tasks ran");

      sc.setJobDescription(null);
      Dataset<Row> frame = spark.range(0, 100_000).selectExpr("id % 13 AS key", "id AS value")
          .groupBy("key").count();
      check(frame.collectAsList().size() == 13, "SQL aggregation ran");

      scala.collection.immutable.Set<String> queues = spark.sparkContext().listenerBus()
          .activeQueues();
      check(queues.contains(SparkCompat.LISTENER_QUEUE) == enabled,
          "sparkprof's listener is on its own listener-bus queue when enabled: " + queues);

      if (enabled) {
        int port = metricsPort();
        check(port > 0, "metrics endpoint is up: port " + port);
        String metrics = "";
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (port > 0 && System.nanoTime() < deadline) {
          metrics = httpGet("http://127.0.0.1:" + port + "/metrics");
          if (metric(metrics, "spark_task_time_seconds_total", "category=\"serialization\"") > 0) {
            break;
          }
          Thread.sleep(200);
        }
        Files.write(work.resolve("metrics.txt"), metrics.getBytes(StandardCharsets.UTF_8));
        check(metric(metrics, "sparkprof_driver_batches_total", "outcome=\"accepted\"") > 0,
            "the executor's batches reach the driver");
        check(metric(metrics, "spark_task_time_seconds_total", "category=\"serialization\"") > 0.5,
            "serialization time sampled: "
                + metric(metrics, "spark_task_time_seconds_total", "category=\"serialization\"") + " s");
        check(!metrics.contains(SECRET), "no secret in /metrics");
        check(metrics.contains("caf\u00e9 \u2603 \ud83d\ude00 end"),
            "the application name label is valid UTF-8, emoji included");
      }
    } finally {
      spark.stop();
    }
    return appId;
  }

  static void applicationChecks(Path work, String appId) throws IOException {
    List<Path> logs = list(work.resolve("eventlog"), "*");
    check(logs.size() == 1, "Spark wrote one event log: " + logs);
    List<String> eventLog = new ArrayList<>();
    if (Files.isDirectory(logs.get(0))) {  // rolling (Spark 4's default): events_<n>_<app> files
      List<Path> parts = list(logs.get(0), "events_*");
      parts.sort(Comparator.comparingInt(
          p -> Integer.parseInt(p.getFileName().toString().split("_")[1])));
      for (Path part : parts) eventLog.addAll(Files.readAllLines(part, StandardCharsets.UTF_8));
    } else {
      eventLog.addAll(Files.readAllLines(logs.get(0), StandardCharsets.UTF_8));
    }
    List<String> live = Files.readAllLines(work.resolve("live.jsonl"), StandardCharsets.UTF_8);
    List<String> expected = forwardedLines(eventLog);
    check(live.size() > 50, "the live feed carried " + live.size() + " lines");
    int firstDifference = -1;
    int mutableOnly = 0;
    for (int i = 0; i < Math.max(live.size(), expected.size()); i++) {
      String a = i < live.size() ? live.get(i) : "<none>";
      String b = i < expected.size() ? expected.get(i) : "<none>";
      if (a.equals(b)) continue;
      if (equalBeyondMutableFields(a, b)) {
        mutableOnly++;
        continue;
      }
      firstDifference = i;
      System.out.println("  live line " + (i + 1) + ": " + abbreviate(a));
      System.out.println("  event log : " + abbreviate(b));
      break;
    }
    check(firstDifference < 0, "the live feed equals Spark's event log line for line ("
        + expected.size() + " forwarded of " + eventLog.size() + " lines; " + mutableOnly
        + " differ only in TaskInfo/StageInfo fields the scheduler changed while the event was "
        + "queued)");
    String liveText = read(work.resolve("live.jsonl"));
    check(!liveText.contains(SECRET), "the secret conf value is redacted in the live feed");
    check(liveText.contains("caf\u00e9 \u2603 \\uD83D\\uDE00"),
        "non-ASCII text reaches the live model as UTF-8 (Jackson escapes supplementary characters)");

    Path output = work.resolve("sparkprof").resolve(appId);
    for (String report : new String[] {"report.txt", "report.json", "report.md", "report.html"}) {
      Path path = output.resolve(report);
      check(Files.isRegularFile(path) && Files.size(path) > 100, "end report " + report);
      if (Files.isRegularFile(path)) check(!read(path).contains(SECRET), "no secret in " + report);
    }
    if (Files.isRegularFile(output.resolve("report.json"))) {
      String json = read(output.resolve("report.json"));
      check(json.contains("\"" + appId + "\""), "report.json names the application id");
    }
    List<Path> flameGraphs = list(output, "stage-*-attempt-*.html");
    check(flameGraphs.size() >= 3, "stage flame graphs: " + flameGraphs.size());
    Path first = output.resolve("stage-0-attempt-0.html");
    check(Files.isRegularFile(first) && read(first).contains("ObjectOutputStream"),
        "the serialization stage's flame graph shows ObjectOutputStream");
  }

  /**
   * TaskStart, TaskGettingResult, StageSubmitted and JobStart carry Spark's mutable TaskInfo and
   * StageInfo objects, which the scheduler keeps updating (finish time, accumulables, ...) while
   * the event waits in a listener queue; each queue serializes the event when it gets to it, so
   * the event log and the live feed may see different values. Equal when those fields aside.
   */
  static boolean equalBeyondMutableFields(String a, String b) {
    try {
      com.fasterxml.jackson.databind.ObjectMapper mapper =
          new com.fasterxml.jackson.databind.ObjectMapper();
      com.fasterxml.jackson.databind.JsonNode left = mapper.readTree(a);
      com.fasterxml.jackson.databind.JsonNode right = mapper.readTree(b);
      String event = left.path("Event").asText();
      if (!Arrays.asList("SparkListenerTaskStart", "SparkListenerTaskGettingResult",
          "SparkListenerStageSubmitted", "SparkListenerJobStart").contains(event)) {
        return false;
      }
      dropMutable(left);
      dropMutable(right);
      return left.equals(right);
    } catch (IOException e) {
      return false;
    }
  }

  static final List<String> MUTABLE_FIELDS = Arrays.asList("Getting Result Time", "Finish Time",
      "Failed", "Killed", "Accumulables", "Submission Time", "Completion Time", "Failure Reason");

  static void dropMutable(com.fasterxml.jackson.databind.JsonNode node) {
    if (node.isObject()) {
      ((com.fasterxml.jackson.databind.node.ObjectNode) node).remove(MUTABLE_FIELDS);
    }
    for (com.fasterxml.jackson.databind.JsonNode child : node) dropMutable(child);
  }

  static String abbreviate(String line) {
    return line.length() > 400 ? line.substring(0, 400) + "..." : line;
  }

  static void compatChecks() {
    String resolved = SparkCompat.describe();
    boolean spark4 = org.apache.spark.package$.MODULE$.SPARK_VERSION().startsWith("4.");
    check(resolved.equals("jsonOptions=" + spark4 + " redact=true jobStart=true"),
        "SparkCompat resolved the members of this Spark: " + resolved);
    SparkConf conf = new SparkConf(false).set("spark.my.password", SECRET).set("spark.app.name", "x");
    check((SparkCompat.jsonOptions(conf) != null) == spark4,
        "JsonProtocolOptions exactly on Spark 4: " + SparkCompat.jsonOptions(conf));
    Properties properties = new Properties();
    properties.setProperty("spark.my.password", SECRET);
    properties.setProperty("spark.app.name", "x");
    properties.setProperty("spark.job.description", "token " + SECRET);
    Properties redacted = SparkCompat.redactProperties(conf, properties);
    check(SparkCompat.REDACTED.equals(redacted.getProperty("spark.my.password")),
        "a conf key matching spark.redaction.regex is redacted");
    check("x".equals(redacted.getProperty("spark.app.name")), "other conf keys stay");
    check(("token " + SECRET).equals(redacted.getProperty("spark.job.description")),
        "local properties stay, as Spark's event logger leaves them");
    String version = org.apache.spark.package$.MODULE$.SPARK_VERSION();
    String logStart = new EventLogLines(conf).logStart(version);
    check(logStart.equals("{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"" + version
        + "\"}"), "the log start line is Spark's: " + logStart);
  }

  static void configChecks() {
    Map<String, String> values = new HashMap<>();
    SparkProfConfig defaults = SparkProfConfig.from(values::get);
    check(defaults.enabled() && defaults.flushIntervalMs() == 5000
        && defaults.prometheusPort() == 9405 && defaults.prometheusEndpoint().equals("127.0.0.1:9405")
        && defaults.driverSettings().length == 0
        && defaults.liveEventLog().isEmpty() && defaults.problems().isEmpty(), "defaults");
    values.put("spark.sparkprof.flushInterval", "2s");
    values.put("spark.sparkprof.prometheus.port", "-1");
    values.put("spark.sparkprof.maxBatchBytes", "4m");
    values.put("spark.sparkprof.maxProfileFileBytes", "0");
    values.put("spark.sparkprof.enabled", " FALSE ");
    SparkProfConfig set = SparkProfConfig.from(values::get);
    check(set.flushIntervalMs() == 2000 && set.prometheusEndpoint().isEmpty() && !set.enabled()
        && Arrays.asList(set.driverSettings()).equals(Arrays.asList(
            "spark.sparkprof.maxBatchBytes", "4194304", "spark.sparkprof.maxProfileFileBytes", "0"))
        && set.problems().isEmpty(), "values with units: " + Arrays.toString(set.driverSettings()));
    values.put("spark.sparkprof.flushInterval", "soon");
    values.put("spark.sparkprof.prometheus.port", "70000");
    values.put("spark.sparkprof.enabled", "yes");
    SparkProfConfig bad = SparkProfConfig.from(values::get);
    check(bad.flushIntervalMs() == 5000 && bad.enabled()
        && bad.problems().split("; ").length == 3, "bad values use defaults: " + bad.problems());
    check(bad.prometheusPort() == -1 && bad.prometheusEndpoint().isEmpty()
        && bad.problems().contains("spark.sparkprof.prometheus.port=70000 is not valid, using -1 "
            + "(no /metrics endpoint)"),
        "a port that is not one serves no endpoint, said: " + bad.problems());
    values.put("spark.sparkprof.metricsRefreshInterval", "250ms");
    check(Arrays.asList(SparkProfConfig.from(values::get).driverSettings())
        .containsAll(Arrays.asList("spark.sparkprof.metricsRefreshInterval", "250")),
        "metricsRefreshInterval takes a duration, passed on in milliseconds");
    values.put("spark.sparkprof.flushInterval", "10");
    check(SparkProfConfig.from(values::get).flushIntervalMs() == 100,
        "a bare number is milliseconds, clamped to 100 ms");
    values.put("spark.sparkprof.ingestQueue.maxBatches", "64");
    values.put("spark.sparkprof.ingestQueue.maxBytes", "32m");
    SparkProfConfig queue = SparkProfConfig.from(values::get);
    check(Arrays.asList(queue.driverSettings()).containsAll(Arrays.asList(
        "spark.sparkprof.ingestQueue.maxBatches", "64", "spark.sparkprof.ingestQueue.maxBytes",
        "33554432")), "ingestQueue.maxBatches and maxBytes are passed on");
    // The native side owns the ranges and defaults (driver_settings_test): a value Spark's parser
    // refuses goes there as given, to be refused with the default named.
    values.put("spark.sparkprof.ingestQueue.maxBatches", "100000");
    values.put("spark.sparkprof.ingestQueue.maxBytes", "lots");
    SparkProfConfig badQueue = SparkProfConfig.from(values::get);
    check(Arrays.asList(badQueue.driverSettings()).containsAll(Arrays.asList(
        "spark.sparkprof.ingestQueue.maxBatches", "100000", "spark.sparkprof.ingestQueue.maxBytes",
        "lots")) && !badQueue.problems().contains("ingestQueue"),
        "driver limits are checked natively: " + Arrays.toString(badQueue.driverSettings()));
    values.remove("spark.sparkprof.ingestQueue.maxBatches");
    values.remove("spark.sparkprof.ingestQueue.maxBytes");
    SparkConf sparkConf = new SparkConf(false).set(SparkProfConfig.FLUSH_INTERVAL, "3s");
    check(SparkProfConfig.from(sparkConf).flushIntervalMs() == 3000, "read from a real SparkConf");
    unitChecks();
    check(defaults.driverEnabled() && !SparkProfConfig.from(
        Collections.singletonMap(SparkProfConfig.DRIVER_ENABLED, "false")::get).driverEnabled(),
        "spark.sparkprof.driver.enabled: on by default, can be turned off");
    // The workers' interpreter: the driver's choice (conf, then its PYSPARK_PYTHON, then python3)
    // wins over the executor's own environment.
    SparkConf python = new SparkConf(false);
    check(PythonWorkerProfiling.driverChoice(python, null).equals("python3")
        && PythonWorkerProfiling.driverChoice(python, "/opt/venv/bin/python")
            .equals("/opt/venv/bin/python")
        && PythonWorkerProfiling.driverChoice(python.set("spark.pyspark.python", "/conf/python"),
            "/opt/venv/bin/python").equals("/conf/python")
        && PythonWorkerProfiling.pythonExecutable(new SparkConf(false), "/from/driver")
            .equals("/from/driver"), "the workers' interpreter is the driver's choice");
    otelConfigChecks();
  }

  /** Durations and sizes in Spark's own syntax; a bare number keeps each key's unit. */
  static void unitChecks() {
    SparkProfConfig units = SparkProfConfig.from(conf(
        "flushInterval", "1min", "finalBatchTimeout", "2min", "python.interval", "20ms",
        "otel.exportTimeout", "1m", "otel.jobSpansInterval", "1h", "maxBatchBytes", "1gb",
        "ingestQueue.maxBytes", "512k", "maxProfileFileBytes", "1048576",
        "metricsRefreshInterval", "2min")::get);
    check(units.problems().isEmpty() && units.flushIntervalMs() == 60_000
        && units.finalBatchTimeoutMs() == 120_000 && units.pythonIntervalMs() == 20
        && units.otelExportTimeoutMs() == 60_000 && units.otelJobSpansIntervalMs() == 3_600_000
        && Arrays.asList(units.driverSettings()).equals(Arrays.asList(
            "spark.sparkprof.maxBatchBytes", "1073741824",
            "spark.sparkprof.maxProfileFileBytes", "1048576",
            "spark.sparkprof.metricsRefreshInterval", "120000",
            "spark.sparkprof.ingestQueue.maxBytes", "524288")),
        "Spark's units are accepted: " + units.problems() + " "
            + Arrays.toString(units.driverSettings()));
    SparkProfConfig history = SparkProfConfig.from(conf("history.maxEventLogBytes", "64m",
        "history.analysisTimeout", "30s")::get);
    SparkProfConfig historyDefaults = SparkProfConfig.from(conf()::get);
    check(history.problems().isEmpty() && history.historyMaxEventLogBytes() == 64L << 20
        && history.historyAnalysisTimeoutMs() == 30_000
        && historyDefaults.historyMaxEventLogBytes() == 2L << 30
        && historyDefaults.historyAnalysisTimeoutMs() == 120_000,
        "the History Server's event-log analysis bounds: Spark's units, defaults 2g and 2min");
    stagePageLinkChecks();
    SparkProfConfig bare = SparkProfConfig.from(conf("flushInterval", "1500",
        "python.interval", "5", "otel.exportTimeout", "2 fortnights")::get);
    check(bare.flushIntervalMs() == 1500 && bare.pythonIntervalMs() == 5
        && bare.otelExportTimeoutMs() == 10_000
        && bare.problems().equals("spark.sparkprof.otel.exportTimeout=2 fortnights is not valid, "
            + "using 10000ms"), "a bare number keeps its unit; an unknown unit is said: "
            + bare.problems());
  }

  /** The link Spark's stage page gets (StagePageLinks), on pages as Spark draws them. */
  static void stagePageLinkChecks() {
    // The title's text in <title> too, and Spark 4.2's hidden "Loading..." h3 first.
    String page = "<html><title>app - Details for Stage 7 (Attempt 1)</title><body>"
        + "<h3 class=\"mt-2\">Loading...</h3>"
        + "<h3 style=\"x\">Details for Stage 7 (Attempt 1)</h3><div>t</div>";
    String linked = StagePageLinks.withLink(page, "7", "1");
    check(linked.equals("<html><title>app - Details for Stage 7 (Attempt 1)</title><body>"
        + "<h3 class=\"mt-2\">Loading...</h3>"
        + "<h3 style=\"x\">Details for Stage 7 (Attempt 1)</h3>"
        + "<p id=\"sparkprof-stage-link\"><a href=\"../../sparkprof/?stage=7&amp;attempt=1\">"
        + "sparkprof: this stage's flame graph, findings and diff</a></p><div>t</div>"),
        "the stage page links to the tab's graph of that attempt, relatively: " + linked);
    check(StagePageLinks.withLink(page, "7\"><script>", "0").equals(page)
        && StagePageLinks.withLink(page, "7", "x").equals(page)
        && StagePageLinks.withLink("<p>no title</p>", "7", "0").equals("<p>no title</p>"),
        "ids that are not numbers, or a page without its title: the page unchanged");
  }

  /** spark.sparkprof.KEY, VALUE, ... as a map (keys without their prefix). */
  static Map<String, String> conf(String... keyValues) {
    Map<String, String> values = new HashMap<>();
    for (int i = 0; i + 1 < keyValues.length; i += 2) {
      values.put("spark.sparkprof." + keyValues[i], keyValues[i + 1]);
    }
    return values;
  }

  /** spark.sparkprof.otel.*: parsing, the SDK properties they become, traceparent parents. */
  static void otelConfigChecks() {
    Map<String, String> values = new HashMap<>();
    SparkProfConfig unset = SparkProfConfig.from(values::get);
    check(!unset.otelEnabled() && unset.otelProtocol().isEmpty() && unset.otelEndpoint().isEmpty()
        && Double.isNaN(unset.otelSamplingRatio()) && unset.otelMaxSpans() == 10_000
        && unset.otelExportTimeoutMs() == 10_000, "otel defaults");
    Map<String, String> sdk = TracingSdk.overrides(unset);
    check(sdk.size() == 2 && "none".equals(sdk.get("otel.metrics.exporter")),
        "unset otel keys leave the OTEL_* settings alone: " + sdk);
    values.put("spark.sparkprof.otel.enabled", "true");
    values.put("spark.sparkprof.otel.endpoint", "http://collector:4318");
    values.put("spark.sparkprof.otel.protocol", "HTTP");
    values.put("spark.sparkprof.otel.samplingRatio", "0.25");
    values.put("spark.sparkprof.otel.exporterType", "logging");
    values.put("spark.sparkprof.otel.serviceName", "etl");
    SparkProfConfig set = SparkProfConfig.from(values::get);
    sdk = TracingSdk.overrides(set);
    check(set.otelEnabled() && set.problems().isEmpty()
        && "http://collector:4318/v1/traces".equals(sdk.get("otel.exporter.otlp.traces.endpoint"))
        && "http/protobuf".equals(sdk.get("otel.exporter.otlp.traces.protocol"))
        && "parentbased_traceidratio".equals(sdk.get("otel.traces.sampler"))
        && "0.25".equals(sdk.get("otel.traces.sampler.arg"))
        && "console".equals(sdk.get("otel.traces.exporter"))
        && "etl".equals(sdk.get("otel.service.name")), "otel keys become SDK properties: " + sdk);
    values.put("spark.sparkprof.otel.protocol", "udp");
    values.put("spark.sparkprof.otel.samplingRatio", "1.5");
    values.put("spark.sparkprof.otel.exporterType", "jaeger");
    SparkProfConfig bad = SparkProfConfig.from(values::get);
    check(bad.otelProtocol().isEmpty() && Double.isNaN(bad.otelSamplingRatio())
        && bad.otelExporterType().isEmpty() && bad.problems().split("; ").length == 3,
        "bad otel values are reported and left to OTEL_*: " + bad.problems());
    check(TracingSdk.parentOf("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01") != null,
        "a W3C traceparent is a parent");
    check(TracingSdk.parentOf("00-00000000000000000000000000000000-b7ad6b7169203331-01") == null
        && TracingSdk.parentOf("not a traceparent") == null && TracingSdk.parentOf("") == null
        && TracingSdk.parentOf(null) == null, "an invalid traceparent is no parent");
    exportCountChecks();
  }

  /**
   * The end-of-application log line says "exported" only for spans the exporter delivered: an
   * export still under way (OTLP retrying an unreachable collector) or none at all is not one.
   */
  static void exportCountChecks() {
    final List<CompletableResultCode> results = new ArrayList<>();
    SpanExporter collector = new SpanExporter() {
      @Override
      public CompletableResultCode export(Collection<SpanData> spans) {
        CompletableResultCode result = new CompletableResultCode();
        results.add(result);
        return result;
      }

      @Override
      public CompletableResultCode flush() {
        return CompletableResultCode.ofSuccess();
      }

      @Override
      public CompletableResultCode shutdown() {
        return CompletableResultCode.ofSuccess();
      }
    };
    TracingSdk.CountingExporter counts = new TracingSdk.CountingExporter(collector);
    check(!counts.delivered(true, 3) && counts.delivered(true, 0),
        "no span delivered is no export (unless none was emitted)");
    counts.export(Arrays.<SpanData>asList(null, null, null));
    check(counts.pending.get() == 3 && !counts.delivered(true, 3),
        "spans whose export is under way are not delivered: " + counts.pending.get());
    results.get(0).succeed();
    check(counts.pending.get() == 0 && counts.exported.get() == 3 && counts.delivered(true, 3)
        && !counts.delivered(false, 3), "a completed export is delivered; a failed flush is not");
    counts.export(Arrays.<SpanData>asList(null, null));
    results.get(1).fail();
    check(counts.failed.get() == 2 && counts.pending.get() == 0 && !counts.delivered(true, 5),
        "a failed export is not delivered");
  }

  /** Every file under {@code root}, as paths relative to it ("a/b"), sorted. */
  static List<String> tree(Path root) throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      return files.filter(Files::isRegularFile).map(p -> root.relativize(p).toString())
          .sorted().collect(Collectors.toList());
    }
  }

  static void besideEventLogChecks(Path work) throws Exception {
    // Where: Spark's name for the application's event log, plus .sparkprof.
    check(EventLogDirOutputs.folderName("app-20260101120000-0001", null)
            .equals("app-20260101120000-0001.sparkprof")
        && EventLogDirOutputs.folderName("application_1_0002", "1")
            .equals("application_1_0002_1.sparkprof")
        && EventLogDirOutputs.folderName("Local-1.2 x:y/z", null)
            .equals("local-1_2-x-y-z.sparkprof"),
        "folder names follow Spark's event-log names (lower case, [ :/] as -, [.] as _)");
    check(EventLogDirOutputs.resolveDirectory("/tmp/events/").toString().equals("file:/tmp/events")
        && EventLogDirOutputs.resolveDirectory("hdfs://nn:8020/logs").toString()
            .equals("hdfs://nn:8020/logs")
        && EventLogDirOutputs.resolveDirectory("s3a://bucket/logs/").toString()
            .equals("s3a://bucket/logs")
        && EventLogDirOutputs.resolveDirectory(" ") == null,
        "spark.eventLog.dir resolved as Spark does (a bare path is local, a URI as it is)");

    // When: auto (the default) stores beside the log when outputDir is not set.
    Map<String, String> values = new HashMap<>();
    check(SparkProfConfig.from(values::get).storesBesideEventLog(true)
        && !SparkProfConfig.from(values::get).storesBesideEventLog(false),
        "auto, no outputDir: beside the event log when Spark writes one");
    values.put(SparkProfConfig.OUTPUT_DIR, "/data/sparkprof");
    check(!SparkProfConfig.from(values::get).storesBesideEventLog(true),
        "an explicit outputDir overrides: nothing beside the log");
    values.put(SparkProfConfig.BESIDE_EVENT_LOG, "true");
    check(SparkProfConfig.from(values::get).storesBesideEventLog(true),
        "besideEventLog=true with an explicit outputDir: beside the log too");
    values.remove(SparkProfConfig.OUTPUT_DIR);
    values.put(SparkProfConfig.BESIDE_EVENT_LOG, "false");
    check(!SparkProfConfig.from(values::get).storesBesideEventLog(true),
        "besideEventLog=false: never");
    values.put(SparkProfConfig.BESIDE_EVENT_LOG, "sometimes");
    values.put(SparkProfConfig.BESIDE_EVENT_LOG_MAX_BYTES, "64m");
    SparkProfConfig bad = SparkProfConfig.from(values::get);
    check(bad.besideEventLog().equals("auto") && bad.problems().contains("sometimes")
        && bad.besideEventLogMaxBytes() == 64L << 20 && bad.besideEventLogTimeoutMs() == 120_000,
        "a bad besideEventLog value is reported and auto used; maxBytes in Spark's size syntax");

    // A driver's outputs: reports, flame graphs, a profile (repetitive, as real ones are).
    Path local = work.resolve("local").resolve("app-20260101120000-0001");
    Files.createDirectories(local);
    Files.write(local.resolve("report.json"), "{\"schema\":\"sparkprof.report/v1\",\"findings\":[]}"
        .getBytes(StandardCharsets.UTF_8));
    for (String name : new String[] {"report.txt", "report.md", "report.html"}) {
      Files.write(local.resolve(name), ("the " + name).getBytes(StandardCharsets.UTF_8));
    }
    byte[] flameGraph = new byte[20_000];
    Arrays.fill(flameGraph, (byte) 'f');
    for (String stage : new String[] {"10", "2", "0"}) {
      Files.write(local.resolve("stage-" + stage + "-attempt-0.html"), flameGraph);
    }
    ByteArrayOutputStream profileBytes = new ByteArrayOutputStream();
    for (int i = 0; i < 50_000; i++) {
      profileBytes.write(("frame org.apache.spark.Task.run " + (i % 97) + "\n")
          .getBytes(StandardCharsets.UTF_8));
    }
    byte[] profile = profileBytes.toByteArray();
    Files.write(local.resolve("profile.sparkprof"), profile);
    Files.write(local.resolve("profile.sparkprof.inprogress"), new byte[0]);
    Files.write(local.resolve("unrelated.tmp"), new byte[] {1});

    org.apache.hadoop.conf.Configuration hadoop = new org.apache.hadoop.conf.Configuration();
    Path events = work.resolve("events");
    Files.createDirectories(events);
    org.apache.hadoop.fs.Path target =
        EventLogDirOutputs.folder("file://" + events, "app-20260101120000-0001", null);
    long started = System.nanoTime();
    EventLogDirOutputs.Outcome outcome =
        EventLogDirOutputs.store(local.toFile(), target, hadoop, 512L << 20);
    long tookMs = (System.nanoTime() - started) / 1_000_000;
    Path stored = events.resolve("app-20260101120000-0001.sparkprof");
    List<String> files = tree(events);
    check(outcome.failure == null && files.equals(Arrays.asList(
        "app-20260101120000-0001.sparkprof/profile.sparkprof.zstd",
        "app-20260101120000-0001.sparkprof/report.html",
        "app-20260101120000-0001.sparkprof/report.json",
        "app-20260101120000-0001.sparkprof/report.md",
        "app-20260101120000-0001.sparkprof/report.txt",
        "app-20260101120000-0001.sparkprof/stage-0-attempt-0.html",
        "app-20260101120000-0001.sparkprof/stage-10-attempt-0.html",
        "app-20260101120000-0001.sparkprof/stage-2-attempt-0.html")),
        "stored: the reports, flame graphs and the compressed profile; no temporary, checksum "
            + "or in-progress file (" + outcome + ": " + files + ")");
    check(outcome.stored.get(outcome.stored.size() - 1).equals("report.json")
        && outcome.stored.indexOf("stage-2-attempt-0.html")
            < outcome.stored.indexOf("stage-10-attempt-0.html"),
        "report.json last (the folder's completeness marker), flame graphs by stage: "
            + outcome.stored);
    byte[] compressed = Files.readAllBytes(stored.resolve("profile.sparkprof.zstd"));
    byte[] restored;
    try (InputStream in = new com.github.luben.zstd.ZstdInputStream(
        new java.io.ByteArrayInputStream(compressed))) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      for (int n; (n = in.read(buffer)) > 0; ) out.write(buffer, 0, n);
      restored = out.toByteArray();
    }
    check(Arrays.equals(restored, profile) && compressed.length * 10 < profile.length,
        "the profile is stored zstd-compressed and whole (" + profile.length + " -> "
            + compressed.length + " bytes, " + tookMs + " ms for the folder)");
    check(Arrays.equals(Files.readAllBytes(stored.resolve("stage-10-attempt-0.html")), flameGraph)
        && read(stored.resolve("report.txt")).equals("the report.txt"),
        "flame graphs and reports stored as they are");

    // Stored again (a second store over the first): replaced, nothing left over.
    Files.write(local.resolve("report.txt"),
        "the second report.txt".getBytes(StandardCharsets.UTF_8));
    EventLogDirOutputs.Outcome again =
        EventLogDirOutputs.store(local.toFile(), target, hadoop, 512L << 20);
    check(again.failure == null && tree(events).equals(files)
        && read(stored.resolve("report.txt")).equals("the second report.txt"),
        "stored again: files replaced, no temporary file left (" + again + ")");

    // The History Server's reading of the folder, through Hadoop's FileSystem.
    HistoryUiSource source = new HistoryUiSource(EventLogDirOutputs.fileSystem(target, hadoop),
        target, Collections.singletonList(target.toString()), null);
    String data = source.dataJson();
    check(HistoryUiSource.hasOutputs(EventLogDirOutputs.fileSystem(target, hadoop), target)
        && data.contains("\"schema\":\"sparkprof.report/v1\"") && data.contains("\"stage_id\":10")
        && data.contains("\"directory\":\"" + stored + "\""),
        "HistoryUiSource serves the stored folder's report and stages: " + data);
    String html = source.flameGraphHtml(2, 0);
    check(html != null && html.length() == flameGraph.length && source.flameGraphHtml(3, 0) == null,
        "HistoryUiSource serves a stored flame graph, none for a stage without one");

    // The size bound: the reports and the profile fit, the flame graphs do not.
    long reports = 0;
    for (String name : new String[] {"report.json", "report.txt", "report.md", "report.html"}) {
      reports += Files.size(local.resolve(name));
    }
    org.apache.hadoop.fs.Path bounded =
        EventLogDirOutputs.folder(events.toString(), "app-bounded", "1");
    EventLogDirOutputs.Outcome small = EventLogDirOutputs.store(local.toFile(), bounded, hadoop,
        reports + compressed.length + 1000);
    Path boundedDir = events.resolve("app-bounded_1.sparkprof");
    check(small.failure == null && small.leftOut.size() == 3 && Files.isRegularFile(
            boundedDir.resolve("report.json"))
        && Files.isRegularFile(boundedDir.resolve("profile.sparkprof.zstd"))
        && list(boundedDir, "stage-*").isEmpty()
        && small.bytes <= reports + compressed.length + 1000,
        "past the size bound the flame graphs stay local, the reports and profile are stored ("
            + small + ")");
    // A bound the compressed profile passes while it is written: left out, nothing half-written.
    org.apache.hadoop.fs.Path tight =
        EventLogDirOutputs.folder(events.toString(), "app-tight", null);
    EventLogDirOutputs.Outcome tiny =
        EventLogDirOutputs.store(local.toFile(), tight, hadoop, reports + 100);
    check(tiny.failure == null && tiny.leftOut.contains("profile.sparkprof")
        && tree(events.resolve("app-tight.sparkprof")).equals(Arrays.asList(
            "report.html", "report.json", "report.md", "report.txt")),
        "a profile that passes the bound while compressed is left out, no temporary file stays ("
            + tiny + ")");

    // Failures are values, never exceptions: a parent that is a file, a scheme without a file
    // system.
    Path blocker = work.resolve("blocker");
    Files.write(blocker, new byte[] {1});
    EventLogDirOutputs.Outcome blocked = EventLogDirOutputs.store(local.toFile(),
        EventLogDirOutputs.folder(blocker.toString(), "app-x", null), hadoop, 512L << 20);
    check(blocked.failure != null && blocked.stored.isEmpty(),
        "an event-log dir that is a file: a failure, no exception (" + blocked.failure + ")");
    EventLogDirOutputs.Outcome noScheme = EventLogDirOutputs.store(local.toFile(),
        EventLogDirOutputs.folder("nosuchfs://bucket/logs", "app-x", null), hadoop, 512L << 20);
    check(noScheme.failure != null && noScheme.failure.contains("nosuchfs"),
        "a scheme without a file system: a failure, no exception (" + noScheme.failure + ")");
  }

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    System.out.println("Spark " + org.apache.spark.package$.MODULE$.SPARK_VERSION() + ", Scala "
        + scala.util.Properties.versionNumberString() + ", Java " + System.getProperty("java.version")
        + ", mode " + mode);
    switch (mode) {
      case "config":
        configChecks();
        break;
      case "compat":
        compatChecks();
        break;
      case "beside-event-log": {
        Path work = Paths.get(args[1]);
        deleteTree(work);
        Files.createDirectories(work);
        besideEventLogChecks(work);
        break;
      }
      case "history-limits": {
        Path work = Paths.get(args[1]);
        deleteTree(work);
        Files.createDirectories(work);
        HistoryLimitsChecks.run(work);
        break;
      }
      case "agent":
      case "plugin-only":
      case "disabled": {
        Path work = Paths.get(args[1]);
        deleteTree(work);
        Files.createDirectories(work);
        boolean enabled = !mode.equals("disabled");
        String appId = runApplication(work, enabled);
        if (enabled) {
          applicationChecks(work, appId);
        } else {
          check(!Files.exists(work.resolve("sparkprof")) && !Files.exists(work.resolve("live.jsonl")),
              "disabled: no outputs");
        }
        break;
      }
      default:
        System.out.println("FAIL unknown mode " + mode);
        failures++;
    }
    System.out.println(failures == 0 ? "PASS" : failures + " check(s) failed");
    System.exit(failures == 0 ? 0 : 1);
  }
}
