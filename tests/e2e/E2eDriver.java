import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.scheduler.TaskInfo;

/**
 * The driver JVM of the e2e test, playing SparkContext, the DAG and task schedulers, the
 * scheduler backend and the plugin RPC endpoint:
 *
 * <ul>
 *   <li>the plugins named in spark.plugins get DriverPlugin.init (before the scheduler exists)
 *       and, once the application id is known, registerMetrics;
 *   <li>executor JVMs (with -agentpath) are launched a configurable delay after the application
 *       start, as a cluster manager would grant them; each registers over the loopback link;
 *   <li>their PluginContext.send messages arrive as Java-serialized frames and are handed to
 *       DriverPlugin.receive on one dispatcher thread named like Spark's;
 *   <li>jobs of one stage each run on the executors' free cores, and listener events go to the
 *       listeners the plugin registered on one listener-bus thread, in Spark's order, with the
 *       harness's real timestamps.
 * </ul>
 *
 * <p>After each stage the driver waits until every executor has sent the profile samples taken
 * before it (a flush barrier) and until Prometheus has scraped after that, so the test can read
 * each stage's values from Prometheus at a known instant. Everything the harness did (times,
 * per-task metrics, instants) goes to result.json for the checks.
 *
 * <p>Usage: E2eDriver WORK_DIR AGENT_PATH_OPTION EXECUTORS CORES EXECUTOR_DELAY_MS. The test
 * writes Prometheus's base URL into WORK_DIR/go once Prometheus scrapes the driver.
 */
public final class E2eDriver {
  static final String APP_NAME = "sparkprof e2e";
  static final String PLUGIN_ENDPOINT_THREAD =
      "dispatcher-org.apache.spark.internal.plugin.PluginEndpoint";
  static final String SCRAPE_JOB = "sparkprof-driver";

  final Path workDir;
  final String agentPathOption;
  final int executorCount;
  final int coresPerExecutor;
  final long executorDelayMs;
  String prometheusUrl = "";

  final Map<String, String> confMap = new LinkedHashMap<>();
  final SparkConf conf = new SparkConf();
  final SparkContext sparkContext = new SparkContext();
  final Map<String, DriverPlugin> driverPlugins = new LinkedHashMap<>();
  final E2eListenerBus listenerBus;

  /** Scheduler inbox: registrations, status updates, barrier answers, lost links. */
  final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
  final BlockingQueue<Object> dispatcherQueue = new LinkedBlockingQueue<>();
  final Map<String, ExecutorLink> executors = new ConcurrentHashMap<>();
  final List<Process> executorProcesses = new ArrayList<>();
  final AtomicLong pluginMessages = new AtomicLong();
  final AtomicLong pluginMessageBytes = new AtomicLong();
  final AtomicLong dispatcherEnqueued = new AtomicLong();
  final AtomicLong dispatcherHandled = new AtomicLong();
  final AtomicLong linksClosed = new AtomicLong();
  volatile boolean stopping;

  final List<String> problems = Collections.synchronizedList(new ArrayList<>());
  long nextTaskId = 0;
  long nextBarrierId = 0;

  /** One registered executor and its side of the link. */
  static final class ExecutorLink {
    final String executorId;
    final DataOutputStream out;
    String host;
    int cores;
    int freeCores;
    boolean launched;
    long addedTimeMs;

    ExecutorLink(String executorId, DataOutputStream out) {
      this.executorId = executorId;
      this.out = out;
    }

    void send(Serializable message) throws IOException {
      synchronized (out) {
        E2eWire.write(out, message);
      }
    }
  }

  static final class ConnectionLost {
    final String executorId;
    final String why;

    ConnectionLost(String executorId, String why) {
      this.executorId = executorId;
      this.why = why;
    }
  }

  E2eDriver(String[] args) {
    workDir = Paths.get(args[0]).toAbsolutePath();
    agentPathOption = args[1];
    executorCount = Integer.parseInt(args[2]);
    coresPerExecutor = Integer.parseInt(args[3]);
    executorDelayMs = Long.parseLong(args[4]);
    listenerBus = new E2eListenerBus(sparkContext, this::problem);
  }

