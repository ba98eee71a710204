package io.sparkprof;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;

/**
 * The application's OpenTelemetry trace, exported once at its end from the figures of the
 * driver's report ({@code report.json}, the engine's model: no figure is computed here):
 *
 * <pre>
 * spark.application                 application start..end, parent: a caller's traceparent
 *   spark.phase.&lt;phase&gt;            the seven phases of the report, laid end to end
 *     spark.job                       at its real times, under io_write when it wrote output,
 *       spark.stage                   else under compute; each stage attempt at its real times
 * </pre>
 *
 * <p>The phases partition the wall time, so their spans add up to the application span; only
 * {@code resource_wait} (start until the first executor) is an interval of its own, the others
 * interleave in reality and their spans show how long, not when. A job submitted under a
 * {@code sparkprof.traceparent} local property (the Spark Connect interceptor sets it per
 * request, {@link io.sparkprof.connect.TraceparentInterceptor}) joins that trace instead, linked
 * to the application span.
 *
 * <p>The listener side only remembers those per-job parents; it runs on Spark's listener thread
 * and never throws. The export never throws either: a failure is one log line.
 */
final class ApplicationTrace extends SparkListener {
  /** Local property (SparkContext.setLocalProperty) naming a job's W3C parent. */
  static final String JOB_TRACEPARENT_PROPERTY =
      io.sparkprof.connect.TraceparentInterceptor.PROPERTY;

  /** The phases in the order their spans are laid out (report.json `phases`). */
  private static final String[] PHASES = {
    "resource_wait", "driver_only", "compute", "shuffle", "gc", "io_write", "idle_slots"
  };

  private final SparkProfConfig config;
  private final Map<Integer, String> jobParents = new ConcurrentHashMap<>();

  ApplicationTrace(SparkProfConfig config) {
    this.config = config;
  }

  @Override
  public void onJobStart(SparkListenerJobStart jobStart) {
    try {
      Properties properties = jobStart.properties();
      String traceparent =
          properties == null ? null : properties.getProperty(JOB_TRACEPARENT_PROPERTY);
      if (traceparent != null && jobParents.size() < config.otelMaxSpans()) {
        jobParents.put(jobStart.jobId(), traceparent);
      }
    } catch (RuntimeException | LinkageError e) {
      // a job without its caller's parent; the export still runs
    }
  }

  /**
   * Exports the trace of the report at {@code reportJson}; {@code environmentTraceparent} is
   * the driver's TRACEPARENT, used when the conf names no parent. Waits at most the export
   * timeout; logs one line either way.
   */
  void export(File reportJson, String environmentTraceparent) {
    long started = System.nanoTime();
    TracingSdk.Built built;
    try {
      built = TracingSdk.build(config);
    } catch (RuntimeException | LinkageError e) {
      SparkProfPlugin.log("OpenTelemetry: no spans, the SDK could not be set up: " + e);
      return;
    }
    OpenTelemetrySdk sdk = built.sdk;
    try {
      JsonNode report = new ObjectMapper().readTree(reportJson);
      String traceparent = config.otelTraceparent().isEmpty()
          ? environmentTraceparent : config.otelTraceparent();
      Context parent = TracingSdk.parentOf(traceparent);
      String parentNote = "";
      if (traceparent != null && !traceparent.trim().isEmpty() && parent == null) {
        parentNote = ", traceparent '" + traceparent + "' is not valid W3C, ignored";
      }
      Tracer tracer = sdk.getTracer("io.sparkprof", SparkProfPlugin.class.getPackage() == null
          ? null : SparkProfPlugin.class.getPackage().getImplementationVersion());
      Emitted emitted = emit(tracer, report, parent == null ? Context.root() : parent);
      long timeoutMs = config.otelExportTimeoutMs();
      long leftMs = Math.max(100, timeoutMs - (System.nanoTime() - started) / 1_000_000L);
      CompletableResultCode flushed =
          sdk.getSdkTracerProvider().forceFlush().join(leftMs, TimeUnit.MILLISECONDS);
      long elapsedMs = (System.nanoTime() - started) / 1_000_000L;
      long exported = built.counts.exported.get();
      String what = emitted.spans + " spans of trace " + emitted.traceId;
      if (!emitted.sampled) {
        SparkProfPlugin.log("OpenTelemetry: " + what + " not sampled (samplingRatio or the "
            + "parent's flag), none exported" + parentNote);
      } else if (flushed.isSuccess() && built.counts.failed.get() == 0) {
        // Fewer than emitted when a Connect request's own parent was not sampled.
        SparkProfPlugin.log("OpenTelemetry: " + exported + " of " + what + " exported ("
            + built.destination
            + ") in " + elapsedMs + " ms"
            + (emitted.left > 0 ? ", " + emitted.left + " stage spans left out" : "")
            + parentNote);
      } else {
        SparkProfPlugin.log("OpenTelemetry: " + what + " not exported (" + built.destination
            + "): " + exported + " delivered within " + timeoutMs + " ms; the application "
            + "is not affected" + parentNote);
      }
    } catch (IOException | RuntimeException | LinkageError e) {
      SparkProfPlugin.log("OpenTelemetry: no spans from " + reportJson + ": " + e);
    } finally {
      // The export and the shutdown share one timeout (at least 100 ms for the shutdown).
      long leftMs = config.otelExportTimeoutMs() - (System.nanoTime() - started) / 1_000_000L;
      sdk.getSdkTracerProvider().shutdown().join(Math.max(100, leftMs), TimeUnit.MILLISECONDS);
    }
  }

