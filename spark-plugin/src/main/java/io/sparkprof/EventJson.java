package io.sparkprof;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.ExecutorLostFailure;
import org.apache.spark.FetchFailed;
import org.apache.spark.Success$;
import org.apache.spark.TaskCommitDenied;
import org.apache.spark.TaskEndReason;
import org.apache.spark.TaskKilled;
import org.apache.spark.executor.InputMetrics;
import org.apache.spark.executor.OutputMetrics;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.executor.ShuffleWriteMetrics;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.JobFailed;
import org.apache.spark.scheduler.JobResult;
import org.apache.spark.scheduler.JobSucceeded$;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerApplicationStart;
import org.apache.spark.scheduler.SparkListenerEnvironmentUpdate;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.scheduler.TaskInfo;
import org.apache.spark.scheduler.cluster.ExecutorInfo;
import org.apache.spark.storage.BlockManagerId;
import scala.Option;
import scala.Tuple2;

/**
 * Spark listener events as the JSON lines Spark's JsonProtocol writes to the event log (key names
 * and nesting of spark-facts.md section 4.2, the subset sparkprof's event-log parser reads), so
 * the live feed and {@code sparkprof analyze} share one parser and one model.
 *
 * <p>Every method tolerates null members (a null string becomes "", a null object is left out);
 * accessors whose Scala types differ between Spark builds are read by reflection and walked as
 * {@code scala.collection.Iterable} (spark-api/README.md). Long free text (plans, stack traces)
 * is cut to what the engine keeps.
 */
final class EventJson {
  /** The engine keeps 64 KiB of a physical plan; sending more only costs the listener thread. */
  static final int MAX_PLAN_CHARS = 64 * 1024;

  static final int MAX_TEXT_CHARS = 16 * 1024;

  private static final String SQL_PACKAGE = "org.apache.spark.sql.execution.ui.";
  static final String SQL_EXECUTION_START = SQL_PACKAGE + "SparkListenerSQLExecutionStart";
  static final String SQL_EXECUTION_END = SQL_PACKAGE + "SparkListenerSQLExecutionEnd";
  static final String SQL_DRIVER_ACCUM_UPDATES = SQL_PACKAGE + "SparkListenerDriverAccumUpdates";

  private static final Map<String, Method> METHODS = new ConcurrentHashMap<>();
  private static final Method MISSING;

