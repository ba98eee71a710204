import io.sparkprof.NativeAggregator;
import io.sparkprof.SparkProfPlugin;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Properties;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.ExecutorLostFailure;
import org.apache.spark.FetchFailed;
import org.apache.spark.Resubmitted$;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.Success$;
import org.apache.spark.TaskKilled;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.JobFailed;
import org.apache.spark.scheduler.JobSucceeded$;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerApplicationStart;
import org.apache.spark.scheduler.SparkListenerEnvironmentUpdate;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerInterface;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.scheduler.TaskInfo;
import org.apache.spark.scheduler.cluster.ExecutorInfo;
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd;
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart;
import org.apache.spark.storage.BlockManagerId;
import scala.Option;
import scala.Tuple2;
import scala.collection.FakeSeq;

/**
 * The listener bridge end to end in one JVM (the library loaded with -agentpath): Spark's
 * listener events built from the fakes, in Spark's order, go through SparkProfListener to the
 * native live model; /metrics must show what the harness did, hostile strings must arrive intact
 * (no line rejected), null and missing members must never throw, and the application's end must
 * write the four reports.
 *
 * <p>Usage: ListenerHarness WORKDIR
 */
public final class ListenerHarness {
  static final String APP_ID = "app-20260101000000-0007";
  /** Quotes, backslashes, control characters, non-ASCII, a surrogate pair and a lone surrogate. */
  static final String HOSTILE =
      "q\"uote\\ back\nline\ttab \u0001 caf\u00e9 \u2603 \ud83d\ude00 lone\ud800 end";

  static int failures = 0;

  static void check(boolean condition, String what) {
    System.out.println((condition ? "ok   " : "FAIL ") + what);
    if (!condition) failures++;
  }

  static TaskInfo taskInfo(long id, int index, long launch, String executor) {
    return new TaskInfo(id, index, 0, index, launch, executor, "host-1", "PROCESS_LOCAL", false);
  }

  static TaskMetrics metrics(long runMs, long memorySpill, long diskSpill, long outputBytes) {
    TaskMetrics m = new TaskMetrics().setExecutorRunTime(runMs).setExecutorCpuTime(runMs * 900_000)
        .setJvmGCTime(runMs / 20).setMemoryBytesSpilled(memorySpill).setDiskBytesSpilled(diskSpill);
    m.outputMetrics().setBytesWritten(outputBytes).setRecordsWritten(outputBytes / 100);
    return m;
  }

  /** Every call must return normally: the listener never throws into Spark's listener bus. */
  static void noThrow(String what, Runnable call) {
    try {
      call.run();
      check(true, "no throw: " + what);
    } catch (Throwable t) {
      check(false, "no throw: " + what + " (" + t + ")");
    }
  }