  void problem(String what) {
    System.err.println("e2e driver: PROBLEM " + what);
    problems.add(what);
  }

  static void log(String message) {
    System.err.println("e2e driver: " + message);
  }

  void set(String key, String value) {
    confMap.put(key, value);
    conf.set(key, value);
  }

  // ---------------------------------------------------------------------------------------------
  // The plugin RPC endpoint and the links to executors.

  /** PluginContextImpl on the driver: executorID is "driver"; nothing is sent from here. */
  final class DriverPluginContext implements PluginContext {
    @Override public SparkConf conf() { return conf; }
    @Override public String executorID() { return "driver"; }
    @Override public String hostname() { return "127.0.0.1"; }

    @Override
    public void send(Object message) {
      throw new UnsupportedOperationException("the driver does not send to itself");
    }

    @Override
    public Object ask(Object message) {
      throw new UnsupportedOperationException("the driver does not ask itself");
    }
  }

  /** PluginEndpoint: every plugin's receive, one message at a time, on one daemon thread. */
  void startDispatcher() {
    Thread dispatcher = new Thread(() -> {
      while (true) {
        Object item;
        try {
          item = dispatcherQueue.take();
        } catch (InterruptedException e) {
          return;
        }
        if (item instanceof E2eWire.PluginMessage) {
          deliverPluginMessage((E2eWire.PluginMessage) item);
        } else {
          inbox.add(item);  // FlushBarrierDone: behind the batches it vouches for
        }
        dispatcherHandled.incrementAndGet();
      }
    }, PLUGIN_ENDPOINT_THREAD);
    dispatcher.setDaemon(true);
    dispatcher.start();
  }

  void deliverPluginMessage(E2eWire.PluginMessage message) {
    DriverPlugin plugin = driverPlugins.get(message.pluginName);
    if (plugin == null) {
      problem("message for unknown plugin " + message.pluginName);
      return;
    }
    pluginMessages.incrementAndGet();
    if (message.message instanceof byte[]) {
      pluginMessageBytes.addAndGet(((byte[]) message.message).length);
    }
    try {
      Object reply = plugin.receive(message.message);
      if (reply != null) log("receive returned " + reply + " for a one-way message");
    } catch (Exception e) {
      // Spark logs a warning and goes on; the e2e test wants to know.
      problem("DriverPlugin.receive threw " + e);
    }
  }

  ServerSocket startRpcServer() throws IOException {
    final ServerSocket server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(() -> {
      while (!server.isClosed()) {
        try {
          final Socket socket = server.accept();
          socket.setTcpNoDelay(true);
          Thread reader = new Thread(() -> serveExecutor(socket), "rpc-link-" + socket.getPort());
          reader.setDaemon(true);
          reader.start();
        } catch (IOException e) {
          return;
        }
      }
    }, "rpc-accept");
    acceptor.setDaemon(true);
    acceptor.start();
    return server;
  }

