import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.SparkContext;
import org.apache.spark.Success$;
import org.apache.spark.TaskEndReason;
import org.apache.spark.executor.InputMetrics;
import org.apache.spark.executor.OutputMetrics;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.JobSucceeded$;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerApplicationStart;
import org.apache.spark.scheduler.SparkListenerEnvironmentUpdate;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
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
import scala.Option;
import scala.Tuple2;
import scala.collection.FakeSeq;

/**
 * LiveListenerBus with its one "shared" queue: events posted before start() wait, then every
 * listener the plugins added with SparkContext.addSparkListener gets each event in posting order
 * on one thread named like Spark's. A listener that throws is reported (Spark logs it) and the
 * bus goes on.
 */
final class E2eListenerBus {
  private static final Object STOP = new Object();

  private final SparkContext sparkContext;
  private final Consumer<String> problems;
  private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
  private final AtomicLong delivered = new AtomicLong();
  private Thread thread;

  E2eListenerBus(SparkContext sparkContext, Consumer<String> problems) {
    this.sparkContext = sparkContext;
    this.problems = problems;
  }

  private static final class Event {
    final String name;
    final Consumer<SparkListenerInterface> delivery;

    Event(String name, Consumer<SparkListenerInterface> delivery) {
      this.name = name;
      this.delivery = delivery;
    }
  }

  void start() {
    thread = new Thread(() -> {
      while (true) {
        Object item;
        try {
          item = queue.take();
        } catch (InterruptedException e) {
          return;
        }
        if (item == STOP) return;
        Event event = (Event) item;
        for (SparkListenerInterface listener : sparkContext.listeners) {
          try {
            event.delivery.accept(listener);
          } catch (Throwable t) {
            problems.accept("listener " + listener.getClass().getName() + " threw on "
                + event.name + ": " + t);
          }
        }
        delivered.incrementAndGet();
      }
    }, "spark-listener-group-shared");
    thread.setDaemon(true);
    thread.start();
  }

  /** Delivers what is queued, then stops the thread (bounded). */
  void stop() throws InterruptedException {
    queue.add(STOP);
    if (thread != null) thread.join(TimeUnit.SECONDS.toMillis(30));
  }

  long delivered() {
    return delivered.get();
  }

  private void post(String name, Consumer<SparkListenerInterface> delivery) {
    queue.add(new Event(name, delivery));
  }

  void postEnvironmentUpdate(Map<String, String> sparkProperties) {
    List<Tuple2<String, String>> properties = new ArrayList<>();
    for (Map.Entry<String, String> entry : sparkProperties.entrySet()) {
      properties.add(new Tuple2<>(entry.getKey(), entry.getValue()));
    }
    List<Tuple2<String, String>> jvm = new ArrayList<>();
    jvm.add(new Tuple2<>("Java Version", System.getProperty("java.version")));
    jvm.add(new Tuple2<>("Java Home", System.getProperty("java.home")));
    List<Tuple2<String, scala.collection.Iterable<Tuple2<String, String>>>> details =
        new ArrayList<>();
    details.add(new Tuple2<>("JVM Information", new FakeSeq<>(jvm)));
    details.add(new Tuple2<>("Spark Properties", new FakeSeq<>(properties)));
    final SparkListenerEnvironmentUpdate event =
        new SparkListenerEnvironmentUpdate(new FakeSeq<>(details));
    post("EnvironmentUpdate", listener -> listener.onEnvironmentUpdate(event));
  }

  void postApplicationStart(String appName, String appId, long timeMs) {
    final SparkListenerApplicationStart event = new SparkListenerApplicationStart(appName,
        Option.apply(appId), timeMs, System.getProperty("user.name", "e2e"), Option.empty());
    post("ApplicationStart", listener -> listener.onApplicationStart(event));
  }

  void postExecutorAdded(long timeMs, String executorId, String host, int cores) {
    final SparkListenerExecutorAdded event =
        new SparkListenerExecutorAdded(timeMs, executorId, new ExecutorInfo(host, cores));
    post("ExecutorAdded", listener -> listener.onExecutorAdded(event));
  }

