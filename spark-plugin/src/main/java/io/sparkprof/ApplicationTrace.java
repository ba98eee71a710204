package io.sparkprof;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.samplers.SamplingDecision;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;

/**
 * The application's OpenTelemetry trace, from the figures of the driver's engine (the live model
 * while the application runs, {@code report.json} at its end: no figure is computed here):
 *
 * <pre>
 * spark.application                 application start..end, parent: a caller's traceparent
 *   spark.phase.&lt;phase&gt;            the eight phases of the report, laid end to end
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
 * <p>Jobs are exported as they end ({@code spark.sparkprof.otel.jobSpansInterval}, default
 * every 5 s, each ended job with its stage attempts), so a long-running driver such as a Spark
 * Connect server traces its requests while it serves; the application and phase spans follow at
 * the end with the ids the live spans already name as their parents (reserved at the start: {@link
 * ReservedIds}), then the jobs not exported yet. Live stage spans carry no findings (the
 * diagnosis runs at the end; the application span lists them).
 *
 * <p>The listener side only remembers per-job parents and ended jobs; it runs on Spark's
 * listener thread and never throws. The exports never throw either: a failure is one log line.
 */
final class ApplicationTrace extends SparkListener {
  /** Local property (SparkContext.setLocalProperty) naming a job's W3C parent. */
  static final String JOB_TRACEPARENT_PROPERTY =
      io.sparkprof.connect.TraceparentInterceptor.PROPERTY;

  /** The phases in the order their spans are laid out (report.json `phases`). */
  private static final String[] PHASES = {
    "resource_wait", "driver_only", "compute", "task_wait", "shuffle", "gc", "io_write",
    "idle_slots"
  };

  /**
   * Reads the driver's JSON, shared: a mapper never reconfigured is thread-safe, and a new one per
   * export would build its caches again each time.
   */
  private static final ObjectMapper JSON = new ObjectMapper();

  private final SparkProfConfig config;
  private final Map<Integer, String> jobParents = new ConcurrentHashMap<>();
  /** Jobs that ended and wait for the next live export (at most maxSpans of them). */
  private final ConcurrentLinkedQueue<Integer> endedJobs = new ConcurrentLinkedQueue<>();
  private final AtomicInteger endedJobsQueued = new AtomicInteger();

  // Set by start(); the rest under `lock`.
  private volatile Trace trace;
  private final Object lock = new Object();
  private final BitSet exportedJobs = new BitSet();
  private final Set<String> phasesWithLiveJobs = new HashSet<>();
  private int liveSpans;
  private int liveStagesLeft;
  private boolean ended;
  private ScheduledExecutorService liveExport;

  ApplicationTrace(SparkProfConfig config) {
    this.config = config;
  }

  /** The SDK and the ids the trace's spans will have, fixed at the start. */
  private static final class Trace {
    final TracingSdk.Built built;
    final ReservedIds ids;
    final Tracer tracer;
    final Context parent;  // Context.root() without a (valid) caller's parent
    final String parentNote;
    final String traceId;
    final String applicationSpanId;
    final Map<String, String> phaseSpanIds = new HashMap<>();
    final TraceFlags flags;
    final TraceState state;
    final long startedNanos = System.nanoTime();

    Trace(TracingSdk.Built built, ReservedIds ids, String traceparent) {
      this.built = built;
      this.ids = ids;
      this.tracer = built.sdk.getTracer("io.sparkprof",
          SparkProfPlugin.class.getPackage() == null
              ? null : SparkProfPlugin.class.getPackage().getImplementationVersion());
      Context remote = TracingSdk.parentOf(traceparent);
      parent = remote == null ? Context.root() : remote;
      parentNote = traceparent != null && !traceparent.trim().isEmpty() && remote == null
          ? ", traceparent '" + traceparent + "' is not valid W3C, ignored" : "";
      SpanContext caller = Span.fromContext(parent).getSpanContext();
      traceId = caller.isValid() ? caller.getTraceId() : ids.newTraceId();
      state = caller.isValid() ? caller.getTraceState() : TraceState.getDefault();
      applicationSpanId = ids.newSpanId();
      for (String phase : PHASES) phaseSpanIds.put(phase, ids.newSpanId());
      // What the SDK's sampler will decide for the application span at the end: the live
      // spans' parents must say the same (a parent-based sampler follows them).
      SamplingDecision decision = built.sdk.getSdkTracerProvider().getSampler().shouldSample(
          parent, traceId, "spark.application", SpanKind.INTERNAL, Attributes.empty(),
          Collections.emptyList()).getDecision();
      flags = decision == SamplingDecision.RECORD_AND_SAMPLE
          ? TraceFlags.getSampled() : TraceFlags.getDefault();
    }