  static {
    try {
      MISSING = EventJson.class.getDeclaredMethod("missingMarker");
    } catch (NoSuchMethodException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private EventJson() {}

  @SuppressWarnings("unused")
  private static void missingMarker() {}

  static String logStart(String sparkVersion) {
    return new JsonLine().beginObject().field("Event", "SparkListenerLogStart")
        .field("Spark Version", sparkVersion).endObject().toString();
  }

  static String applicationStart(SparkListenerApplicationStart e) {
    JsonLine j = event("SparkListenerApplicationStart").field("App Name", e.appName());
    String id = optionString(e.appId());
    if (id != null) j.field("App ID", id);
    j.field("Timestamp", e.time()).field("User", e.sparkUser());
    String attempt = optionString(e.appAttemptId());
    if (attempt != null) j.field("App Attempt ID", attempt);
    return j.endObject().toString();
  }

  static String applicationEnd(SparkListenerApplicationEnd e) {
    JsonLine j = event("SparkListenerApplicationEnd").field("Timestamp", e.time());
    Object exitCode = optionValue(call(e, "exitCode"));  // Spark 4.0+
    if (exitCode instanceof Number) j.field("ExitCode", ((Number) exitCode).longValue());
    return j.endObject().toString();
  }

  /** Spark Properties, JVM Information and System Properties (the sections the engine reads). */
  static String environmentUpdate(SparkListenerEnvironmentUpdate e) {
    JsonLine j = event("SparkListenerEnvironmentUpdate");
    scala.collection.Iterator<?> sections = iterator(call(e, "environmentDetails"));
    while (sections != null && sections.hasNext()) {
      Object section = sections.next();
      if (!(section instanceof Tuple2)) continue;
      Object name = ((Tuple2<?, ?>) section)._1();
      if (!"Spark Properties".equals(name) && !"JVM Information".equals(name)
          && !"System Properties".equals(name)) {
        continue;
      }
      j.key((String) name).beginObject();
      scala.collection.Iterator<?> pairs = iterator(((Tuple2<?, ?>) section)._2());
      while (pairs != null && pairs.hasNext()) {
        Object pair = pairs.next();
        if (!(pair instanceof Tuple2)) continue;
        Object key = ((Tuple2<?, ?>) pair)._1();
        Object value = ((Tuple2<?, ?>) pair)._2();
        if (key != null) j.field(key.toString(), value == null ? "" : value.toString());
      }
      j.endObject();
    }
    return j.endObject().toString();
  }

  static String executorAdded(SparkListenerExecutorAdded e) {
    JsonLine j = event("SparkListenerExecutorAdded").field("Timestamp", e.time())
        .field("Executor ID", e.executorId());
    ExecutorInfo info = e.executorInfo();
    if (info != null) {
      j.key("Executor Info").beginObject().field("Host", info.executorHost())
          .field("Total Cores", info.totalCores());
      Object profile = call(info, "resourceProfileId");
      if (profile instanceof Number) j.field("Resource Profile Id", ((Number) profile).longValue());
      j.endObject();
    }
    return j.endObject().toString();
  }

  static String executorRemoved(SparkListenerExecutorRemoved e) {
    return event("SparkListenerExecutorRemoved").field("Timestamp", e.time())
        .field("Executor ID", e.executorId()).field("Removed Reason", cut(e.reason()))
        .endObject().toString();
  }

  static String jobStart(SparkListenerJobStart e) {
    JsonLine j = event("SparkListenerJobStart").field("Job ID", e.jobId())
        .field("Submission Time", e.time());
    j.key("Stage Infos").beginArray();
    scala.collection.Iterator<?> stages = iterator(call(e, "stageInfos"));
    while (stages != null && stages.hasNext()) {
      Object stage = stages.next();
      if (stage instanceof StageInfo) stageInfo(j, (StageInfo) stage, false);
    }
    j.endArray();
    j.key("Stage IDs").beginArray();
    scala.collection.Iterator<?> ids = iterator(call(e, "stageIds"));
    while (ids != null && ids.hasNext()) {
      Object id = ids.next();
      if (id instanceof Number) j.value(((Number) id).longValue());
    }
    j.endArray();
    properties(j, e.properties());
    return j.endObject().toString();
  }

  static String jobEnd(SparkListenerJobEnd e) {
    JsonLine j = event("SparkListenerJobEnd").field("Job ID", e.jobId())
        .field("Completion Time", e.time());
    JobResult result = e.jobResult();
    j.key("Job Result").beginObject();
    if (result == null || result instanceof JobSucceeded$) {
      j.field("Result", "JobSucceeded");
    } else {
      j.field("Result", "JobFailed");
      Exception exception = result instanceof JobFailed ? ((JobFailed) result).exception() : null;
      j.key("Exception").beginObject()
          .field("Message", exception == null ? "" : cut(String.valueOf(exception.getMessage())))
          .endObject();
    }
    j.endObject();
    return j.endObject().toString();
  }

  static String stageSubmitted(SparkListenerStageSubmitted e) {
    JsonLine j = event("SparkListenerStageSubmitted");
    if (e.stageInfo() != null) stageInfo(j.key("Stage Info"), e.stageInfo(), false);
    properties(j, e.properties());
    return j.endObject().toString();
  }

  static String stageCompleted(SparkListenerStageCompleted e) {
    JsonLine j = event("SparkListenerStageCompleted");
    if (e.stageInfo() != null) stageInfo(j.key("Stage Info"), e.stageInfo(), true);
    return j.endObject().toString();
  }

  static String taskStart(SparkListenerTaskStart e) {
    JsonLine j = event("SparkListenerTaskStart").field("Stage ID", e.stageId())
        .field("Stage Attempt ID", e.stageAttemptId());
    if (e.taskInfo() != null) taskInfo(j.key("Task Info"), e.taskInfo());
    return j.endObject().toString();
  }

  static String taskEnd(SparkListenerTaskEnd e) {
    JsonLine j = event("SparkListenerTaskEnd").field("Stage ID", e.stageId())
        .field("Stage Attempt ID", e.stageAttemptId()).field("Task Type", e.taskType());
    j.key("Task End Reason");
    taskEndReason(j, e.reason());
    if (e.taskInfo() != null) taskInfo(j.key("Task Info"), e.taskInfo());
    TaskMetrics metrics = e.taskMetrics();  // null for some failed tasks
    if (metrics != null) taskMetrics(j.key("Task Metrics"), metrics);
    return j.endObject().toString();
  }

  /** SQL events arrive through onOtherEvent; null for any other event (not forwarded). */
  static String otherEvent(Object e) {
    String name = e.getClass().getName();
    if (name.equals(SQL_EXECUTION_START)) return sqlExecutionStart(e);
    if (name.equals(SQL_EXECUTION_END)) return sqlExecutionEnd(e);
    if (name.equals(SQL_DRIVER_ACCUM_UPDATES)) return sqlDriverAccumUpdates(e);
    return null;
  }

  /** Compiled against the declarations, called only once the class name matched. */
  private static String sqlExecutionStart(Object event) {
    org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart e =
        (org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart) event;
    JsonLine j = event(SQL_EXECUTION_START).field("executionId", e.executionId());
    Object root = optionValue(call(e, "rootExecutionId"));  // Spark 3.4+
    if (root instanceof Number) j.field("rootExecutionId", ((Number) root).longValue());
    j.field("description", cut(e.description())).field("details", cut(e.details()))
        .field("physicalPlanDescription", cut(e.physicalPlanDescription(), MAX_PLAN_CHARS));
    Object plan = call(e, "sparkPlanInfo");
    if (plan != null) planInfo(j.key("sparkPlanInfo"), plan, 0);
    return j.field("time", e.time()).endObject().toString();
  }

  private static String sqlExecutionEnd(Object event) {
    org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd e =
        (org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd) event;
    JsonLine j = event(SQL_EXECUTION_END).field("executionId", e.executionId())
        .field("time", e.time());
    Object error = optionValue(call(e, "errorMessage"));  // Spark 3.4+
    if (error != null) j.field("errorMessage", cut(error.toString()));
    return j.endObject().toString();
  }

  private static String sqlDriverAccumUpdates(Object e) {
    Object id = call(e, "executionId");
    if (!(id instanceof Number)) return null;
    JsonLine j = event(SQL_DRIVER_ACCUM_UPDATES).field("executionId", ((Number) id).longValue());
    j.key("accumUpdates").beginArray();
    scala.collection.Iterator<?> updates = iterator(call(e, "accumUpdates"));
    while (updates != null && updates.hasNext()) {
      Object update = updates.next();
      if (!(update instanceof Tuple2)) continue;
      Object accumulator = ((Tuple2<?, ?>) update)._1();
      Object value = ((Tuple2<?, ?>) update)._2();
      if (accumulator instanceof Number && value instanceof Number) {
        j.beginArray().value(((Number) accumulator).longValue())
            .value(((Number) value).longValue()).endArray();
      }
    }
    return j.endArray().endObject().toString();
  }

  // ---- Nested objects ----

  private static void stageInfo(JsonLine j, StageInfo s, boolean withAccumulables) {
    j.beginObject().field("Stage ID", s.stageId()).field("Stage Attempt ID", s.attemptNumber())
        .field("Stage Name", cut(s.name())).field("Number of Tasks", s.numTasks());
    j.key("Parent IDs").beginArray();
    scala.collection.Iterator<?> parents = iterator(call(s, "parentIds"));
    while (parents != null && parents.hasNext()) {
      Object parent = parents.next();
      if (parent instanceof Number) j.value(((Number) parent).longValue());
    }
    j.endArray();
    j.field("Details", cut(s.details()));
    Object submitted = optionValue(s.submissionTime());
    if (submitted instanceof Number) j.field("Submission Time", ((Number) submitted).longValue());
    Object completed = optionValue(s.completionTime());
    if (completed instanceof Number) j.field("Completion Time", ((Number) completed).longValue());
    Object failure = optionValue(s.failureReason());
    if (failure != null) j.field("Failure Reason", cut(failure.toString()));
    j.key("Accumulables").beginArray();
    if (withAccumulables) accumulables(j, call(s, "accumulables"));
    j.endArray();
    Object profile = call(s, "resourceProfileId");
    if (profile instanceof Number) j.field("Resource Profile Id", ((Number) profile).longValue());
    j.endObject();
  }

  /** StageInfo.accumulables: a mutable map of id to AccumulableInfo (as Tuple2s when walked). */
  private static void accumulables(JsonLine j, Object map) {
    scala.collection.Iterator<?> entries = iterator(map);
    while (entries != null && entries.hasNext()) {
      Object entry = entries.next();
      Object info = entry instanceof Tuple2 ? ((Tuple2<?, ?>) entry)._2() : entry;
      if (info == null) continue;
      Object id = call(info, "id");
      Object name = optionValue(call(info, "name"));
      Object value = optionValue(call(info, "value"));
      if (!(id instanceof Number) || name == null || value == null) continue;
      String text = name.toString();
      j.beginObject().field("ID", ((Number) id).longValue()).field("Name", text);
      if (text.startsWith("internal.metrics.")) {
        if (!(value instanceof Number)) {
          j.endObject();
          continue;
        }
        j.field("Value", ((Number) value).longValue());
      } else {
        j.field("Value", value.toString());
      }
      Object internal = call(info, "internal");
      j.field("Internal", Boolean.TRUE.equals(internal));
      Object metadata = optionValue(call(info, "metadata"));
      if (metadata != null) j.field("Metadata", metadata.toString());
      j.endObject();
    }
  }

  private static void taskInfo(JsonLine j, TaskInfo t) {
    Object locality = call(t, "taskLocality");  // a Scala Enumeration value
    j.beginObject().field("Task ID", t.taskId()).field("Index", t.index())
        .field("Attempt", t.attemptNumber()).field("Partition ID", t.partitionId())
        .field("Launch Time", t.launchTime()).field("Executor ID", t.executorId())
        .field("Host", t.host()).field("Locality", locality == null ? "" : locality.toString())
        .field("Speculative", t.speculative()).field("Getting Result Time", t.gettingResultTime())
        .field("Finish Time", t.finishTime()).field("Failed", t.failed())
        .field("Killed", t.killed());
    j.key("Accumulables").beginArray().endArray().endObject();
  }

  private static void taskEndReason(JsonLine j, TaskEndReason reason) {
    j.beginObject();
    if (reason == null || reason instanceof Success$) {
      j.field("Reason", "Success");
    } else if (reason instanceof ExceptionFailure) {
      ExceptionFailure f = (ExceptionFailure) reason;
      j.field("Reason", "ExceptionFailure").field("Class Name", f.className())
          .field("Description", cut(f.description()));
    } else if (reason instanceof FetchFailed) {
      FetchFailed f = (FetchFailed) reason;
      j.field("Reason", "FetchFailed");
      BlockManagerId address = f.bmAddress();
      if (address != null) {
        j.key("Block Manager Address").beginObject().field("Executor ID", address.executorId())
            .field("Host", address.host()).field("Port", address.port()).endObject();
      }
      j.field("Shuffle ID", f.shuffleId()).field("Map ID", f.mapId())
          .field("Map Index", f.mapIndex()).field("Reduce ID", f.reduceId())
          .field("Message", cut(f.message()));
    } else if (reason instanceof TaskKilled) {
      j.field("Reason", "TaskKilled").field("Kill Reason", cut(((TaskKilled) reason).reason()));
    } else if (reason instanceof ExecutorLostFailure) {
      ExecutorLostFailure f = (ExecutorLostFailure) reason;
      j.field("Reason", "ExecutorLostFailure").field("Executor ID", f.execId())
          .field("Exit Caused By App", f.exitCausedByApp());
      Object loss = optionValue(f.reason());
      if (loss != null) j.field("Loss Reason", cut(loss.toString()));
    } else if (reason instanceof TaskCommitDenied) {
      TaskCommitDenied f = (TaskCommitDenied) reason;
      j.field("Reason", "TaskCommitDenied").field("Job ID", f.jobID())
          .field("Partition ID", f.partitionID()).field("Attempt Number", f.attemptNumber());
    } else {
      // Resubmitted, TaskResultLost, UnknownReason: Spark writes the formatted class name.
      j.field("Reason", reason.getClass().getSimpleName().replace("$", ""));
    }
    j.endObject();
  }

  private static void taskMetrics(JsonLine j, TaskMetrics m) {
    j.beginObject().field("Executor Deserialize Time", m.executorDeserializeTime())
        .field("Executor Deserialize CPU Time", m.executorDeserializeCpuTime())
        .field("Executor Run Time", m.executorRunTime())
        .field("Executor CPU Time", m.executorCpuTime())
        .field("Peak Execution Memory", m.peakExecutionMemory())
        .field("Result Size", m.resultSize()).field("JVM GC Time", m.jvmGCTime())
        .field("Result Serialization Time", m.resultSerializationTime())
        .field("Memory Bytes Spilled", m.memoryBytesSpilled())
        .field("Disk Bytes Spilled", m.diskBytesSpilled());
    ShuffleReadMetrics read = m.shuffleReadMetrics();
    if (read != null) {
      j.key("Shuffle Read Metrics").beginObject()
          .field("Remote Blocks Fetched", read.remoteBlocksFetched())
          .field("Local Blocks Fetched", read.localBlocksFetched())
          .field("Fetch Wait Time", read.fetchWaitTime())
          .field("Remote Bytes Read", read.remoteBytesRead())
          .field("Remote Bytes Read To Disk", read.remoteBytesReadToDisk())
          .field("Local Bytes Read", read.localBytesRead())
          .field("Total Records Read", read.recordsRead());
      Object duration = call(read, "remoteReqsDuration");  // Spark 3.4+
      if (duration instanceof Number) {
        j.field("Remote Requests Duration", ((Number) duration).longValue());
      }
      j.endObject();
    }
    ShuffleWriteMetrics write = m.shuffleWriteMetrics();
    if (write != null) {
      j.key("Shuffle Write Metrics").beginObject()
          .field("Shuffle Bytes Written", write.bytesWritten())
          .field("Shuffle Write Time", write.writeTime())
          .field("Shuffle Records Written", write.recordsWritten()).endObject();
    }
    InputMetrics input = m.inputMetrics();
    if (input != null) {
      j.key("Input Metrics").beginObject().field("Bytes Read", input.bytesRead())
          .field("Records Read", input.recordsRead()).endObject();
    }
    OutputMetrics output = m.outputMetrics();
    if (output != null) {
      j.key("Output Metrics").beginObject().field("Bytes Written", output.bytesWritten())
          .field("Records Written", output.recordsWritten()).endObject();
    }
    j.endObject();
  }

  /** SparkPlanInfo(nodeName, simpleString, children: Seq, metadata, metrics: Seq[SQLMetricInfo]). */
  private static void planInfo(JsonLine j, Object plan, int depth) {
    j.beginObject().field("nodeName", stringOrEmpty(call(plan, "nodeName")));
    j.key("children").beginArray();
    scala.collection.Iterator<?> children = depth < 48 ? iterator(call(plan, "children")) : null;
    while (children != null && children.hasNext()) {
      Object child = children.next();
      if (child != null) planInfo(j, child, depth + 1);
    }
    j.endArray();
    j.key("metrics").beginArray();
    scala.collection.Iterator<?> metrics = iterator(call(plan, "metrics"));
    while (metrics != null && metrics.hasNext()) {
      Object metric = metrics.next();
      if (metric == null) continue;
      Object id = call(metric, "accumulatorId");
      j.beginObject().field("name", stringOrEmpty(call(metric, "name")))
          .field("accumulatorId", id instanceof Number ? ((Number) id).longValue() : -1)
          .field("metricType", stringOrEmpty(call(metric, "metricType"))).endObject();
    }
    j.endArray().endObject();
  }

  private static void properties(JsonLine j, Properties properties) {
    if (properties == null) return;
    j.key("Properties").beginObject();
    for (String name : properties.stringPropertyNames()) {
      j.field(name, cut(properties.getProperty(name)));
    }
    j.endObject();
  }

  // ---- Helpers ----

  private static JsonLine event(String name) {
    return new JsonLine().beginObject().field("Event", name);
  }

  static String cut(String text) {
    return cut(text, MAX_TEXT_CHARS);
  }

  static String cut(String text, int maxChars) {
    if (text == null) return "";
    return text.length() <= maxChars ? text : text.substring(0, maxChars);
  }

  private static String stringOrEmpty(Object value) {
    return value == null ? "" : value.toString();
  }

  private static String optionString(Option<String> option) {
    Object value = optionValue(option);
    return value == null ? null : value.toString();
  }

  /** The value of a scala.Option, or null for None, null or not an Option. */
  static Object optionValue(Object option) {
    if (!(option instanceof Option)) return null;
    Option<?> o = (Option<?>) option;
    return o.isDefined() ? o.get() : null;
  }

  private static scala.collection.Iterator<?> iterator(Object collection) {
    if (!(collection instanceof scala.collection.Iterable)) return null;
    return ((scala.collection.Iterable<?>) collection).iterator();
  }

  /**
   * Calls a public no-argument method by name (cached per class); null when the method does not
   * exist in this Spark version or fails. Used for members whose descriptors differ between
   * Scala 2.12 and 2.13 builds, or that older Spark versions lack.
   */
  static Object call(Object target, String methodName) {
    if (target == null) return null;
    Class<?> type = target.getClass();
    String key = type.getName() + '#' + methodName;
    Method method = METHODS.get(key);
    if (method == null) {
      try {
        method = type.getMethod(methodName);
        try {
          method.setAccessible(true);  // public methods of non-public (anonymous) classes
        } catch (RuntimeException e) {
          // Not opened to us (a JDK module); a public member of a public class still works.
        }
      } catch (NoSuchMethodException | RuntimeException e) {
        method = MISSING;
      }
      if (METHODS.size() < 4096) METHODS.put(key, method);
    }
    if (method == MISSING) return null;
    try {
      return method.invoke(target);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }
}