  private static final class Emitted {
    boolean sampled;
    int spans;
    int left;
    String traceId = "";
  }

  private Emitted emit(Tracer tracer, JsonNode report, Context parent) {
    Emitted emitted = new Emitted();
    JsonNode application = report.path("application");
    long startMs = application.path("start_ms").asLong(-1);
    long endMs = Math.max(startMs, application.path("end_ms").asLong(startMs));
    JsonNode phases = report.path("phases");
    JsonNode jobs = report.path("jobs");
    JsonNode stages = report.path("stages");
    Map<Integer, List<String>> findingsByStage = findingsByStage(report.path("findings"));

    AttributesBuilder applicationAttributes = Attributes.builder()
        .put("spark.app.id", application.path("id").asText())
        .put("spark.app.name", application.path("name").asText())
        .put("spark.app.attempt_id", application.path("attempt_id").asText())
        .put("spark.version", application.path("spark_version").asText())
        .put("spark.user", application.path("user").asText())
        .put("spark.app.complete", application.path("complete").asBoolean())
        .put("sparkprof.wall_ms", phases.path("wall_ms").asLong())
        .put("spark.jobs", report.path("counts").path("jobs").asLong())
        .put("spark.jobs.failed", report.path("counts").path("failed_jobs").asLong())
        .put("spark.stage_attempts", report.path("counts").path("stage_attempts").asLong())
        .put("spark.task_attempts", report.path("counts").path("task_attempts").asLong());
    putTotals(applicationAttributes, report.path("totals"));
    List<String> rules = new ArrayList<>();
    for (JsonNode finding : report.path("findings")) rules.add(finding.path("rule").asText());
    if (!rules.isEmpty()) {
      applicationAttributes.put(AttributeKey.stringArrayKey("sparkprof.findings"), rules);
    }

    // Stage spans are what a big application has many of: they give way first.
    int budget = config.otelMaxSpans();
    int fixed = 1 + PHASES.length + jobs.size();
    int stageBudget = Math.max(0, budget - fixed);
    int stageSpans = 0;
    for (JsonNode stage : stages) {
      if (stage.path("submission_ms").asLong(-1) >= 0) stageSpans++;
    }
    emitted.left = Math.max(0, stageSpans - stageBudget);
    if (emitted.left > 0) {
      applicationAttributes.put("sparkprof.stage_spans_left_out", emitted.left);
    }

    Span applicationSpan = tracer.spanBuilder("spark.application")
        .setParent(parent)
        .setStartTimestamp(startMs, TimeUnit.MILLISECONDS)
        .setAllAttributes(applicationAttributes.build())
        .startSpan();
    emitted.spans++;
    emitted.traceId = applicationSpan.getSpanContext().getTraceId();
    emitted.sampled = applicationSpan.getSpanContext().isSampled();
    if (report.path("counts").path("failed_jobs").asLong() > 0) {
      applicationSpan.setStatus(StatusCode.ERROR, "failed jobs");
    }
    Context applicationContext = parent.with(applicationSpan);

    Map<String, Span> phaseSpans = new HashMap<>();
    Map<String, Long> phaseEndsMs = new HashMap<>();
    long cursorMs = startMs;
    for (String phase : PHASES) {
      long phaseMs = phases.path(phase).path("ms").asLong(0);
      if (phaseMs <= 0) continue;
      Span span = tracer.spanBuilder("spark.phase." + phase)
          .setParent(applicationContext)
          .setStartTimestamp(cursorMs, TimeUnit.MILLISECONDS)
          .setAttribute("sparkprof.phase", phase)
          .setAttribute("sparkprof.phase.ms", phaseMs)
          .setAttribute("sparkprof.phase.ratio", phases.path(phase).path("ratio").asDouble())
          .setAttribute("sparkprof.phase.timing", phase.equals("resource_wait")
              ? "interval" : "share of the wall time, laid end to end")
          .startSpan();
      emitted.spans++;
      cursorMs += phaseMs;
      phaseSpans.put(phase, span);
      phaseEndsMs.put(phase, cursorMs);
    }

    // Stage attempts by the job that ran them: the latest job listing the stage submitted
    // before the attempt (the report's rule for jobs[] totals).
    Map<Integer, List<JsonNode>> stagesByJob = new HashMap<>();
    int stagesLeft = stageBudget;
    for (JsonNode stage : stages) {
      long submittedMs = stage.path("submission_ms").asLong(-1);
      if (submittedMs < 0) continue;  // never ran (skipped, or only named by a JobStart)
      int stageId = stage.path("stage_id").asInt();
      int owner = -1;
      long ownerSubmittedMs = Long.MIN_VALUE;
      for (JsonNode job : jobs) {
        long jobSubmittedMs = job.path("submission_ms").asLong(-1);
        if (jobSubmittedMs > submittedMs || jobSubmittedMs < ownerSubmittedMs) continue;
        for (JsonNode listed : job.path("stage_ids")) {
          if (listed.asInt() == stageId) {
            owner = job.path("job_id").asInt();
            ownerSubmittedMs = jobSubmittedMs;
            break;
          }
        }
      }
      if (owner < 0 || stagesLeft <= 0) continue;
      stagesLeft--;
      List<JsonNode> list = stagesByJob.get(owner);
      if (list == null) {
        list = new ArrayList<>();
        stagesByJob.put(owner, list);
      }
      list.add(stage);
    }

    for (JsonNode job : jobs) {
      long jobStartMs = job.path("submission_ms").asLong(-1);
      if (jobStartMs < 0) continue;
      int jobId = job.path("job_id").asInt();
      long jobEndMs = job.path("completion_ms").asLong(-1);
      if (jobEndMs < jobStartMs) jobEndMs = Math.max(jobStartMs, endMs);
      Context jobParent = null;
      String requestParent = jobParents.get(jobId);
      if (requestParent != null) jobParent = TracingSdk.parentOf(requestParent);
      SpanBuilder builder = tracer.spanBuilder("spark.job")
          .setStartTimestamp(jobStartMs, TimeUnit.MILLISECONDS);
      if (jobParent != null) {
        builder.setParent(jobParent).addLink(applicationSpan.getSpanContext());
      } else {
        Span phase = phaseSpans.get(
            job.path("totals").path("output_bytes").asLong() > 0 ? "io_write" : "compute");
        if (phase == null) phase = phaseSpans.get("compute");
        builder.setParent(phase == null ? applicationContext : applicationContext.with(phase));
      }
      AttributesBuilder attributes = Attributes.builder()
          .put("spark.app.id", application.path("id").asText())
          .put("spark.job.id", jobId)
          .put("spark.job.description", job.path("description").asText())
          .put("spark.job.group", job.path("job_group").asText())
          .put("spark.sql.execution_id", job.path("sql_execution_id").asLong(-1))
          .put("spark.job.result", job.path("result").asText())
          .put("spark.task_attempts", job.path("task_attempts").asLong())
          .put("spark.task_attempts.failed", job.path("failed_task_attempts").asLong());
      putTotals(attributes, job.path("totals"));
      Span jobSpan = builder.setAllAttributes(attributes.build()).startSpan();
      emitted.spans++;
      if (job.path("result").asText().equals("failed")) {
        jobSpan.setAttribute("spark.failure_reason", job.path("failure_reason").asText());
        jobSpan.setStatus(StatusCode.ERROR, job.path("failure_reason").asText());
      }
      Context jobContext = (jobParent != null ? jobParent : applicationContext).with(jobSpan);
      List<JsonNode> jobStages = stagesByJob.get(jobId);
      for (JsonNode stage : jobStages == null ? Collections.<JsonNode>emptyList() : jobStages) {
        emitStage(tracer, jobContext, stage, findingsByStage, endMs);
        emitted.spans++;
      }
      jobSpan.end(jobEndMs, TimeUnit.MILLISECONDS);
    }

    for (Map.Entry<String, Span> phase : phaseSpans.entrySet()) {
      phase.getValue().end(phaseEndsMs.get(phase.getKey()), TimeUnit.MILLISECONDS);
    }
    applicationSpan.end(endMs, TimeUnit.MILLISECONDS);
    return emitted;
  }