    /** A context whose current span is the (not yet started) span with `spanId`. */
    Context reserved(String spanId) {
      return Context.root().with(Span.wrap(SpanContext.create(traceId, spanId, flags, state)));
    }
  }

  /**
   * The SDK's ids, except the next ones the thread asked for: the spans started at the end get
   * the ids their children, exported earlier, already name.
   */
  static final class ReservedIds implements IdGenerator {
    private final IdGenerator random = IdGenerator.random();
    private final ThreadLocal<String> nextTraceId = new ThreadLocal<>();
    private final ThreadLocal<String> nextSpanId = new ThreadLocal<>();

    String newTraceId() {
      return random.generateTraceId();
    }

    String newSpanId() {
      return random.generateSpanId();
    }

    /** The next span this thread starts gets these ids (traceId: used only by a root span). */
    void next(String traceId, String spanId) {
      nextTraceId.set(traceId);
      nextSpanId.set(spanId);
    }

    @Override
    public String generateSpanId() {
      String id = nextSpanId.get();
      if (id == null) return random.generateSpanId();
      nextSpanId.remove();
      return id;
    }

    @Override
    public String generateTraceId() {
      String id = nextTraceId.get();
      if (id == null) return random.generateTraceId();
      nextTraceId.remove();
      return id;
    }
  }

