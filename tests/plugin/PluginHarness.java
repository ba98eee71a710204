import io.sparkprof.NativeAggregator;
import io.sparkprof.SparkProfPlugin;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.scheduler.SparkListenerInterface;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.StageInfo;

/**
 * Plays Spark's part for the plugin in one JVM (as local mode does): the driver plugin's init with
 * a SparkContext that records listeners, the executor plugin's hooks on task threads named like
 * Spark's, executor-to-driver messages Java-serialized as Spark RPC does, and stage completions
 * through the registered listener. Checks /metrics and the stage flame graph files.
 *
 * <p>Usage: PluginHarness agent WORKDIR | PluginHarness no-agent WORKDIR
 */
public final class PluginHarness {
  private static int failures = 0;

  static void check(boolean condition, String what) {
    System.out.println((condition ? "ok   " : "FAIL ") + what);
    if (!condition) failures++;
  }

  /** A PluginContext; on executors, send() Java-serializes like Spark RPC to a remote driver. */
  static final class FakePluginContext implements PluginContext {
    final SparkConf conf;
    final String executorId;
    final DriverPlugin driver;
    int sent = 0;
    /** The executor id in the header of every batch sent, in order. */
    final List<String> batchExecutorIds = new ArrayList<>();

    FakePluginContext(SparkConf conf, String executorId, DriverPlugin driver) {
      this.conf = conf;
      this.executorId = executorId;
      this.driver = driver;
    }

    @Override public SparkConf conf() { return conf; }
    @Override public String executorID() { return executorId; }
    @Override public String hostname() { return "localhost"; }

    @Override
    public synchronized void send(Object message) throws IOException {
      if (message instanceof byte[]) batchExecutorIds.add(batchExecutorId((byte[]) message));
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        out.writeObject(message);
      }
      Object received;
      try (ObjectInputStream in =
          new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
        received = in.readObject();
      } catch (ClassNotFoundException e) {
        throw new IOException(e);
      }
      try {
        driver.receive(received);
      } catch (Exception e) {
        throw new IOException("the driver's receive threw", e);
      }
      sent++;
    }