  /** A new stage attempt's StageInfo; the same object travels in every event of the stage. */
  static StageInfo stageInfo(int stageId, String name, int numTasks) {
    return new StageInfo(stageId, 0, name, numTasks, new FakeSeq<>(), "e2e harness stage");
  }

  void postJobStart(int jobId, long timeMs, StageInfo stage) {
    Properties properties = new Properties();
    properties.setProperty("spark.job.description", stage.name());
    final SparkListenerJobStart event =
        new SparkListenerJobStart(jobId, timeMs, new FakeSeq<>(stage), properties);
    post("JobStart", listener -> listener.onJobStart(event));
  }

  void postStageSubmitted(StageInfo stage, long submittedMs) {
    stage.setSubmissionTime(Option.apply((Object) submittedMs));
    final SparkListenerStageSubmitted event = new SparkListenerStageSubmitted(stage, new Properties());
    post("StageSubmitted", listener -> listener.onStageSubmitted(event));
  }

  /** TaskStart; the TaskInfo returned is the one TaskEnd carries (Spark updates it in place). */
  TaskInfo postTaskStart(E2eWire.LaunchTask task, String executorId, String host,
      long launchTimeMs) {
    TaskInfo info = new TaskInfo(task.taskId, task.index, task.attemptNumber, task.partitionId,
        launchTimeMs, executorId, host, "PROCESS_LOCAL", false);
    final SparkListenerTaskStart event =
        new SparkListenerTaskStart(task.stageId, task.stageAttempt, info);
    post("TaskStart", listener -> listener.onTaskStart(event));
    return info;
  }

  void postTaskEnd(E2eWire.LaunchTask task, TaskInfo info, long finishTimeMs,
      E2eWire.StatusUpdate status) {
    info.setFinishTime(finishTimeMs).setFailed(!status.success);
    TaskEndReason reason = status.success
        ? Success$.MODULE$
        : new ExceptionFailure(status.errorClass, status.error, status.errorStack);
    TaskMetrics metrics = new TaskMetrics()
        .setExecutorDeserializeTime(status.deserializeTimeMs)
        .setExecutorDeserializeCpuTime(status.deserializeCpuTimeNs)
        .setExecutorRunTime(status.runTimeMs)
        .setExecutorCpuTime(status.cpuTimeNs)
        .setResultSize(status.resultSizeBytes)
        .setJvmGCTime(status.gcTimeMs)
        .setResultSerializationTime(status.resultSerializationTimeMs)
        .setPeakExecutionMemory(status.peakExecutionMemoryBytes)
        .setInputMetrics(new InputMetrics().setRecordsRead(status.recordsRead))
        .setOutputMetrics(new OutputMetrics()
            .setBytesWritten(status.bytesWritten)
            .setRecordsWritten(status.recordsWritten));
    final SparkListenerTaskEnd event = new SparkListenerTaskEnd(
        task.stageId, task.stageAttempt, "ResultTask", reason, info, metrics);
    post("TaskEnd", listener -> listener.onTaskEnd(event));
  }

  void postStageCompleted(StageInfo stage, long completedMs) {
    stage.setCompletionTime(Option.apply((Object) completedMs));
    final SparkListenerStageCompleted event = new SparkListenerStageCompleted(stage);
    post("StageCompleted", listener -> listener.onStageCompleted(event));
  }

  void postJobEnd(int jobId, long timeMs) {
    final SparkListenerJobEnd event = new SparkListenerJobEnd(jobId, timeMs, JobSucceeded$.MODULE$);
    post("JobEnd", listener -> listener.onJobEnd(event));
  }

  void postApplicationEnd(long timeMs) {
    final SparkListenerApplicationEnd event = new SparkListenerApplicationEnd(timeMs);
    post("ApplicationEnd", listener -> listener.onApplicationEnd(event));
  }
}