  /**
   * Sets the SDK up and reserves the trace's ids; starts the live export of ended jobs. {@code
   * environmentTraceparent} is the driver's TRACEPARENT, used when the conf names no parent.
   * Never throws: without an SDK there are no spans, and one log line says why.
   */
  void start(String environmentTraceparent) {
    try {
      ReservedIds ids = new ReservedIds();
      String traceparent = config.otelTraceparent().isEmpty()
          ? environmentTraceparent : config.otelTraceparent();
      trace = new Trace(TracingSdk.build(config, ids), ids, traceparent);
    } catch (RuntimeException | LinkageError e) {
      Log.warn("OpenTelemetry: no spans, the SDK could not be set up: " + e);
      return;
    }
    long intervalMs = config.otelJobSpansIntervalMs();
    if (intervalMs <= 0) return;
    liveExport = Executors.newSingleThreadScheduledExecutor(runnable -> {
      Thread thread = new Thread(runnable, "sparkprof-otel");
      thread.setDaemon(true);
      return thread;
    });
    liveExport.scheduleWithFixedDelay(this::exportEndedJobs, intervalMs, intervalMs,
        TimeUnit.MILLISECONDS);
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

  @Override
  public void onJobEnd(SparkListenerJobEnd jobEnd) {
    // The end of the application exports what the live export did not get to.
    if (liveExport == null || endedJobsQueued.get() >= config.otelMaxSpans()) return;
    endedJobsQueued.incrementAndGet();
    endedJobs.add(jobEnd.jobId());
  }

  /** The live export: the jobs that ended since the last one (on the sparkprof-otel thread). */
  private void exportEndedJobs() {
    Trace t = trace;
    if (t == null || endedJobs.isEmpty()) return;
    try {
      synchronized (lock) {
        if (ended) return;
        List<Integer> ids = new ArrayList<>();
        for (Integer id = endedJobs.poll(); id != null; id = endedJobs.poll()) {
          endedJobsQueued.decrementAndGet();
          if (id >= 0 && !exportedJobs.get(id)) ids.add(id);
        }
        int[] jobIds = new int[ids.size()];
        for (int i = 0; i < jobIds.length; i++) jobIds[i] = ids.get(i);
        String json = NativeAggregator.endedJobsJson(jobIds);
        if (json == null || json.isEmpty()) return;  // finished: the report has them
        JsonNode live = JSON.readTree(json);
        JsonNode application = live.path("application");
        long applicationStartMs = application.path("start_ms").asLong(-1);
        Map<Integer, List<JsonNode>> stagesByJob = stagesByJob(live.path("stages"));
        // Each export holds at most maxSpans; stage spans give way first.
        int stageBudget = Math.max(0, config.otelMaxSpans() - live.path("jobs").size());
        for (JsonNode job : live.path("jobs")) {
          int jobId = job.path("job_id").asInt();
          Context parent = TracingSdk.parentOf(jobParents.get(jobId));
          boolean request = parent != null;
          if (!request) {
            String phase = phaseOf(job);
            parent = t.reserved(t.phaseSpanIds.get(phase));
            phasesWithLiveJobs.add(phase);
          }
          List<JsonNode> stages = stagesByJob.get(jobId);
          List<JsonNode> kept = new ArrayList<>();
          for (JsonNode stage : stages == null ? Collections.<JsonNode>emptyList() : stages) {
            if (stageBudget > 0) {
              kept.add(stage);
              stageBudget--;
            } else {
              liveStagesLeft++;
            }
          }
          liveSpans += emitJob(t, job, parent, request, application.path("id").asText(), kept,
              Collections.<Integer, List<String>>emptyMap(), Math.max(applicationStartMs,
                  System.currentTimeMillis()));
          exportedJobs.set(jobId);
          jobParents.remove(jobId);
        }
      }
      t.built.sdk.getSdkTracerProvider().forceFlush();  // ship now, do not wait for it
    } catch (IOException | RuntimeException | LinkageError e) {
      Log.warn("OpenTelemetry: live job spans stopped, the rest follow at the "
          + "application's end: " + e);
      liveExport.shutdown();
    }
  }

  /**
   * Exports the trace of the report at {@code reportJson}: the application and phase spans and
   * the jobs the live export did not send. Waits at most the export timeout; logs one line
   * either way.
   */
  void export(File reportJson) {
    Trace t = trace;
    if (t == null) return;  // the start said why
    if (liveExport != null) liveExport.shutdownNow();
    long started = System.nanoTime();
    OpenTelemetrySdk sdk = t.built.sdk;
    try {
      JsonNode report = JSON.readTree(reportJson);
      Emitted emitted;
      synchronized (lock) {
        ended = true;
        emitted = emit(t, report);
        emitted.spans += liveSpans;
        emitted.left += liveStagesLeft;
      }
      long timeoutMs = config.otelExportTimeoutMs();
      long leftMs = Math.max(100, timeoutMs - (System.nanoTime() - started) / 1_000_000L);
      CompletableResultCode flushed =
          sdk.getSdkTracerProvider().forceFlush().join(leftMs, TimeUnit.MILLISECONDS);
      long elapsedMs = (System.nanoTime() - started) / 1_000_000L;
      long exported = t.built.counts.exported.get();
      String what = emitted.spans + " spans of trace " + emitted.traceId;
      if (!emitted.sampled) {
        Log.info("OpenTelemetry: " + what + " not sampled (samplingRatio or the "
            + "parent's flag), none exported" + t.parentNote);
      } else if (t.built.counts.delivered(flushed.isSuccess(), emitted.spans)) {
        // Fewer than emitted when a Connect request's own parent was not sampled.
        Log.info("OpenTelemetry: " + exported + " of " + what + " exported ("
            + t.built.destination + ") in " + elapsedMs + " ms"
            + (liveSpans > 0 ? " (" + liveSpans + " of them as their jobs ended)" : "")
            + (emitted.left > 0 ? ", " + emitted.left + " stage spans left out" : "")
            + t.parentNote);
      } else {
        long pending = t.built.counts.pending.get();
        Log.warn("OpenTelemetry: " + what + " not exported ("
            + t.built.destination + "): " + exported + " delivered within " + timeoutMs
            + " ms" + (pending > 0 ? ", " + pending + " still in flight (retried)" : "")
            + "; the application is not affected" + t.parentNote);
      }
    } catch (IOException | RuntimeException | LinkageError e) {
      Log.warn("OpenTelemetry: no spans from " + reportJson + ": " + e);
    } finally {
      // The export and the shutdown share one timeout (at least 100 ms for the shutdown).
      long leftMs = config.otelExportTimeoutMs() - (System.nanoTime() - started) / 1_000_000L;
      sdk.getSdkTracerProvider().shutdown().join(Math.max(100, leftMs), TimeUnit.MILLISECONDS);
    }
  }

  /** Ends the live export and the SDK without a report (the report could not be written). */
  void abandon() {
    Trace t = trace;
    if (t == null) return;
    if (liveExport != null) liveExport.shutdownNow();
    t.built.sdk.getSdkTracerProvider().shutdown().join(
        config.otelExportTimeoutMs(), TimeUnit.MILLISECONDS);
  }

  private static final class Emitted {
    boolean sampled;
    int spans;
    int left;
    String traceId = "";
  }

  /** The phase a job's span sits under: io_write when it wrote output, else compute. */
  private static String phaseOf(JsonNode job) {
    return job.path("totals").path("output_bytes").asLong() > 0 ? "io_write" : "compute";
  }

  /** Stage attempts by the job that ran them (the report's `job_id`). */
  private static Map<Integer, List<JsonNode>> stagesByJob(JsonNode stages) {
    Map<Integer, List<JsonNode>> byJob = new HashMap<>();
    for (JsonNode stage : stages) {
      if (stage.path("submission_ms").asLong(-1) < 0) continue;  // never ran
      int jobId = stage.path("job_id").asInt(-1);
      if (jobId < 0) continue;
      List<JsonNode> list = byJob.get(jobId);
      if (list == null) {
        list = new ArrayList<>();
        byJob.put(jobId, list);
      }
      list.add(stage);
    }
    return byJob;
  }

  private Emitted emit(Trace t, JsonNode report) {
    Emitted emitted = new Emitted();
    JsonNode application = report.path("application");
    long startMs = application.path("start_ms").asLong(-1);
    long endMs = Math.max(startMs, application.path("end_ms").asLong(startMs));
    JsonNode phases = report.path("phases");
    JsonNode jobs = report.path("jobs");
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

    // The jobs the live export did not send, and their stage attempts; stage spans are what a
    // big application has many of: they give way first.
    List<JsonNode> jobsLeft = new ArrayList<>();
    for (JsonNode job : jobs) {
      int jobId = job.path("job_id").asInt(-1);
      if (job.path("submission_ms").asLong(-1) < 0) continue;
      if (jobId < 0 || !exportedJobs.get(jobId)) jobsLeft.add(job);
    }
    Map<Integer, List<JsonNode>> stagesByJob = stagesByJob(report.path("stages"));
    int stageBudget = Math.max(0, config.otelMaxSpans() - 1 - PHASES.length - jobsLeft.size());
    int stageSpans = 0;
    for (JsonNode job : jobsLeft) {
      List<JsonNode> stages = stagesByJob.get(job.path("job_id").asInt());
      stageSpans += stages == null ? 0 : stages.size();
    }
    emitted.left = Math.max(0, stageSpans - stageBudget);
    if (emitted.left + liveStagesLeft > 0) {
      applicationAttributes.put("sparkprof.stage_spans_left_out", emitted.left + liveStagesLeft);
    }

    t.ids.next(t.traceId, t.applicationSpanId);
    Span applicationSpan = t.tracer.spanBuilder("spark.application")
        .setParent(t.parent)
        .setStartTimestamp(startMs, TimeUnit.MILLISECONDS)
        .setAllAttributes(applicationAttributes.build())
        .startSpan();
    emitted.spans++;
    emitted.traceId = applicationSpan.getSpanContext().getTraceId();
    emitted.sampled = applicationSpan.getSpanContext().isSampled();
    if (report.path("counts").path("failed_jobs").asLong() > 0) {
      applicationSpan.setStatus(StatusCode.ERROR, "failed jobs");
    }
    Context applicationContext = t.parent.with(applicationSpan);

    Map<String, Span> phaseSpans = new HashMap<>();
    Map<String, Long> phaseEndsMs = new HashMap<>();
    long cursorMs = startMs;
    for (String phase : PHASES) {
      long phaseMs = phases.path(phase).path("ms").asLong(0);
      // A phase without time still gets its span when live job spans name it as their parent.
      if (phaseMs <= 0 && !phasesWithLiveJobs.contains(phase)) continue;
      t.ids.next(t.traceId, t.phaseSpanIds.get(phase));
      Span span = t.tracer.spanBuilder("spark.phase." + phase)
          .setParent(applicationContext)
          .setStartTimestamp(cursorMs, TimeUnit.MILLISECONDS)
          .setAttribute("sparkprof.phase", phase)
          .setAttribute("sparkprof.phase.ms", phaseMs)
          .setAttribute("sparkprof.phase.ratio", phases.path(phase).path("ratio").asDouble())
          .setAttribute("sparkprof.phase.timing", phase.equals("resource_wait")
              ? "interval" : "share of the wall time, laid end to end")
          .startSpan();
      emitted.spans++;
      cursorMs += Math.max(0, phaseMs);
      phaseSpans.put(phase, span);
      phaseEndsMs.put(phase, cursorMs);
    }
    if (!applicationSpan.getSpanContext().getSpanId().equals(t.applicationSpanId)) {
      Log.warn("OpenTelemetry: the SDK did not use the reserved span ids; the spans "
          + "of jobs exported as they ended have no parent in this trace");
    }

    for (JsonNode job : jobsLeft) {
      int jobId = job.path("job_id").asInt();
      Context parent = TracingSdk.parentOf(jobParents.get(jobId));
      boolean request = parent != null;
      if (!request) {
        Span phase = phaseSpans.get(phaseOf(job));
        if (phase == null) phase = phaseSpans.get("compute");
        parent = phase == null ? applicationContext : applicationContext.with(phase);
      }
      List<JsonNode> stages = stagesByJob.get(jobId);
      List<JsonNode> kept = new ArrayList<>();
      for (JsonNode stage : stages == null ? Collections.<JsonNode>emptyList() : stages) {
        if (stageBudget-- > 0) kept.add(stage);
      }
      emitted.spans += emitJob(t, job, parent, request, application.path("id").asText(), kept,
          findingsByStage, endMs);
    }

    for (Map.Entry<String, Span> phase : phaseSpans.entrySet()) {
      phase.getValue().end(phaseEndsMs.get(phase.getKey()), TimeUnit.MILLISECONDS);
    }
    applicationSpan.end(endMs, TimeUnit.MILLISECONDS);
    return emitted;
  }

  /**
   * One job's span and its stage attempts' spans; returns how many. {@code parent}: its place in
   * the application's trace, or ({@code request}) the caller's span of the Connect request that
   * ran it, linked to the application span. {@code openEndMs} ends what has no end time.
   */
  private int emitJob(Trace t, JsonNode job, Context parent, boolean request,
      String applicationId, List<JsonNode> stages, Map<Integer, List<String>> findingsByStage,
      long openEndMs) {
    long jobStartMs = job.path("submission_ms").asLong(-1);
    int jobId = job.path("job_id").asInt();
    long jobEndMs = job.path("completion_ms").asLong(-1);
    if (jobEndMs < jobStartMs) jobEndMs = Math.max(jobStartMs, openEndMs);
    SpanBuilder builder = t.tracer.spanBuilder("spark.job")
        .setStartTimestamp(jobStartMs, TimeUnit.MILLISECONDS);
    if (request) {
      builder.addLink(SpanContext.create(t.traceId, t.applicationSpanId, t.flags, t.state));
    }
    builder.setParent(parent);
    AttributesBuilder attributes = Attributes.builder()
        .put("spark.app.id", applicationId)
        .put("spark.job.id", jobId)
        .put("spark.job.description", job.path("description").asText())
        .put("spark.job.group", job.path("job_group").asText())
        .put("spark.sql.execution_id", job.path("sql_execution_id").asLong(-1))
        .put("spark.job.result", job.path("result").asText())
        .put("spark.task_attempts", job.path("task_attempts").asLong())
        .put("spark.task_attempts.failed", job.path("failed_task_attempts").asLong());
    putTotals(attributes, job.path("totals"));
    Span jobSpan = builder.setAllAttributes(attributes.build()).startSpan();
    if (job.path("result").asText().equals("failed")) {
      jobSpan.setAttribute("spark.failure_reason", job.path("failure_reason").asText());
      jobSpan.setStatus(StatusCode.ERROR, job.path("failure_reason").asText());
    }
    Context jobContext = parent.with(jobSpan);
    for (JsonNode stage : stages) {
      emitStage(t.tracer, jobContext, stage, findingsByStage, openEndMs);
    }
    jobSpan.end(jobEndMs, TimeUnit.MILLISECONDS);
    return 1 + stages.size();
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
    putProfile(attributes, stage.path("profile"));
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

  /**
   * The agent's samples of the stage (report.json stages[].profile, when the run was profiled):
   * sampled task time on and off CPU, and per category ("sparkprof.profile.serialization_ms",
   * "sparkprof.profile.python_wait_ms", ...).
   */
  private static void putProfile(AttributesBuilder attributes, JsonNode profile) {
    if (profile.isMissingNode()) return;
    attributes.put("sparkprof.profile.sampled_task_ms", profile.path("sampled_task_ms").asDouble());
    attributes.put("sparkprof.profile.on_cpu_ms", profile.path("on_cpu_ms").asDouble());
    attributes.put("sparkprof.profile.off_cpu_ms", profile.path("off_cpu_ms").asDouble());
    Iterator<Map.Entry<String, JsonNode>> categories = profile.path("categories_ms").fields();
    while (categories.hasNext()) {
      Map.Entry<String, JsonNode> category = categories.next();
      attributes.put("sparkprof.profile." + category.getKey() + "_ms", category.getValue().asDouble());
    }
    JsonNode hottest = profile.path("top_self").path(0);
    if (!hottest.isMissingNode()) {
      attributes.put("sparkprof.profile.hottest_frame", hottest.path("frame").asText());
    }
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