  private static void emitStage(Tracer tracer, Context jobContext, JsonNode stage,
      Map<Integer, List<String>> findingsByStage, long applicationEndMs) {
    long startMs = stage.path("submission_ms").asLong();
    long endMs = stage.path("completion_ms").asLong(-1);
    if (endMs < startMs) endMs = Math.max(startMs, applicationEndMs);
    int stageId = stage.path("stage_id").asInt();
    JsonNode durations = stage.path("task_duration_ms");
    long p50 = durations.path("p50").asLong();
    long max = durations.path("max").asLong();
    AttributesBuilder attributes = Attributes.builder()
        .put("spark.stage.id", stageId)
        .put("spark.stage.attempt", stage.path("attempt").asInt())
        .put("spark.stage.name", stage.path("name").asText())
        .put("spark.stage.status", stage.path("status").asText())
        .put("spark.stage.num_tasks", stage.path("num_tasks").asLong())
        .put("spark.task_attempts", stage.path("task_attempts").asLong())
        .put("spark.task_attempts.failed", stage.path("failed_task_attempts").asLong())
        .put("spark.task.duration_ms.p50", p50)
        .put("spark.task.duration_ms.p95", durations.path("p95").asLong())
        .put("spark.task.duration_ms.max", max);
    if (p50 > 0) attributes.put("sparkprof.skew_ratio", (double) max / p50);
    putTotals(attributes, stage.path("totals"));
    List<String> rules = findingsByStage.get(stageId);
    if (rules != null) attributes.put(AttributeKey.stringArrayKey("sparkprof.findings"), rules);
    Span span = tracer.spanBuilder("spark.stage")
        .setParent(jobContext)
        .setStartTimestamp(startMs, TimeUnit.MILLISECONDS)
        .setAllAttributes(attributes.build())
        .startSpan();
    String failure = stage.path("failure_reason").asText();
    if (!failure.isEmpty()) {
      span.setAttribute("spark.failure_reason", failure);
      span.setStatus(StatusCode.ERROR, failure);
    }
    span.end(endMs, TimeUnit.MILLISECONDS);
  }

  /** The report's totals that say what a span moved and spilled. */
  private static void putTotals(AttributesBuilder attributes, JsonNode totals) {
    if (totals.isMissingNode()) return;
    String[] keys = {
      "executor_run_time_ms", "jvm_gc_time_ms", "input_bytes", "output_bytes",
      "shuffle_read_bytes", "shuffle_write_bytes", "memory_bytes_spilled", "disk_bytes_spilled",
      "peak_execution_memory_bytes_max"
    };
    for (String key : keys) attributes.put("spark." + key, totals.path(key).asLong());
  }

  private static Map<Integer, List<String>> findingsByStage(JsonNode findings) {
    Map<Integer, List<String>> byStage = new HashMap<>();
    for (JsonNode finding : findings) {
      for (JsonNode stageId : finding.path("stage_ids")) {
        List<String> rules = byStage.get(stageId.asInt());
        if (rules == null) {
          rules = new ArrayList<>();
          byStage.put(stageId.asInt(), rules);
        }
        String rule = finding.path("rule").asText();
        if (!rules.contains(rule)) rules.add(rule);
      }
    }
    return byStage;
  }
}