  /** Reads one executor's frames until its link closes. */
  void serveExecutor(Socket socket) {
    String executorId = "?";
    try {
      DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
      DataOutputStream out =
          new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
      ExecutorLink link = null;
      while (true) {
        Object message = E2eWire.read(in);
        if (message == null) break;
        if (message instanceof E2eWire.RetrieveSparkAppConfig) {
          synchronized (out) {
            E2eWire.write(out, new E2eWire.SparkAppConfig(new LinkedHashMap<>(confMap)));
          }
        } else if (message instanceof E2eWire.RegisterExecutor) {
          E2eWire.RegisterExecutor register = (E2eWire.RegisterExecutor) message;
          executorId = register.executorId;
          link = new ExecutorLink(executorId, out);
          link.cores = register.cores;
          link.host = register.host;
          link.freeCores = register.cores;
          link.addedTimeMs = System.currentTimeMillis();
          executors.put(executorId, link);
          // CoarseGrainedSchedulerBackend: ExecutorAdded as the registration is accepted.
          listenerBus.postExecutorAdded(link.addedTimeMs, executorId, register.host, register.cores);
          link.send(new E2eWire.RegisteredExecutor());
          inbox.add(register);
        } else if (message instanceof E2eWire.PluginMessage
            || message instanceof E2eWire.FlushBarrierDone) {
          dispatcherEnqueued.incrementAndGet();
          dispatcherQueue.add(message);
        } else {
          inbox.add(message);
        }
      }
      if (!stopping) inbox.add(new ConnectionLost(executorId, "link closed"));
    } catch (IOException e) {
      if (!stopping) inbox.add(new ConnectionLost(executorId, e.toString()));
    } finally {
      linksClosed.incrementAndGet();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Executors: launched like a cluster manager would, after the delay.

  void launchExecutors(int rpcPort) throws IOException {
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    for (int i = 1; i <= executorCount; i++) {
      List<String> command = new ArrayList<>();
      command.add(java);
      command.add(agentPathOption);
      command.add("-Xmx256m");
      command.add("-XX:+UseSerialGC");
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add("E2eExecutor");
      command.add(Integer.toString(rpcPort));
      command.add(Integer.toString(i));
      command.add(Integer.toString(coresPerExecutor));
      File logFile = workDir.resolve("executor-" + i + ".log").toFile();
      ProcessBuilder builder = new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.to(logFile));
      executorProcesses.add(builder.start());
    }
  }

  /** The next scheduler message, handling lost links; null at the deadline. */
  Object nextInbox(long deadlineMs) throws InterruptedException {
    long waitMs = deadlineMs - System.currentTimeMillis();
    if (waitMs <= 0) return null;
    Object message = inbox.poll(waitMs, TimeUnit.MILLISECONDS);
    if (message instanceof ConnectionLost) {
      ConnectionLost lost = (ConnectionLost) message;
      throw new IllegalStateException("executor " + lost.executorId + " lost: " + lost.why);
    }
    if (message instanceof E2eWire.LaunchedExecutor) {
      ExecutorLink link = executors.get(((E2eWire.LaunchedExecutor) message).executorId);
      if (link != null) link.launched = true;
    }
    return message;
  }

  int launchedExecutors() {
    int launched = 0;
    for (ExecutorLink link : executors.values()) launched += link.launched ? 1 : 0;
    return launched;
  }

  // ---------------------------------------------------------------------------------------------
  // Jobs, stages, tasks.

  static final class StageSpec {
    final int stageId;
    final int jobId;
    final String name;
    final String workload;
    final int[] units;
    final int failingIndex;  // the task whose first attempt fails, or -1

    StageSpec(int stageId, int jobId, String name, String workload, int[] units,
        int failingIndex) {
      this.stageId = stageId;
      this.jobId = jobId;
      this.name = name;
      this.workload = workload;
      this.units = units;
      this.failingIndex = failingIndex;
    }
  }

  static final class TaskRecord {
    E2eWire.LaunchTask launch;
    TaskInfo info;
    String executorId;
    long launchTimeMs;
    long finishTimeMs;
    E2eWire.StatusUpdate status;
  }

  /** Runs one job of one stage; returns the stage's JSON for result.json. */
  String runStage(StageSpec spec) throws Exception {
    StageInfo stageInfo = E2eListenerBus.stageInfo(spec.stageId, spec.name, spec.units.length);
    long jobStartMs = System.currentTimeMillis();
    listenerBus.postJobStart(spec.jobId, jobStartMs, stageInfo);
    long submittedMs = System.currentTimeMillis();
    listenerBus.postStageSubmitted(stageInfo, submittedMs);

    Path outputDir = workDir.resolve("output").resolve("stage-" + spec.stageId);
    Deque<E2eWire.LaunchTask> pending = new ArrayDeque<>();
    for (int index = 0; index < spec.units.length; index++) {
      pending.add(new E2eWire.LaunchTask(nextTaskId++, spec.stageId, 0, index, 0, index,
          spec.units.length, spec.workload, spec.units[index], outputDir.toString(),
          index == spec.failingIndex));
    }
    Map<Long, TaskRecord> running = new LinkedHashMap<>();
    List<TaskRecord> done = new ArrayList<>();
    int succeeded = 0;
    long deadlineMs = System.currentTimeMillis() + 120_000;
    while (succeeded < spec.units.length) {
      // TaskSchedulerImpl.resourceOffers: a task per free core, executors in turn.
      boolean offered = true;
      while (!pending.isEmpty() && offered) {
        offered = false;
        for (ExecutorLink link : executors.values()) {
          if (pending.isEmpty()) break;
          if (!link.launched || link.freeCores == 0) continue;
          E2eWire.LaunchTask launch = pending.poll();
          TaskRecord record = new TaskRecord();
          record.launch = launch;
          record.executorId = link.executorId;
          record.launchTimeMs = System.currentTimeMillis();
          link.freeCores--;
          running.put(launch.taskId, record);
          record.info =
              listenerBus.postTaskStart(launch, link.executorId, link.host, record.launchTimeMs);
          link.send(launch);
          offered = true;
        }
      }
      Object message = nextInbox(deadlineMs);
      if (message == null) throw new IllegalStateException("stage " + spec.stageId + " timed out");
      if (!(message instanceof E2eWire.StatusUpdate)) continue;
      E2eWire.StatusUpdate status = (E2eWire.StatusUpdate) message;
      TaskRecord record = running.remove(status.taskId);
      if (record == null) {
        problem("status update for unknown task " + status.taskId);
        continue;
      }
      record.finishTimeMs = System.currentTimeMillis();
      record.status = status;
      executors.get(record.executorId).freeCores++;
      listenerBus.postTaskEnd(record.launch, record.info, record.finishTimeMs, status);
      done.add(record);
      if (status.success) {
        succeeded++;
      } else {
        // TaskSetManager.handleFailedTask: the same partition again, next attempt number.
        E2eWire.LaunchTask failed = record.launch;
        pending.add(new E2eWire.LaunchTask(nextTaskId++, failed.stageId, failed.stageAttempt,
            failed.index, failed.attemptNumber + 1, failed.partitionId, failed.numPartitions,
            failed.workload, failed.units, failed.outputDir, false));
      }
    }
    long completedMs = System.currentTimeMillis();
    listenerBus.postStageCompleted(stageInfo, completedMs);
    long jobEndMs = System.currentTimeMillis();
    listenerBus.postJobEnd(spec.jobId, jobEndMs);

    // Every sample of this stage has reached the aggregator, then Prometheus scraped it.
    long barrierStartMs = System.currentTimeMillis();
    flushBarrier();
    long flushedMs = System.currentTimeMillis();
    long scrapedAtMs = waitForScrapeAfter(flushedMs);
    log("stage " + spec.stageId + " (" + spec.name + "): " + done.size() + " task attempts, "
        + (completedMs - submittedMs) + " ms; flushed in " + (flushedMs - barrierStartMs)
        + " ms, scraped at +" + (scrapedAtMs - flushedMs) + " ms");

    List<String> tasks = new ArrayList<>();
    for (TaskRecord task : done) {
      E2eWire.StatusUpdate s = task.status;
      tasks.add(new JsonObject()
          .add("task_id", task.launch.taskId)
          .add("index", task.launch.index)
          .add("attempt", task.launch.attemptNumber)
          .add("executor_id", task.executorId)
          .add("units", task.launch.units)
          .add("success", s.success)
          .add("launch_ms", task.launchTimeMs)
          .add("finish_ms", task.finishTimeMs)
          .add("run_ms", s.runTimeMs)
          .add("cpu_ns", s.cpuTimeNs)
          .add("gc_ms", s.gcTimeMs)
          .add("records_read", s.recordsRead)
          .add("bytes_written", s.bytesWritten)
          .add("records_written", s.recordsWritten)
          .toString());
    }
    return new JsonObject()
        .add("stage_id", spec.stageId)
        .add("job_id", spec.jobId)
        .add("name", spec.name)
        .add("workload", spec.workload)
        .add("job_start_ms", jobStartMs)
        .add("submitted_ms", submittedMs)
        .add("completed_ms", completedMs)
        .add("job_end_ms", jobEndMs)
        .add("flushed_ms", flushedMs)
        .add("scraped_ms", scrapedAtMs)
        .add("output_dir", outputDir.toString())
        .raw("tasks", "[" + String.join(",", tasks) + "]")
        .toString();
  }

  /** Sends a flush barrier to every executor and waits for all answers (bounded). */
  void flushBarrier() throws Exception {
    long id = nextBarrierId++;
    int expected = 0;
    for (ExecutorLink link : executors.values()) {
      link.send(new E2eWire.FlushBarrier(id));
      expected++;
    }
    long deadlineMs = System.currentTimeMillis() + 30_000;
    int answered = 0;
    while (answered < expected) {
      Object message = nextInbox(deadlineMs);
      if (message == null) {
        problem("flush barrier " + id + ": only " + answered + " of " + expected + " executors answered");
        return;
      }
      if (message instanceof E2eWire.FlushBarrierDone
          && ((E2eWire.FlushBarrierDone) message).id == id) {
        answered++;
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Prometheus: the scheduler waits until it has scraped, so stage values are at known instants.

  static String httpGet(String url) throws IOException {
    HttpURLConnection connection = (HttpURLConnection) new URL(url).openConnection();
    connection.setConnectTimeout(5000);
    connection.setReadTimeout(5000);
    try (InputStream in = connection.getInputStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  static final Pattern SAMPLE_VALUE = Pattern.compile("\"value\":\\[[0-9.eE+-]+,\"([^\"]+)\"\\]");

  /**
   * The time (ms) of Prometheus's first successful scrape of the driver that started after afterMs.
   * timestamp() of a plain selector gives the sample's (scrape start) time; Prometheus may snap
   * it a few ms back onto its schedule, hence the margin.
   */
  long waitForScrapeAfter(long afterMs) throws InterruptedException {
    String query = "timestamp(up{job=\"" + SCRAPE_JOB + "\"}) and up{job=\"" + SCRAPE_JOB
        + "\"} == 1";
    long deadlineMs = System.currentTimeMillis() + 30_000;
    String last = "";
    while (System.currentTimeMillis() < deadlineMs) {
      try {
        last = httpGet(prometheusUrl + "/api/v1/query?query="
            + URLEncoder.encode(query, "UTF-8"));
        Matcher matcher = SAMPLE_VALUE.matcher(last);
        if (matcher.find()) {
          long scrapedMs = Math.round(Double.parseDouble(matcher.group(1)) * 1000);
          if (scrapedMs > afterMs + 5) return scrapedMs;
        }
      } catch (IOException | NumberFormatException e) {
        last = e.toString();
      }
      Thread.sleep(100);
    }
    problem("Prometheus did not scrape the driver within 30 s (last answer: " + last + ")");
    return -1;
  }

  // ---------------------------------------------------------------------------------------------

  /** A JSON object written field by field (result.json). */
  static final class JsonObject {
    private final StringBuilder out = new StringBuilder("{");

    JsonObject add(String key, long value) { return raw(key, Long.toString(value)); }
    JsonObject add(String key, boolean value) { return raw(key, Boolean.toString(value)); }
    JsonObject add(String key, String value) { return raw(key, jsonString(value)); }

    JsonObject raw(String key, String json) {
      if (out.length() > 1) out.append(',');
      out.append(jsonString(key)).append(':').append(json);
      return this;
    }

    @Override public String toString() { return out + "}"; }
  }

  static String jsonString(String value) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : value.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }

  static int metricsPort() {
    Matcher matcher = Pattern.compile("\"port\":(-?\\d+)").matcher(
        io.sparkprof.NativeAggregator.status());
    return matcher.find() ? Integer.parseInt(matcher.group(1)) : -1;
  }

  static void writeAtomically(Path path, String text) throws IOException {
    Path temporary = path.resolveSibling(path.getFileName() + ".tmp");
    Files.write(temporary, text.getBytes(StandardCharsets.UTF_8));
    Files.move(temporary, path, StandardCopyOption.ATOMIC_MOVE);
  }

  int run() throws Exception {
    Files.createDirectories(workDir);
    String appId = "app-e2e-" + ProcessHandle.current().pid();
    set("spark.app.name", APP_NAME);
    set("spark.master", "e2e://loopback");
    set("spark.executor.cores", Integer.toString(coresPerExecutor));
    set("spark.plugins", "io.sparkprof.SparkProfPlugin");
    set("spark.sparkprof.flushInterval", "200ms");
    set("spark.sparkprof.prometheus.port", "0");
    // Live figures refreshed at every scrape (default: at most once a second, which could leave
    // a 1 s scrape showing the figures of the one before).
    set("spark.sparkprof.metricsRefreshInterval", "100ms");
    set("spark.sparkprof.outputDir", workDir.resolve("sparkprof").toString());

    // SparkContext: plugins' init before the task scheduler exists.
    DriverPluginContext pluginContext = new DriverPluginContext();
    for (String className : confMap.get("spark.plugins").split(",")) {
      SparkPlugin plugin =
          (SparkPlugin) Class.forName(className.trim()).getDeclaredConstructor().newInstance();
      DriverPlugin driverPlugin = plugin.driverPlugin();
      if (driverPlugin == null) continue;
      Map<String, String> extra = driverPlugin.init(sparkContext, pluginContext);
      if (extra != null) {
        for (Map.Entry<String, String> entry : extra.entrySet()) {
          set("spark.plugins.internal.conf." + className.trim() + "." + entry.getKey(),
              entry.getValue());
        }
      }
      driverPlugins.put(className.trim(), driverPlugin);
    }
    startDispatcher();
    ServerSocket rpcServer = startRpcServer();
    int metricsPort = metricsPort();
    writeAtomically(workDir.resolve("driver-ready.json"),
        "{\"metrics_port\":" + metricsPort + ",\"rpc_port\":" + rpcServer.getLocalPort() + "}\n");
    log("plugins initialised, metrics on port " + metricsPort + "; waiting for Prometheus");

    // The test starts Prometheus on this endpoint and says "go" once it scrapes it.
    Path go = workDir.resolve("go");
    long goDeadlineMs = System.currentTimeMillis() + 60_000;
    while (!Files.exists(go)) {
      if (System.currentTimeMillis() > goDeadlineMs) {
        throw new IllegalStateException("no go from the test within 60 s");
      }
      Thread.sleep(50);
    }
    prometheusUrl = new String(Files.readAllBytes(go), StandardCharsets.UTF_8).trim();

    // Application id known: the listener bus starts, ApplicationStart, then registerMetrics.
    listenerBus.start();
    listenerBus.postEnvironmentUpdate(confMap);
    long appStartMs = System.currentTimeMillis();
    listenerBus.postApplicationStart(APP_NAME, appId, appStartMs);
    for (DriverPlugin plugin : driverPlugins.values()) plugin.registerMetrics(appId, pluginContext);

    // The cluster manager grants executors after a while: the application's resource wait.
    Thread.sleep(executorDelayMs);
    long executorsRequestedMs = System.currentTimeMillis();
    launchExecutors(rpcServer.getLocalPort());
    long deadlineMs = System.currentTimeMillis() + 60_000;
    while (launchedExecutors() < executorCount) {
      if (nextInbox(deadlineMs) == null) {
        throw new IllegalStateException(
            "only " + launchedExecutors() + " of " + executorCount + " executors came up");
      }
    }
    long firstExecutorAddedMs = Long.MAX_VALUE;
    for (ExecutorLink link : executors.values()) {
      firstExecutorAddedMs = Math.min(firstExecutorAddedMs, link.addedTimeMs);
    }
    log("executors up " + (firstExecutorAddedMs - appStartMs) + " ms after the application start");
    long beforeJobsScrapeMs = waitForScrapeAfter(System.currentTimeMillis());

    // Every stage has at most one task per core, so no task ever waits for a free slot: the only
    // resource wait is the one before the first executor.
    List<StageSpec> stages = new ArrayList<>();
    stages.add(new StageSpec(0, 0, "serialize object graphs", E2eWorkloads.SERIALIZE,
        new int[] {300, 300, 300, 300}, -1));
    // Five tasks (the live skew ratio needs five successful ones); partition 0 holds 10x the data.
    stages.add(new StageSpec(1, 1, "skewed aggregate", E2eWorkloads.SKEWED_AGGREGATE,
        new int[] {600, 60, 60, 60, 60}, -1));
    stages.add(new StageSpec(2, 2, "write files", E2eWorkloads.WRITE_FILES,
        new int[] {4, 4, 4, 4}, 1));
    for (StageSpec stage : stages) {
      if (stage.units.length > executorCount * coresPerExecutor) {
        throw new IllegalArgumentException("stage " + stage.stageId + " has more tasks than cores");
      }
    }
    List<String> stageJson = new ArrayList<>();
    for (StageSpec stage : stages) stageJson.add(runStage(stage));

    // SparkContext.stop: ApplicationEnd, executors stopped (their plugins flush), listener bus
    // drained, then the driver plugins' shutdown.
    long appEndMs = System.currentTimeMillis();
    listenerBus.postApplicationEnd(appEndMs);
    stopping = true;
    for (ExecutorLink link : executors.values()) link.send(new E2eWire.StopExecutor());
    for (Process process : executorProcesses) {
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        problem("an executor did not stop within 60 s");
        process.destroyForcibly();
      } else if (process.exitValue() != 0) {
        problem("an executor exited with " + process.exitValue());
      }
    }
    // Executors' last batches go through receive before the final scrape: every link read to
    // its end, every message it carried handled.
    long drainDeadlineMs = System.currentTimeMillis() + 10_000;
    while ((linksClosed.get() < executorCount
               || dispatcherHandled.get() < dispatcherEnqueued.get())
        && System.currentTimeMillis() < drainDeadlineMs) {
      Thread.sleep(20);
    }
    if (dispatcherHandled.get() < dispatcherEnqueued.get()) {
      problem("the dispatcher still holds " + (dispatcherEnqueued.get() - dispatcherHandled.get())
          + " messages after 10 s");
    }
    listenerBus.stop();
    long finalScrapeMs = waitForScrapeAfter(System.currentTimeMillis());
    String aggregatorStatus = io.sparkprof.NativeAggregator.status();
    for (DriverPlugin plugin : driverPlugins.values()) plugin.shutdown();
    rpcServer.close();

    List<String> problemsJson = new ArrayList<>();
    synchronized (problems) {
      for (String problem : problems) problemsJson.add(jsonString(problem));
    }
    String result = new JsonObject()
        .add("application_id", appId)
        .add("application_name", APP_NAME)
        .add("scrape_job", SCRAPE_JOB)
        .add("metrics_port", metricsPort)
        .add("executors", executorCount)
        .add("cores_per_executor", coresPerExecutor)
        .add("executor_delay_ms", executorDelayMs)
        .add("application_start_ms", appStartMs)
        .add("executors_requested_ms", executorsRequestedMs)
        .add("first_executor_added_ms", firstExecutorAddedMs)
        .add("before_jobs_scrape_ms", beforeJobsScrapeMs)
        .add("application_end_ms", appEndMs)
        .add("final_scrape_ms", finalScrapeMs)
        .add("plugin_messages", pluginMessages.get())
        .add("plugin_message_bytes", pluginMessageBytes.get())
        .add("listener_events", listenerBus.delivered())
        .add("listeners", sparkContext.listeners.size())
        .add("aggregator_status", aggregatorStatus)
        .raw("stages", "[" + String.join(",", stageJson) + "]")
        .raw("problems", "[" + String.join(",", problemsJson) + "]")
        .toString();
    writeAtomically(workDir.resolve("result.json"), result + "\n");
    log("done: " + pluginMessages.get() + " plugin messages, " + problems.size() + " problems");
    return 0;
  }

  public static void main(String[] args) throws Exception {
    E2eDriver driver = new E2eDriver(args);
    int code;
    try {
      code = driver.run();
    } catch (Exception e) {
      e.printStackTrace();
      code = 1;
    } finally {
      for (Process process : driver.executorProcesses) process.destroyForcibly();
    }
    System.exit(code);
  }
}