    @Override
    public Object ask(Object message) {
      throw new UnsupportedOperationException();
    }
  }

  /**
   * Batch.executor_id (schema/profile.fbs: field 1 of the root table) read straight from the
   * flatbuffer, as the driver aggregator does; "<unreadable>" when the bytes are no batch.
   */
  static String batchExecutorId(byte[] batch) {
    try {
      java.nio.ByteBuffer bytes =
          java.nio.ByteBuffer.wrap(batch).order(java.nio.ByteOrder.LITTLE_ENDIAN);
      int table = bytes.getInt(0);
      int vtable = table - bytes.getInt(table);
      int slot = 4 + 2 * 1;  // vtable: its size, the table's size, then one uint16 per field
      if (slot >= (bytes.getShort(vtable) & 0xFFFF)) return null;
      int field = bytes.getShort(vtable + slot) & 0xFFFF;
      if (field == 0) return null;
      int string = table + field + bytes.getInt(table + field);
      return new String(batch, string + 4, bytes.getInt(string), StandardCharsets.UTF_8);
    } catch (RuntimeException e) {
      return "<unreadable>";
    }
  }

  static final class FakeTaskContext extends TaskContext {
    final int stageId;
    final int stageAttempt;
    final long taskAttemptId;

    FakeTaskContext(int stageId, int stageAttempt, long taskAttemptId) {
      this.stageId = stageId;
      this.stageAttempt = stageAttempt;
      this.taskAttemptId = taskAttemptId;
    }

    @Override public int stageId() { return stageId; }
    @Override public int stageAttemptNumber() { return stageAttempt; }
    @Override public long taskAttemptId() { return taskAttemptId; }
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

  interface Work {
    void run() throws Exception;
  }

  static final String APP_ID = "app-20261122054500-0000";
  static volatile long sink;
  static final java.lang.management.ThreadMXBean THREADS =
      java.lang.management.ManagementFactory.getThreadMXBean();
  /** CPU time the task threads of each stage really used, to compare with what was sampled. */
  static final java.util.concurrent.atomic.AtomicLong[] STAGE_CPU_NS = {
    new java.util.concurrent.atomic.AtomicLong(), new java.util.concurrent.atomic.AtomicLong(),
    new java.util.concurrent.atomic.AtomicLong()
  };

  static void serializationWork(long millis) throws IOException {
    long end = System.nanoTime() + millis * 1_000_000L;
    List<Record> records = new ArrayList<>();
    for (int i = 0; i < 200; i++) records.add(new Record(i));
    while (System.nanoTime() < end) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        out.writeObject(new ArrayList<>(records));
      }
      sink += bytes.size();
    }
  }

  static void computeWork(long millis) {
    long end = System.nanoTime() + millis * 1_000_000L;
    java.util.Random random = new java.util.Random(42);
    int[] values = new int[20_000];
    while (System.nanoTime() < end) {
      for (int i = 0; i < values.length; i++) values[i] = random.nextInt();
      java.util.Arrays.sort(values);
      sink += values[values.length / 2];
    }
  }

  /** Runs one task the way Executor.TaskRunner does: context set, hooks on the task thread. */
  static Thread task(final ExecutorPlugin executor, final int stageId, final long tid,
      final boolean fail, final Work work) {
    Thread thread = new Thread(() -> {
      TaskContext.setForTest(new FakeTaskContext(stageId, 0, tid));
      executor.onTaskStart();
      boolean failed = fail;
      long cpuStart = THREADS.getCurrentThreadCpuTime();
      try {
        work.run();
      } catch (Exception e) {
        failed = true;
      } finally {
        TaskContext.unsetForTest();  // Task.run's finally: unset before the end hooks
        STAGE_CPU_NS[stageId].addAndGet(THREADS.getCurrentThreadCpuTime() - cpuStart);
      }
      if (failed) {
        executor.onTaskFailed(new TaskFailedReason() {
          @Override public String toErrorString() { return "injected failure"; }
          @Override public boolean countTowardsTaskFailures() { return true; }
        });
      } else {
        executor.onTaskSucceeded();
      }
    }, "Executor task launch worker for task " + tid + ".0 in stage " + stageId + ".0 (TID "
        + tid + ")");
    thread.start();
    return thread;
  }

  static String httpGet(String url) throws IOException {
    HttpURLConnection connection = (HttpURLConnection) new URL(url).openConnection();
    connection.setConnectTimeout(5000);
    connection.setReadTimeout(5000);
    try (InputStream in = connection.getInputStream()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      for (int n; (n = in.read(buffer)) > 0; ) out.write(buffer, 0, n);
      return new String(out.toByteArray(), StandardCharsets.UTF_8);
    }
  }

  /**
   * The value of the first sample of {@code series} ("name" or "name{k=\"v\",...}") whose labels
   * include the given ones; every series also carries application_id and application_name, which
   * need not be named. NaN when there is none.
   */
  static double metric(String text, String series) {
    int brace = series.indexOf('{');
    String name = brace < 0 ? series : series.substring(0, brace);
    String[] wanted = brace < 0 ? new String[0]
        : series.substring(brace + 1, series.length() - 1).split(",(?=[a-z_]+=\")");
    for (String line : text.split("\n")) {
      if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) continue;
      int space = line.lastIndexOf(' ');
      String labels = line.substring(name.length(), space);
      boolean all = true;
      for (String label : wanted) all &= labels.contains(label);
      if (all) return Double.parseDouble(line.substring(space + 1));
    }
    return Double.NaN;
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) return;
    try (java.util.stream.Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Collections.reverseOrder()).forEach(path -> path.toFile().delete());
    }
  }

  static boolean waitForFile(Path path, long timeoutMs) throws InterruptedException {
    long end = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < end) {
      if (Files.exists(path)) return true;
      Thread.sleep(50);
    }
    return Files.exists(path);
  }

  /** SparkProfConfig: defaults, units, and bad values falling back with one problem each. */
  static void configChecks() {
    Map<String, String> values = new HashMap<>();
    io.sparkprof.SparkProfConfig defaults = io.sparkprof.SparkProfConfig.from(values::get);
    check(defaults.enabled() && defaults.flushIntervalMs() == 5000
        && defaults.prometheusPort() == 9405 && defaults.prometheusEndpoint().equals("127.0.0.1:9405")
        && defaults.maxBatchBytes() == 16 << 20 && defaults.maxProfileFileBytes() == 1L << 30
        && defaults.problems().isEmpty(), "defaults");
    values.put("spark.sparkprof.flushInterval", "2s");
    values.put("spark.sparkprof.prometheus.port", "-1");
    values.put("spark.sparkprof.maxBatchBytes", "4m");
    values.put("spark.sparkprof.maxProfileFileBytes", "0");
    values.put("spark.sparkprof.enabled", " FALSE ");
    io.sparkprof.SparkProfConfig set = io.sparkprof.SparkProfConfig.from(values::get);
    check(set.flushIntervalMs() == 2000 && set.prometheusEndpoint().isEmpty()
        && set.maxBatchBytes() == 4 << 20 && set.maxProfileFileBytes() == 0 && !set.enabled()
        && set.problems().isEmpty(), "values with units");
    values.put("spark.sparkprof.flushInterval", "soon");
    values.put("spark.sparkprof.prometheus.port", "70000");
    values.put("spark.sparkprof.enabled", "yes");
    io.sparkprof.SparkProfConfig bad = io.sparkprof.SparkProfConfig.from(values::get);
    check(bad.flushIntervalMs() == 5000 && bad.prometheusPort() == 9405 && bad.enabled()
        && bad.problems().split("; ").length == 3, "bad values use defaults: " + bad.problems());
    check(defaults.metricsRefreshIntervalMs() == 1000, "live metrics refresh at most every second");
    values.put("spark.sparkprof.metricsRefreshInterval", "250ms");
    check(io.sparkprof.SparkProfConfig.from(values::get).metricsRefreshIntervalMs() == 250,
        "metricsRefreshInterval takes a duration");
    values.put("spark.sparkprof.flushInterval", "10");
    check(io.sparkprof.SparkProfConfig.from(values::get).flushIntervalMs() == 100,
        "a bare number is milliseconds, clamped to 100 ms");
  }

  public static void main(String[] args) throws Exception {
    if (args[0].equals("config")) {
      configChecks();
      finish();
      return;
    }
    boolean withAgent = args[0].equals("agent");
    Path work = Paths.get(args[1]);
    Path flameDir = work.resolve("flamegraphs");
    deleteTree(flameDir);  // files from an earlier run must not pass for this run's
    SparkConf conf = new SparkConf()
        .set("spark.app.name", "plugin harness")
        .set("spark.sparkprof.flushInterval", "200ms")
        .set("spark.sparkprof.prometheus.port", "0")
        .set("spark.sparkprof.outputDir", flameDir.toString());

    // Capture the plugin's log lines (stderr) to check how much it says.
    java.io.PrintStream originalErr = System.err;
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    System.setErr(new java.io.PrintStream(log, true, "UTF-8"));

    SparkProfPlugin plugin = new SparkProfPlugin();
    DriverPlugin driver = plugin.driverPlugin();
    SparkContext sc = new SparkContext();
    FakePluginContext driverContext = new FakePluginContext(conf, "driver", null);
    Map<String, String> extra = driver.init(sc, driverContext);
    driver.registerMetrics(APP_ID, driverContext);  // Spark calls it once the app id is known
    ExecutorPlugin executor = plugin.executorPlugin();
    // One -agentpath line for every executor: the plugin names this one "7" at init.
    FakePluginContext executorContext = new FakePluginContext(conf, "7", driver);
    executor.init(executorContext, extra);

    System.setErr(originalErr);
    String logged = new String(log.toByteArray(), StandardCharsets.UTF_8);
    System.err.print(logged);

    // Hooks outside any task (no TaskContext) and unbalanced end hooks must be harmless.
    executor.onTaskStart();
    executor.onTaskSucceeded();
    executor.onTaskFailed(null);

    // Stage 1: serialization-heavy, two tasks. Stage 2: compute, one of two tasks fails.
    List<Thread> tasks = new ArrayList<>();
    tasks.add(task(executor, 1, 0, false, () -> serializationWork(1500)));
    tasks.add(task(executor, 1, 1, false, () -> serializationWork(1500)));
    for (Thread t : tasks) t.join();
    tasks.clear();
    tasks.add(task(executor, 2, 2, false, () -> computeWork(1000)));
    tasks.add(task(executor, 2, 3, true, () -> computeWork(500)));
    for (Thread t : tasks) t.join();

    if (!withAgent) {
      check(sc.listeners.isEmpty(), "without the library the driver registers no listener");
      check(logged.split("\n").length == 2 && logged.contains("executor 7: the native agent is not loaded")
          && logged.contains("driver: libsparkprof.so is not loaded"),
          "one log line per side without the agent");
      check(driver.receive(new byte[] {1, 2, 3}) == null, "receive without an aggregator is a no-op");
      executor.shutdown();
      driver.shutdown();
      check(executorContext.sent == 0, "nothing was sent without the agent");
      finish();
      return;
    }

    check(sc.listeners.size() == 1, "the driver plugin registered one listener");
    check(logged.contains("driver aggregator started, metrics at http://127.0.0.1:"),
        "the driver logs where its metrics are");
    String status = NativeAggregator.status();
    Matcher portMatch = Pattern.compile("\"port\":(\\d+)").matcher(status);
    check(portMatch.find(), "aggregator status names its port: " + status);
    int port = Integer.parseInt(portMatch.group(1));

    // A bad batch and a foreign message: counted/ignored, never thrown.
    check(driver.receive(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9}) == null, "bad batch: no throw");
    check(driver.receive("not a batch") == null, "foreign message: no throw");
    check(driver.receive(new byte[32 << 20]) == null, "oversized batch: no throw");

    // Executors flush every 200 ms; wait for the last task samples, then complete the stages.
    Thread.sleep(600);
    SparkListenerInterface listener = sc.listeners.get(0);
    listener.onStageCompleted(new SparkListenerStageCompleted(new StageInfo(1, 0)));
    listener.onStageCompleted(new SparkListenerStageCompleted(new StageInfo(2, 0)));

    Path appDir = flameDir.resolve(APP_ID);
    Path stage1 = appDir.resolve("stage-1-attempt-0.html");
    Path stage2 = appDir.resolve("stage-2-attempt-0.html");
    check(waitForFile(stage1, 10_000), "stage 1 flame graph written: " + stage1);
    check(waitForFile(stage2, 10_000), "stage 2 flame graph written: " + stage2);
    if (Files.exists(stage1)) {
      String html = new String(Files.readAllBytes(stage1), StandardCharsets.UTF_8);
      check(html.contains("ObjectOutputStream"), "stage 1 flame graph shows ObjectOutputStream frames");
      check(html.contains("serialization"), "stage 1 flame graph carries the serialization category");
    }
    if (Files.exists(stage2)) {
      String html = new String(Files.readAllBytes(stage2), StandardCharsets.UTF_8);
      check(html.contains("computeWork") && html.contains("Arrays.sort"),
          "stage 2 flame graph shows the compute frames");
    }

    String metrics = httpGet("http://127.0.0.1:" + port + "/metrics");
    double serialization =
        metric(metrics, "spark_task_time_seconds_total{category=\"serialization\"}");
    double compute = metric(metrics, "spark_task_time_seconds_total{category=\"compute\"}");
    System.out.println("serialization=" + serialization + "s compute=" + compute + "s");
    // CPU-time sampling on shared cores: the threads get what the machine gives them, so check
    // presence and an upper bound (no double counting), not exact amounts.
    double total = 0;
    for (String category : new String[] {"compute", "serialization", "s3a_write", "s3a_read",
        "shuffle_write", "shuffle_read", "spill", "file_io", "gc", "other"}) {
      double value = metric(metrics, "spark_task_time_seconds_total{category=\"" + category + "\"}");
      check(!Double.isNaN(value), "category series " + category + " exported: " + value + " s");
      if (!Double.isNaN(value)) total += value;
    }
    // CPU-time sampling on shared cores: compare with the CPU time the task threads really got.
    double stage1Cpu = STAGE_CPU_NS[1].get() / 1e9;
    double stage2Cpu = STAGE_CPU_NS[2].get() / 1e9;
    System.out.println("task thread CPU: stage 1 " + stage1Cpu + " s, stage 2 " + stage2Cpu + " s");
    check(serialization > 0.3 * stage1Cpu, "serialization time is at least 30% of stage 1's CPU time");
    check(compute > 0.3 * stage2Cpu, "compute time is at least 30% of stage 2's CPU time");
    check(total < (stage1Cpu + stage2Cpu) * 1.3 + 0.1,
        "task time sums to at most the CPU time used (" + total + " s)");
    check(metric(metrics, "spark_agent_samples_total") > 100, "agent samples summed");
    check(metric(metrics, "spark_agent_reporting_executors") == 1, "one executor reported");
    check(metric(metrics, "sparkprof_driver_batches_total{outcome=\"accepted\"}") >= 2,
        "batches accepted");
    check(metric(metrics, "sparkprof_driver_batches_total{outcome=\"invalid\"}") == 1,
        "the bad batch is counted as invalid");
    check(metric(metrics, "sparkprof_driver_batches_total{outcome=\"too_large\"}") == 1,
        "the oversized batch is counted as too_large");
    check(metrics.contains("spark_gc_pause_seconds_count"), "GC pause histogram exported");
    check(metric(metrics, "spark_application_info{application_id=\"" + APP_ID
        + "\",application_name=\"plugin harness\"}") == 1, "application info series");

    executor.shutdown();
    driver.shutdown();
    check(NativeAggregator.status().contains("\"running\":false"), "driver shutdown stops it");
    check(executorContext.sent >= 2, "executor sent batches: " + executorContext.sent);
    check(!executorContext.batchExecutorIds.isEmpty()
        && executorContext.batchExecutorIds.stream().allMatch("7"::equals),
        "every batch header names executor 7: "
            + new java.util.LinkedHashSet<>(executorContext.batchExecutorIds));
    check(io.sparkprof.NativeAgent.statusJson().contains("\"executor_id\":\"7\""),
        "the agent's status names executor 7: " + io.sparkprof.NativeAgent.statusJson());
    Path profile = appDir.resolve("profile.sparkprof");
    long profileBytes = Files.exists(profile) ? Files.size(profile) : 0;
    check(profileBytes > 0, "saved profile written: " + profile + " (" + profileBytes + " bytes)");
    finish();
  }

  static void finish() {
    System.out.println(failures == 0 ? "PASS" : failures + " check(s) failed");
    System.exit(failures == 0 ? 0 : 1);
  }
}
