import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * One executor JVM of the e2e test, playing CoarseGrainedExecutorBackend and Executor: fetches the
 * conf from the driver, registers, builds the plugins named in spark.plugins (init with the
 * plugin's extra conf), then runs the tasks the driver launches on a pool of task threads the way
 * Executor.TaskRunner and Task.run do (thread renamed, TaskContext set, onTaskStart, the task,
 * TaskContext unset, onTaskSucceeded/onTaskFailed, status update). PluginContext.send goes to the
 * driver over the loopback link, Java-serialized like Spark's RPC.
 *
 * <p>Usage: E2eExecutor DRIVER_PORT EXECUTOR_ID CORES
 */
public final class E2eExecutor {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final String executorId;
  private final int cores;
  private final Socket socket;
  private final DataOutputStream out;
  private final DataInputStream in;
  private final List<ExecutorPlugin> plugins = new ArrayList<>();
  private final AtomicLong pluginMessagesSent = new AtomicLong();
  private long flushIntervalMs = 5000;

  private E2eExecutor(String executorId, int cores, Socket socket) throws IOException {
    this.executorId = executorId;
    this.cores = cores;
    this.socket = socket;
    this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
  }

  void send(Serializable message) throws IOException {
    synchronized (out) {
      E2eWire.write(out, message);
    }
  }

  /** PluginContextImpl of the executor: send() is fire-and-forget to the driver endpoint. */
  final class ExecutorPluginContext implements PluginContext {
    private final String pluginName;
    private final SparkConf conf;

    ExecutorPluginContext(String pluginName, SparkConf conf) {
      this.pluginName = pluginName;
      this.conf = conf;
    }

    @Override public SparkConf conf() { return conf; }
    @Override public String executorID() { return executorId; }
    @Override public String hostname() { return "127.0.0.1"; }

    @Override
    public void send(Object message) throws IOException {
      if (!(message instanceof Serializable)) {
        throw new java.io.NotSerializableException(message.getClass().getName());
      }
      E2eExecutor.this.send(new E2eWire.PluginMessage(pluginName, message));
      pluginMessagesSent.incrementAndGet();
    }

    @Override
    public Object ask(Object message) {
      throw new UnsupportedOperationException("ask is not used by sparkprof");
    }
  }

  /** The TaskContext Task.run sets for the task's thread. */
  static final class E2eTaskContext extends TaskContext {
    private final E2eWire.LaunchTask task;

    E2eTaskContext(E2eWire.LaunchTask task) {
      this.task = task;
    }

    @Override public int stageId() { return task.stageId; }
    @Override public int stageAttemptNumber() { return task.stageAttempt; }
    @Override public long taskAttemptId() { return task.taskId; }
    public int partitionId() { return task.partitionId; }
    public int attemptNumber() { return task.attemptNumber; }
    public int numPartitions() { return task.numPartitions; }
  }

  static long gcTimeMs() {
    long total = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      total += Math.max(0, gc.getCollectionTime());
    }
    return total;
  }

  /** Executor.TaskRunner.run for one task, on a task launch thread. */
  void runTask(E2eWire.LaunchTask task) {
    Thread thread = Thread.currentThread();
    thread.setName("Executor task launch worker for task " + task.index + "." + task.attemptNumber
        + " in stage " + task.stageId + "." + task.stageAttempt + " (TID " + task.taskId + ")");
    E2eWire.StatusUpdate status = new E2eWire.StatusUpdate();
    status.taskId = task.taskId;
    status.executorId = executorId;
    long deserializeStartNs = System.nanoTime();
    long deserializeCpuStartNs = THREADS.getCurrentThreadCpuTime();
    E2eTaskContext context = new E2eTaskContext(task);
    status.deserializeTimeMs = (System.nanoTime() - deserializeStartNs) / 1_000_000;
    status.deserializeCpuTimeNs = THREADS.getCurrentThreadCpuTime() - deserializeCpuStartNs;

    long gcStartMs = gcTimeMs();
    long startNs = System.nanoTime();
    long cpuStartNs = THREADS.getCurrentThreadCpuTime();
    E2eWorkloads.TaskOutput output = null;
    Throwable failure = null;
    // Task.run: context set, onTaskStart on this thread, the task, context unset in finally.
    TaskContext.setForTest(context);
    try {
      for (ExecutorPlugin plugin : plugins) {
        try {
          plugin.onTaskStart();
        } catch (Throwable t) {
          log("onTaskStart threw (Spark logs and goes on): " + t);
        }
      }
      output = E2eWorkloads.run(task.workload, task.partitionId, task.units, task.outputDir);
      if (task.injectFailure) throw new IOException("injected failure of task " + task.taskId);
    } catch (Throwable t) {
      failure = t;
    } finally {
      TaskContext.unsetForTest();
    }
    status.runTimeMs = (System.nanoTime() - startNs) / 1_000_000;
    status.cpuTimeNs = THREADS.getCurrentThreadCpuTime() - cpuStartNs;
    status.gcTimeMs = gcTimeMs() - gcStartMs;

    if (failure == null) {
      long serializeStartNs = System.nanoTime();
      try {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream objects = new ObjectOutputStream(bytes)) {
          objects.writeObject(output);
        }
        status.resultSizeBytes = bytes.size();
      } catch (IOException e) {
        failure = e;
      }
      status.resultSerializationTimeMs = (System.nanoTime() - serializeStartNs) / 1_000_000;
      status.recordsRead = output.recordsRead;
      status.bytesWritten = output.bytesWritten;
      status.recordsWritten = output.recordsWritten;
      status.peakExecutionMemoryBytes = output.recordsRead * 8;
    }
    status.success = failure == null;
    if (failure == null) {
      for (ExecutorPlugin plugin : plugins) {
        try {
          plugin.onTaskSucceeded();
        } catch (Throwable t) {
          log("onTaskSucceeded threw: " + t);
        }
      }
    } else {
      status.error = String.valueOf(failure.getMessage());
      status.errorClass = failure.getClass().getName();
      java.io.StringWriter stack = new java.io.StringWriter();
      failure.printStackTrace(new java.io.PrintWriter(stack));
      status.errorStack = stack.toString();
      final String message = failure.toString();
      TaskFailedReason reason = new TaskFailedReason() {
        @Override public String toErrorString() { return message; }
        @Override public boolean countTowardsTaskFailures() { return true; }
      };
      for (ExecutorPlugin plugin : plugins) {
        try {
          plugin.onTaskFailed(reason);
        } catch (Throwable t) {
          log("onTaskFailed threw: " + t);
        }
      }
    }
    try {
      send(status);
    } catch (IOException e) {
      log("status update of task " + task.taskId + " not sent: " + e);
    }
  }

  /**
   * Answers once every sample taken before the barrier has been sent: the plugin's flusher drains
   * the agent and sends every flush interval, so two sends after the barrier cover a drain that
   * started after it. With nothing to send (no sends at all), a few quiet intervals suffice.
   */
  void answerBarrier(final E2eWire.FlushBarrier barrier) {
    final long sendsAtBarrier = pluginMessagesSent.get();
    Thread waiter = new Thread(() -> {
      long startMs = System.currentTimeMillis();
      while (true) {
        long sends = pluginMessagesSent.get() - sendsAtBarrier;
        long elapsedMs = System.currentTimeMillis() - startMs;
        if (sends >= 2 || (sends == 1 && elapsedMs > 5 * flushIntervalMs)
            || elapsedMs > 10 * flushIntervalMs) {
          break;
        }
        try {
          Thread.sleep(10);
        } catch (InterruptedException e) {
          return;
        }
      }
      try {
        send(new E2eWire.FlushBarrierDone(executorId, barrier.id, pluginMessagesSent.get()));
      } catch (IOException e) {
        log("barrier answer not sent: " + e);
      }
    }, "e2e-flush-barrier");
    waiter.setDaemon(true);
    waiter.start();
  }

  static long parseMs(String value, long fallback) {
    if (value == null) return fallback;
    String v = value.trim().toLowerCase(java.util.Locale.ROOT);
    try {
      if (v.endsWith("ms")) return Long.parseLong(v.substring(0, v.length() - 2));
      if (v.endsWith("s")) return 1000 * Long.parseLong(v.substring(0, v.length() - 1));
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      return fallback;
    }
  }

  int run() throws Exception {
    send(new E2eWire.RetrieveSparkAppConfig());
    Object reply = E2eWire.read(in);
    if (!(reply instanceof E2eWire.SparkAppConfig)) throw new IOException("no conf: " + reply);
    Map<String, String> confMap = ((E2eWire.SparkAppConfig) reply).conf;
    SparkConf conf = new SparkConf();
    for (Map.Entry<String, String> entry : confMap.entrySet()) conf.set(entry.getKey(), entry.getValue());
    flushIntervalMs = Math.max(100, parseMs(confMap.get("spark.sparkprof.flushInterval"), 5000));

    send(new E2eWire.RegisterExecutor(executorId, InetAddress.getLoopbackAddress().getHostAddress(),
        cores, ProcessHandle.current().pid()));
    reply = E2eWire.read(in);
    if (!(reply instanceof E2eWire.RegisteredExecutor)) throw new IOException("not registered: " + reply);

    // Executor's constructor: ExecutorPluginContainer loads spark.plugins and calls init.
    String pluginList = confMap.getOrDefault("spark.plugins", "");
    for (String className : pluginList.split(",")) {
      className = className.trim();
      if (className.isEmpty()) continue;
      SparkPlugin plugin =
          (SparkPlugin) Class.forName(className).getDeclaredConstructor().newInstance();
      ExecutorPlugin executorPlugin = plugin.executorPlugin();
      if (executorPlugin == null) continue;
      String prefix = "spark.plugins.internal.conf." + className + ".";
      Map<String, String> extraConf = new HashMap<>();
      for (Map.Entry<String, String> entry : confMap.entrySet()) {
        if (entry.getKey().startsWith(prefix)) {
          extraConf.put(entry.getKey().substring(prefix.length()), entry.getValue());
        }
      }
      executorPlugin.init(new ExecutorPluginContext(className, conf), extraConf);
      plugins.add(executorPlugin);
    }
    send(new E2eWire.LaunchedExecutor(executorId));

    final AtomicInteger threadNumber = new AtomicInteger();
    ExecutorService taskLaunchers = Executors.newCachedThreadPool(runnable -> {
      Thread thread = new Thread(runnable,
          "Executor task launch worker-" + threadNumber.getAndIncrement());
      thread.setDaemon(true);
      return thread;
    });
    boolean stopped = false;
    while (!stopped) {
      Object message;
      try {
        message = E2eWire.read(in);
      } catch (IOException e) {
        log("link to the driver broke: " + e);
        message = null;
      }
      if (message == null) break;
      if (message instanceof E2eWire.LaunchTask) {
        final E2eWire.LaunchTask task = (E2eWire.LaunchTask) message;
        taskLaunchers.execute(() -> runTask(task));
      } else if (message instanceof E2eWire.FlushBarrier) {
        answerBarrier((E2eWire.FlushBarrier) message);
      } else if (message instanceof E2eWire.StopExecutor) {
        stopped = true;
      } else {
        log("unexpected message " + message.getClass().getName());
      }
    }
    // Executor.stop: running tasks finish, then the plugins shut down (the last flush is sent).
    taskLaunchers.shutdown();
    taskLaunchers.awaitTermination(30, TimeUnit.SECONDS);
    for (ExecutorPlugin plugin : plugins) {
      try {
        plugin.shutdown();
      } catch (Throwable t) {
        log("plugin shutdown threw: " + t);
      }
    }
    log("stopping; plugin messages sent: " + pluginMessagesSent.get());
    socket.close();
    return stopped ? 0 : 1;
  }

  void log(String message) {
    System.err.println("e2e executor " + executorId + ": " + message);
  }

  public static void main(String[] args) throws Exception {
    int driverPort = Integer.parseInt(args[0]);
    String executorId = args[1];
    int cores = Integer.parseInt(args[2]);
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), driverPort);
    socket.setTcpNoDelay(true);
    int code = new E2eExecutor(executorId, cores, socket).run();
    System.exit(code);
  }
}
