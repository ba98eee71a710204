package io.sparkprof;

import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;

/**
 * Executor side: names the native agent's batches with this executor's id, tags each task thread
 * with (stage, stage attempt, task attempt id) for the agent, and every
 * {@code spark.sparkprof.flushInterval} sends the agent's batch to the driver. With {@code
 * spark.sparkprof.s3aMetrics.enabled}, each task's S3A work (per-thread Hadoop statistics read
 * at its start and end, {@link S3aStatistics}) goes into the same batches.
 *
 * <p>The task hooks run on the task thread, must cost nanoseconds and never throw: Spark would
 * only log the exception, but a throwing hook still costs the task a stack trace.
 */
public final class SparkProfExecutorPlugin implements ExecutorPlugin {
  /** Per-thread task ids: TaskContext is already unset when the end hooks run. */
  private static final class TaskIds {
    boolean tagged;
    int stageId;
    int stageAttempt;
    long taskAttemptId;
    S3aStatistics.TaskStart s3aStart;  // the task start's S3A baseline; null when not measured
  }

  private static final ThreadLocal<TaskIds> CURRENT =
      ThreadLocal.withInitial(TaskIds::new);

  /**
   * True once an executor plugin in this JVM drains the agent (local mode: the driver's JVM);
   * the driver plugin then leaves the agent to it.
   */
  static volatile boolean drainsThisJvm;

  private volatile boolean active;
  private PluginContext context;
  private ScheduledExecutorService flusher;
  private final Object flushLock = new Object();
  private final AtomicLong batchesSent = new AtomicLong();
  private final AtomicLong sendFailures = new AtomicLong();
  private volatile boolean sendFailureLogged;
  private S3aStatistics s3a;  // null: S3A statistics off or no Hadoop in this JVM
  private PythonWorkerProfiling python;  // null: the Python workers are not sampled

  @Override
  public void init(PluginContext ctx, Map<String, String> extraConf) {
    try {
      Log.routeNativeLibraries();
      SparkProfConfig config = SparkProfConfig.from(ctx.conf());
      if (!config.problems().isEmpty()) Log.warn(config.problems());
      if (!config.enabled()) return;
      // Plugin-only install: no -agentpath, so start the copy inside this jar (its failure
      // reason is logged once by startFromJar; profiling stays off).
      context = ctx;  // even without the agent: the final marker tells the driver not to wait
      if (!NativeAgent.isLoaded()) NativeAgent.startFromJar(config.agentOptions());
      if (!NativeAgent.isLoaded()) return;
      nameExecutor(ctx.executorID());
      python = PythonWorkerProfiling.setUp(ctx.conf(), ctx.executorID(), config,
          extraConf == null ? null : extraConf.get(PythonWorkerProfiling.DRIVER_PYTHON_EXEC));
      if (config.s3aMetricsEnabled()) {
        s3a = S3aStatistics.createOrNull(SparkProfExecutorPlugin.class.getClassLoader());
      }
      flusher = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "sparkprof-flush");
        thread.setDaemon(true);
        return thread;
      });
      long intervalMs = config.flushIntervalMs();
      flusher.scheduleWithFixedDelay(this::flush, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
      active = true;
      drainsThisJvm = true;
    } catch (RuntimeException | LinkageError e) {
      Log.warn("executor plugin disabled: " + e);
    }
  }

  /** Tells the agent which executor this is, before the first batch; never throws. */
  private static void nameExecutor(String executorId) {
    try {
      NativeAgent.nameExecutor(executorId);
    } catch (RuntimeException | LinkageError e) {
      // E.g. an older libsparkprof.so without setExecutorId: profiling goes on regardless.
      Log.warn("executor " + executorId + ": could not pass the executor id to the "
          + "native agent; its batches keep the agent's default id: " + e);
    }
  }

  @Override
  public void onTaskStart() {
    if (!active) return;
    try {
      TaskContext task = TaskContext.get();
      if (task == null) return;
      TaskIds ids = CURRENT.get();
      ids.stageId = task.stageId();
      ids.stageAttempt = task.stageAttemptNumber();
      ids.taskAttemptId = task.taskAttemptId();
      ids.tagged = true;
      NativeAgent.tagCurrentThread(ids.stageId, ids.stageAttempt, ids.taskAttemptId);
      if (s3a != null) ids.s3aStart = s3a.taskStarted();
    } catch (RuntimeException | LinkageError e) {
      // Never fail a task for the profiler; the thread simply stays untagged.
    }
  }

  @Override
  public void onTaskSucceeded() {
    endTask();
  }

  @Override
  public void onTaskFailed(TaskFailedReason failureReason) {
    endTask();
  }

  private void endTask() {
    if (!active) return;
    try {
      TaskIds ids = CURRENT.get();
      if (!ids.tagged) return;
      ids.tagged = false;
      NativeAgent.untagCurrentThread();
      if (s3a != null && ids.s3aStart != null) {
        s3a.taskEnded(ids.stageId, ids.stageAttempt, ids.s3aStart);
        ids.s3aStart = null;
      }
    } catch (RuntimeException | LinkageError e) {
      // As above: never fail a task.
    }
  }

  private boolean sparkMemoryFailed;

  /**
   * Spark's execution and storage memory in use (its MemoryManager, on and off heap) to the agent
   * for the batch about to be drained. Two long reads under the manager's lock; a Spark without
   * them is tried once.
   */
  private void sendSparkMemory() {
    if (sparkMemoryFailed) return;
    try {
      org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
      if (env == null) return;
      org.apache.spark.memory.MemoryManager manager = env.memoryManager();
      NativeAgent.setSparkMemory(manager.executionMemoryUsed(), manager.storageMemoryUsed());
    } catch (RuntimeException | LinkageError e) {
      sparkMemoryFailed = true;
    }
  }

  /** Drains the agent and sends one batch; runs on the flush thread and at shutdown. */
  void flush() {
    synchronized (flushLock) {
      try {
        if (s3a != null) {
          long[] rows = s3a.takeRows();
          if (rows.length > 0) NativeAgent.addS3aRows(rows, S3aStatistics.ROW_LONGS);
        }
        if (python != null) python.collect();
        sendSparkMemory();
        byte[] batch = NativeAgent.drainBatchOrNull();
        if (batch == null) return;
        context.send(batch);
        batchesSent.incrementAndGet();
      } catch (Exception | LinkageError e) {
        sendFailures.incrementAndGet();
        if (!sendFailureLogged) {
          sendFailureLogged = true;
          Log.warn("could not send a profile batch to the driver (further failures "
              + "are counted, not logged): " + e);
        }
      }
    }
  }

  /**
   * Sends what the agent still holds, then the final marker ({@link #FINAL_MARKER} + executor id)
   * behind it on the same connection, so the driver knows this executor's profile is complete
   * and can write the application's report (it waits for every executor's marker, bounded).
   */
  @Override
  public void shutdown() {
    if (active) {
      active = false;
      flusher.shutdown();
      try {
        flusher.awaitTermination(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      flush();
    }
    PluginContext ctx = context;
    if (ctx == null) return;
    try {
      ctx.send(FINAL_MARKER + ctx.executorID());
    } catch (Exception | LinkageError e) {
      // The driver is gone or going: it stops waiting on its own.
    }
  }

  /** Prefix of the String an executor sends last; the executor id follows. */
  static final String FINAL_MARKER = "sparkprof:final-batch:";

  long batchesSent() {
    return batchesSent.get();
  }

  long sendFailures() {
    return sendFailures.get();
  }
}