  public static void main(String[] args) throws Exception {
    Path work = Paths.get(args[0]);
    Path outDir = work.resolve("out");
    PluginHarness.deleteTree(outDir);
    SparkConf conf = new SparkConf()
        .set("spark.app.name", HOSTILE)
        .set("spark.sparkprof.prometheus.port", "0")
        .set("spark.sparkprof.outputDir", outDir.toString())
        .set("spark.sparkprof.metricsRefreshInterval", "1ms");  // every scrape sees every event
    DriverPlugin driver = new SparkProfPlugin().driverPlugin();
    SparkContext sc = new SparkContext().setVersion("3.5.1");
    PluginHarness.FakePluginContext context =
        new PluginHarness.FakePluginContext(conf, "driver", null);
    driver.init(sc, context);
    driver.registerMetrics(APP_ID, context);
    check(sc.listeners.size() == 1, "the driver plugin registered its listener");
    java.util.regex.Matcher portMatch =
        java.util.regex.Pattern.compile("\"port\":(\\d+)").matcher(NativeAggregator.status());
    check(portMatch.find(), "aggregator running");
    String metricsUrl = "http://127.0.0.1:" + portMatch.group(1) + "/metrics";
    SparkListenerInterface listener = sc.listeners.get(0);

    // Events in the past, so the wall clock is later than all of them.
    final long t0 = System.currentTimeMillis() - 60_000;
    // Null members first (the real start below is the one the model keeps): never thrown.
    noThrow("application start with null members", () -> listener.onApplicationStart(
        new SparkListenerApplicationStart(null, null, t0, null, null)));
    listener.onApplicationStart(new SparkListenerApplicationStart(
        HOSTILE, Option.apply(APP_ID), t0, "user " + HOSTILE, Option.<String>empty()));
    listener.onEnvironmentUpdate(new SparkListenerEnvironmentUpdate(new FakeSeq<>(
        new Tuple2<>("Spark Properties", new FakeSeq<>(
            new Tuple2<>("spark.master", "spark://master:7077"),
            new Tuple2<>("spark.executor.memory", "4g"),
            new Tuple2<>("spark.hostile", HOSTILE))),
        new Tuple2<>("Classpath Entries", new FakeSeq<>(new Tuple2<>("/x.jar", "System"))))));
    // 5 s of waiting for the first executor: spark_resource_wait_seconds must say 5.
    listener.onExecutorAdded(new SparkListenerExecutorAdded(t0 + 5000, "1",
        new ExecutorInfo("host-1", 2)));

    // Job 0, stage 0: 4 tasks on 2 cores, so 2 wait for a slot for 1 s.
    StageInfo stage0 = new StageInfo(0, 0, "map at " + HOSTILE, 4, new FakeSeq<>(), HOSTILE);
    Properties properties = new Properties();
    properties.setProperty("spark.job.description", HOSTILE);
    properties.setProperty("spark.sql.execution.id", "0");
    listener.onOtherEvent(new SparkListenerSQLExecutionStart(0, Option.empty(), HOSTILE, HOSTILE,
        "== Physical Plan ==\n" + HOSTILE, t0 + 5900));
    listener.onJobStart(new SparkListenerJobStart(0, t0 + 6000, new FakeSeq<>(stage0),
        properties));
    stage0.setSubmissionTime(Option.apply((Object) (t0 + 6000)));
    listener.onStageSubmitted(new SparkListenerStageSubmitted(stage0, properties));
    TaskInfo[] tasks = new TaskInfo[4];
    for (int i = 0; i < 2; i++) {
      tasks[i] = taskInfo(i, i, t0 + 6000, "1");
      listener.onTaskStart(new SparkListenerTaskStart(0, 0, tasks[i]));
    }
    String mid = PluginHarness.httpGet(metricsUrl);
    check(PluginHarness.metric(mid, "spark_running_tasks") == 2, "mid-run: 2 running tasks");
    check(PluginHarness.metric(mid, "spark_pending_tasks") == 2, "mid-run: 2 pending tasks");
    check(PluginHarness.metric(mid, "spark_executors") == 1, "mid-run: 1 executor");
    check(PluginHarness.metric(mid, "spark_task_slots") == 2, "mid-run: 2 task slots");

    for (int i = 0; i < 2; i++) {
      tasks[i].setFinishTime(t0 + 7000);
      listener.onTaskEnd(new SparkListenerTaskEnd(0, 0, "ResultTask", Success$.MODULE$, tasks[i],
          metrics(1000, 1 << 20, 1 << 10, 0)));
    }
    for (int i = 2; i < 4; i++) {
      tasks[i] = taskInfo(i, i, t0 + 7000, "1");
      listener.onTaskStart(new SparkListenerTaskStart(0, 0, tasks[i]));
    }
    tasks[2].setFinishTime(t0 + 8000);
    listener.onTaskEnd(new SparkListenerTaskEnd(0, 0, "ResultTask", Success$.MODULE$, tasks[2],
        metrics(1000, 0, 0, 0)));
    // A failed attempt: hostile exception text, no task metrics (Spark may send null).
    tasks[3].setFinishTime(t0 + 7500).setFailed(true);
    listener.onTaskEnd(new SparkListenerTaskEnd(0, 0, "ResultTask",
        new ExceptionFailure("java.lang.IllegalStateException", HOSTILE, HOSTILE), tasks[3],
        null));
    TaskInfo retry = taskInfo(4, 3, t0 + 7500, "1");
    listener.onTaskStart(new SparkListenerTaskStart(0, 0, retry));
    retry.setFinishTime(t0 + 8000);
    listener.onTaskEnd(new SparkListenerTaskEnd(0, 0, "ResultTask", Success$.MODULE$, retry,
        metrics(500, 0, 0, 0)));
    stage0.setCompletionTime(Option.apply((Object) (t0 + 8000)));
    listener.onStageCompleted(new SparkListenerStageCompleted(stage0));
    listener.onJobEnd(new SparkListenerJobEnd(0, t0 + 8000, JobSucceeded$.MODULE$));

    // Job 1, stage 1: a write stage (output, no shuffle output), then a failed job.
    StageInfo stage1 = new StageInfo(1, 0, "save", 2, new FakeSeq<Object>(0), "");
    listener.onJobStart(new SparkListenerJobStart(1, t0 + 9000, new FakeSeq<>(stage1), null));
    stage1.setSubmissionTime(Option.apply((Object) (t0 + 9000)));
    listener.onStageSubmitted(new SparkListenerStageSubmitted(stage1, null));
    for (int i = 0; i < 2; i++) {
      TaskInfo info = taskInfo(10 + i, i, t0 + 9000, "1");
      listener.onTaskStart(new SparkListenerTaskStart(1, 0, info));
      info.setFinishTime(t0 + 10000);
      listener.onTaskEnd(new SparkListenerTaskEnd(1, 0, "ResultTask", Success$.MODULE$, info,
          metrics(1000, 0, 0, 1 << 20)));
    }
    stage1.setCompletionTime(Option.apply((Object) (t0 + 10000)));
    listener.onStageCompleted(new SparkListenerStageCompleted(stage1));
    listener.onJobEnd(new SparkListenerJobEnd(1, t0 + 10000,
        new JobFailed(new RuntimeException(HOSTILE))));
    listener.onOtherEvent(new SparkListenerSQLExecutionEnd(0, t0 + 10100, Option.apply(HOSTILE)));

    String beforeNulls = PluginHarness.httpGet(metricsUrl);
    double rejected =
        PluginHarness.metric(beforeNulls, "sparkprof_driver_events_total{outcome=\"rejected\"}");
    double accepted =
        PluginHarness.metric(beforeNulls, "sparkprof_driver_events_total{outcome=\"accepted\"}");
    check(rejected == 0, "no listener line was rejected by the parser (hostile strings escaped): "
        + rejected);
    check(accepted >= 25, "events accepted: " + accepted);

    // Nulls, missing members and odd reasons: never thrown into Spark (a line the parser refuses
    // is counted, not fatal).
    noThrow("null events", () -> {
      listener.onTaskEnd(null);
      listener.onTaskStart(null);
      listener.onStageCompleted(null);
      listener.onJobStart(null);
      listener.onOtherEvent(null);
      listener.onApplicationStart(null);
      listener.onEnvironmentUpdate(null);
    });
    noThrow("null members", () -> {
      listener.onEnvironmentUpdate(new SparkListenerEnvironmentUpdate(null));
      listener.onExecutorRemoved(new SparkListenerExecutorRemoved(t0 + 10200, "9", null));
      listener.onJobStart(new SparkListenerJobStart(7, t0 + 10200, null, null));
      listener.onJobEnd(new SparkListenerJobEnd(7, t0 + 10200, null));
      StageInfo empty = new StageInfo(7, 0, null, 0, null, null);
      listener.onStageSubmitted(new SparkListenerStageSubmitted(empty, null));
      listener.onStageCompleted(new SparkListenerStageCompleted(empty));
      listener.onTaskStart(new SparkListenerTaskStart(7, 0, null));
      TaskInfo bare = new TaskInfo(70, 0, 0, 0, t0 + 10200, null, null, null, false);
      listener.onTaskStart(new SparkListenerTaskStart(7, 0, bare));
      listener.onTaskEnd(new SparkListenerTaskEnd(7, 0, null, null, bare, new TaskMetrics()));
      listener.onTaskEnd(new SparkListenerTaskEnd(7, 0, "ShuffleMapTask",
          new FetchFailed(null, 3, 1L, 0, 0, null), bare, null));
      listener.onTaskEnd(new SparkListenerTaskEnd(7, 0, "ShuffleMapTask",
          new FetchFailed(new BlockManagerId("2", "host-2", 7337), 3, 1L, 0, 0, HOSTILE), bare,
          null));
      listener.onTaskEnd(new SparkListenerTaskEnd(7, 0, "ResultTask", new TaskKilled(null), bare,
          null));
      listener.onTaskEnd(new SparkListenerTaskEnd(7, 0, "ResultTask",
          new ExecutorLostFailure("9", false, Option.apply(HOSTILE)), bare, null));
      listener.onTaskEnd(new SparkListenerTaskEnd(7, 0, "ResultTask", Resubmitted$.MODULE$, bare,
          null));
      listener.onExecutorAdded(new SparkListenerExecutorAdded(t0 + 10200, null, null));
      listener.onOtherEvent(new SparkListenerEvent() {});
      listener.onOtherEvent(new SparkListenerSQLExecutionStart(1, null, null, null, null, 0));
    });

    String metrics = PluginHarness.httpGet(metricsUrl);
    check(PluginHarness.metric(metrics, "spark_resource_wait_seconds") >= 5.0
            && PluginHarness.metric(metrics, "spark_resource_wait_seconds") <= 5.0 + 1.0 + 0.001,
        "resource wait: 5 s before the executor (+ at most 1 s of tasks waiting for a slot): "
            + PluginHarness.metric(metrics, "spark_resource_wait_seconds"));
    check(PluginHarness.metric(metrics, "spark_phase_breakdown_ratio{phase=\"resource_wait\"}") > 0,
        "resource wait ratio exported");
    check(PluginHarness.metric(metrics, "spark_phase_compute_seconds") > 0, "compute phase > 0");
    check(PluginHarness.metric(metrics, "spark_spill_bytes_total{medium=\"memory\"}") == 2 << 20,
        "memory spill summed: 2 MiB");
    check(PluginHarness.metric(metrics, "spark_spill_bytes_total{medium=\"disk\"}") == 2 << 10,
        "disk spill summed: 2 KiB");
    check(PluginHarness.metric(metrics,
            "spark_task_duration_seconds_count{stage_kind=\"compute\"}") == 4,
        "4 successful compute-stage tasks in the histogram");
    check(PluginHarness.metric(metrics,
            "spark_task_duration_seconds_count{stage_kind=\"write\"}") == 2,
        "2 successful write-stage tasks in the histogram");
    check(metrics.contains("application_id=\"" + APP_ID + "\""), "series carry application_id");
    check(metrics.contains("spark_task_time_seconds_total{application_id=\"" + APP_ID),
        "the category series carry the application labels too");

    listener.onApplicationEnd(new SparkListenerApplicationEnd(t0 + 11000));
    Path appDir = outDir.resolve(APP_ID);
    for (String name : new String[] {"report.txt", "report.json", "report.md", "report.html"}) {
      check(Files.exists(appDir.resolve(name)), "end of application wrote " + name);
    }
    if (Files.exists(appDir.resolve("report.json"))) {
      String json = new String(Files.readAllBytes(appDir.resolve("report.json")),
          StandardCharsets.UTF_8);
      check(json.contains("\"id\": \"" + APP_ID + "\"") || json.contains("\"id\":\"" + APP_ID + "\""),
          "report.json names the application");
      check(json.contains("q\\\"uote\\\\ back"), "the hostile name arrives intact, escaped in JSON");
      check(json.contains("\"failed_jobs\": 1") || json.contains("\"failed_jobs\":1"),
          "the failed job is in the report");
    }
    driver.shutdown();  // the report is not written twice; shutdown after the end is harmless
    check(NativeAggregator.status().contains("\"running\":false"), "driver shutdown stops it");
    System.out.println(failures == 0 ? "PASS" : failures + " check(s) failed");
    System.exit(failures == 0 ? 0 : 1);
  }
}
