#include "analyzer/report/json_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <utility>

#include "analyzer/executor_logs/executor_logs.h"
#include "analyzer/report/render.h"
#include "analyzer/report/streaming_view.h"

namespace sparkprof::report {

namespace {

void WriteTotals(const Totals& t, JsonWriter& out) {
  out.BeginObject()
      .Field("executor_run_time_ms", t.executor_run_time_ms)
      .Field("executor_cpu_time_ns", t.executor_cpu_time_ns)
      .Field("jvm_gc_time_ms", t.jvm_gc_time_ms)
      .Field("memory_bytes_spilled", t.memory_bytes_spilled)
      .Field("disk_bytes_spilled", t.disk_bytes_spilled)
      .Field("shuffle_read_bytes", t.shuffle_read_bytes)
      .Field("shuffle_write_bytes", t.shuffle_write_bytes)
      .Field("input_bytes", t.input_bytes)
      .Field("output_bytes", t.output_bytes)
      .Field("executor_deserialize_time_ms", t.executor_deserialize_time_ms)
      .Field("result_serialization_time_ms", t.result_serialization_time_ms)
      .Field("shuffle_fetch_wait_time_ms", t.shuffle_fetch_wait_time_ms)
      .Field("shuffle_write_time_ns", t.shuffle_write_time_ns)
      .Field("shuffle_remote_bytes_read", t.shuffle_remote_bytes_read)
      .Field("peak_execution_memory_bytes_max", t.peak_execution_memory_bytes_max)
      .Field("task_attempts_with_metrics", t.task_attempts_with_metrics);
  // Photon's second definition of a task's peak, only where some task's peak came from Photon.
  if (t.photon_peak_memory_largest_operator_bytes_max > 0) {
    out.Field("photon_peak_memory_largest_operator_bytes_max",
              t.photon_peak_memory_largest_operator_bytes_max);
  }
  out.EndObject();
}

void WriteCountMap(const std::map<std::string, int64_t>& map, JsonWriter& out) {
  out.BeginObject();
  for (const auto& [key, count] : map) out.Field(key, count);
  out.EndObject();
}

void WritePhases(const diagnosis::PhaseBreakdown& p, const profile::ApplicationProfile* profile,
                 JsonWriter& out) {
  out.BeginObject().Field("wall_ms", p.wall_ms);
  const std::array<int64_t, diagnosis::kPhaseCount> phase_ms = diagnosis::PhaseMs(p);
  const auto task_wait_by_kind = diagnosis::TaskWaitByKind(p, profile);
  for (int i = 0; i < diagnosis::kPhaseCount; ++i) {
    const std::string_view name = diagnosis::kPhaseNames[i];
    out.Key(name)
        .BeginObject()
        .Field("ms", phase_ms[i])
        .FieldDouble("ratio", p.Ratio(phase_ms[i]), 4);
    if (name == "task_wait" && !task_wait_by_kind.empty()) {
      out.Key("by_kind").BeginObject();
      for (const auto& [category, ms] : task_wait_by_kind) out.Field(CategoryName(category), ms);
      out.EndObject();
    }
    out.EndObject();
  }
  out.Field("cpu_measured", p.cpu_measured)
      .Field("tasks_running_ms", p.tasks_running_ms)
      .Field("commit_gap_ms", p.commit_gap_ms)
      .Field("starved_task_ms", p.starved_task_ms)
      .Field("slot_starved_wall_ms", p.slot_starved_wall_ms)
      .Field("peak_queued_tasks", p.peak_queued_tasks)
      .Field("first_slot_ms", p.first_slot_ms)
      .Field("peak_slots", static_cast<int64_t>(p.peak_slots));
  out.Key("slot_ms")
      .BeginObject()
      .Field("capacity", p.capacity_slot_ms)
      .Field("tasks", p.task_slot_ms)
      .Field("compute", p.compute_slot_ms)
      .Field("task_wait", p.task_wait_slot_ms)
      .Field("shuffle", p.shuffle_slot_ms)
      .Field("io_write", p.io_write_slot_ms)
      .Field("gc", p.gc_slot_ms)
      .Field("idle", p.idle_slot_ms)
      .EndObject();
  out.EndObject();
}

void WriteFinding(const diagnosis::Finding& f, JsonWriter& out) {
  out.BeginObject()
      .Field("rule", f.rule)
      .Field("severity", diagnosis::SeverityName(f.severity))
      .Field("category", diagnosis::CategoryName(f.category));
  out.Key("confidence")
      .BeginObject()
      .Field("level", diagnosis::ConfidenceLevelName(f.confidence.level))
      .Field("reason", f.confidence.reason)
      .EndObject();
  out.FieldArray("stage_ids", f.stage_ids);
  out.Field("title", f.title);
  out.Key("evidence").BeginArray();
  for (const diagnosis::Evidence& e : f.evidence) {
    out.BeginObject().Field("name", e.name);
    // Whole numbers (bytes, ms, counts) exactly; ratios and core-hours with 6 significant digits.
    if (std::floor(e.value) == e.value && std::fabs(e.value) < 9e15) {
      out.Field("value", static_cast<int64_t>(e.value));
    } else {
      out.FieldDouble("value", e.value, 6);
    }
    out.Field("unit", e.unit).EndObject();
  }
  out.EndArray();
  out.Field("explanation", f.explanation);
  out.Key("recommendations").BeginArray();
  for (const diagnosis::Recommendation& r : f.recommendations) {
    out.BeginObject();
    if (r.config_key.empty()) {
      out.Field("kind", "code").Field("change", r.value);
    } else {
      out.Field("kind", "config").Field("config", r.config_key).Field("value", r.value);
    }
    out.Field("reason", r.reason);
    if (!r.price.words.empty()) {
      out.Key("cost").BeginObject().Field("priced", r.price.priced);
      if (r.price.priced) {
        out.FieldDouble("before", r.price.before, 6)
            .FieldDouble("after", r.price.after, 6)
            .Field("currency", r.price.currency);
      }
      out.Field("words", r.price.words).EndObject();
    }
    out.EndObject();
  }
  out.EndArray();
  out.Key("expected_impact")
      .BeginObject()
      .Key("time_saved_ms")
      .BeginObject()
      .Field("low", f.impact.time_saved_ms_low)
      .Field("high", f.impact.time_saved_ms_high)
      .EndObject()
      .Key("core_hours_saved")
      .BeginObject()
      .FieldDouble("low", f.impact.core_hours_saved_low, 4)
      .FieldDouble("high", f.impact.core_hours_saved_high, 4)
      .EndObject()
      .Field("method", f.impact.method)
      .EndObject();
  if (!f.frames.empty()) {
    out.Key("frames").BeginArray();
    for (const diagnosis::FrameEvidence& frame : f.frames) {
      out.BeginObject()
          .Field("stage_id", static_cast<int64_t>(frame.stage_id))
          .Field("frame", frame.frame)
          .Field("application_frame", frame.application_frame)
          .Field("category", frame.category)
          .FieldDouble("ms", frame.ms, 9);
      if (frame.looks >= 0) out.Field("looks", frame.looks);  // (minor 12)
      out.EndObject();
    }
    out.EndArray();
  }
  out.Field("recipe", f.recipe)
      .Field("cost_ms", f.cost_ms)
      .Field("expected_saving_ms", f.expected_saving_ms())
      .Field("symptom_of", f.symptom_of)
      .EndObject();
}

void WriteCost(const cost::RunCost& c, JsonWriter& out) {
  out.BeginObject().Field("available", c.available);
  if (!c.available) {
    out.Field("reason", c.reason).EndObject();
    return;
  }
  out.Field("currency", c.currency)
      .Field("method", c.method)
      .Field("cloud", c.cloud)
      .Field("cloud_source", c.cloud_source)
      .Field("region", c.region)
      .Field("catalogue", c.catalogue)
      .Field("executor_instance", c.executor_instance)
      .Field("executor_instance_source", c.executor_instance_source)
      .Field("driver_instance", c.driver_instance)
      .Field("driver_instance_source", c.driver_instance_source)
      .Field("executor_cores", static_cast<int64_t>(c.executor_shape.cores))
      .FieldDouble("executor_memory_gib", c.executor_shape.memory_gib, 3)
      .Field("executors_per_instance", static_cast<int64_t>(c.executors_per_instance))
      .Field("executors", static_cast<int64_t>(c.executors))
      .Field("max_concurrent_executors", static_cast<int64_t>(c.max_concurrent_executors))
      .FieldDouble("executor_hours", c.executor_hours, 4)
      .FieldDouble("executor_cost", c.executor_cost, 4)
      .FieldDouble("driver_cost", c.driver_cost, 4)
      .FieldDouble("dbus", c.dbus, 4)
      .FieldDouble("dbu_cost", c.dbu_cost, 4)
      .FieldDouble("total", c.total, 4)
      .Field("wall_ms", c.wall_ms)
      .Field("current_cluster", c.current_cluster);
  auto point = [&](const cost::FrontierPoint& p) {
    out.BeginObject()
        .Field("instance", p.instance)
        .Field("count", static_cast<int64_t>(p.count))
        .Field("cores_per_executor", static_cast<int64_t>(p.cores_per_executor))
        .Field("predicted_wall_ms", p.predicted_wall_ms)
        .FieldDouble("cost", p.cost, 4)
        .Field("on_frontier", p.on_frontier)
        .Field("current", p.current)
        .EndObject();
  };
  out.Key("right_sizing")
      .BeginObject()
      .Field("note", c.frontier_note)
      .FieldDouble("max_slowdown", c.max_slowdown, 3)
      .FieldDouble("self_prediction_error", c.self_prediction_error, 4);
  if (c.current >= 0) {
    out.Key("current");
    point(c.points[c.current]);
  }
  if (c.recommended >= 0) {
    out.Key("recommended");
    point(c.points[c.recommended]);
    out.FieldDouble("saving_fraction", c.saving_fraction, 4);
  }
  out.Key("points").BeginArray();
  for (const cost::FrontierPoint& p : c.points) point(p);
  out.EndArray().EndObject();
  out.Key("spot").BeginObject().Field("available", c.spot.available);
  if (c.spot.available) {
    out.FieldDouble("discount_low", c.spot.discount_low, 3)
        .FieldDouble("discount_high", c.spot.discount_high, 3)
        .FieldDouble("cost_low", c.spot.cost_low, 4)
        .FieldDouble("cost_high", c.spot.cost_high, 4)
        .Field("interruption_notice_s", static_cast<int64_t>(c.spot.interruption_notice_s))
        .Field("work_per_executor_ms", c.spot.work_per_executor_ms)
        .Field("advice", c.spot.advice)
        .Field("source", c.spot.source);
  }
  out.EndObject();
  out.FieldArray("assumptions", c.assumptions).EndObject();
}

// Nanoseconds as milliseconds, 9 significant digits (a sampled figure, not a count).
void FieldMs(JsonWriter& out, const char* key, uint64_t ns) {
  out.FieldDouble(key, static_cast<double>(ns) / 1e6, 9);
}

void WriteFrameTimes(const char* key, const std::vector<profile::FrameTime>& frames,
                     JsonWriter& out) {
  out.Key(key).BeginArray();
  for (const profile::FrameTime& frame : frames) {
    out.BeginObject().Field("frame", frame.frame);
    FieldMs(out, "self_ms", frame.self_ns);
    FieldMs(out, "on_cpu_self_ms", frame.on_cpu_self_ns);
    FieldMs(out, "inclusive_ms", frame.inclusive_ns);
    FieldMs(out, "on_cpu_inclusive_ms", frame.on_cpu_inclusive_ns);
    out.Field("category", std::string(CategoryName(frame.category))).EndObject();
  }
  out.EndArray();
}

void WriteCategoriesMs(const profile::CategoryNs& category_ns, JsonWriter& out) {
  out.Key("categories_ms").BeginObject();
  for (int c = 0; c < kCategoryCount; ++c) {
    if (category_ns[c] == 0) continue;
    FieldMs(out, std::string(kCategoryNames[c]).c_str(), category_ns[c]);
  }
  out.EndObject();
}

void WriteDecomposedTask(const diagnosis::DecomposedTask& task, JsonWriter& out) {
  const profile::TaskTime& time = task.time;
  out.BeginObject()
      .Field("task_id", task.task_id)
      .Field("index", static_cast<int64_t>(task.index))
      .Field("attempt", static_cast<int64_t>(task.attempt))
      .Field("executor", task.executor)
      .Field("duration_ms", task.duration_ms)
      .Field("sampled", task.sampled);
  FieldMs(out, "sampled_task_ms", time.task_ns());
  FieldMs(out, "on_cpu_ms", time.on_cpu_ns());
  FieldMs(out, "off_cpu_ms", time.off_cpu_ns());
  FieldMs(out, "python_worker_cpu_ms", time.category_ns[CategoryIndex(Category::kPython)]);
  FieldMs(out, "python_worker_off_cpu_ms",
          time.category_ns[CategoryIndex(Category::kPythonOffCpu)]);
  WriteCategoriesMs(time.category_ns, out);
  out.EndObject();
}

void WriteTaskDecomposition(const diagnosis::StageTaskDecomposition& tasks, JsonWriter& out) {
  out.Key("tasks").BeginObject().Field("successful_tasks", tasks.successful_tasks);
  out.Key("slowest").BeginArray();
  for (const diagnosis::DecomposedTask& task : tasks.slowest) WriteDecomposedTask(task, out);
  out.EndArray();
  out.Key("median");
  WriteDecomposedTask(tasks.median, out);
  out.Field("slowest_vs_median", diagnosis::SlowestVsMedianText(tasks)).EndObject();
}

// A count as a JSON integer (a hostile profile's saturated sum stays the largest one).
int64_t CountOf(uint64_t count) {
  return static_cast<int64_t>(std::min<uint64_t>(count, INT64_MAX));
}

// (minor 12) The monitors the stage attempt's task threads waited to enter (docs/report-schema.md,
// stages[].profile.monitors); nothing when none.
void WriteMonitors(const profile::StageMonitors& monitors, JsonWriter& out) {
  if (monitors.empty()) return;
  out.Field("monitor_waits", CountOf(monitors.waits));
  FieldMs(out, "monitor_wait_ms", monitors.wait_ns);
  out.Field("monitor_holder_looks", CountOf(monitors.holder_looks));
  out.Key("monitors").BeginArray();
  for (const profile::MonitorTime& monitor : monitors.classes) {
    out.BeginObject().Field("class", monitor.monitor_class).Field("waits", CountOf(monitor.waits));
    FieldMs(out, "wait_ms", monitor.wait_ns);
    FieldMs(out, "mean_wait_ms", monitor.mean_wait_ns());
    out.Field("holder_looks", CountOf(monitor.holder_looks));
    out.Key("waiters").BeginArray();
    for (const profile::MonitorWaiterSite& site : monitor.waiters) {
      out.BeginObject()
          .Field("frame", site.frame)
          .Field("application_frame", site.application_frame)
          .Field("waits", CountOf(site.waits));
      FieldMs(out, "wait_ms", site.wait_ns);
      out.EndObject();
    }
    out.EndArray();
    out.Key("holders").BeginArray();
    for (const profile::MonitorHolderSite& site : monitor.holders) {
      out.BeginObject()
          .Field("frame", site.frame)
          .Field("application_frame", site.application_frame)
          .Field("looks", CountOf(site.looks))
          .EndObject();
    }
    out.EndArray();
    out.Key("holder_threads").BeginArray();
    for (const profile::MonitorHolderThread& thread : monitor.holder_threads) {
      out.BeginObject()
          .Field("thread", thread.thread)
          .Field("looks", CountOf(thread.looks))
          .EndObject();
    }
    out.EndArray();
    out.EndObject();
  }
  out.EndArray();
}

void WriteStageProfile(const profile::StageProfile& stage,
                       const diagnosis::StageTaskDecomposition* tasks, JsonWriter& out) {
  out.BeginObject();
  FieldMs(out, "sampled_task_ms", stage.task_ns);
  FieldMs(out, "on_cpu_ms", stage.on_cpu_ns);
  FieldMs(out, "off_cpu_ms", stage.off_cpu_ns);
  FieldMs(out, "python_worker_cpu_ms", stage.python_ns);
  FieldMs(out, "python_worker_off_cpu_ms", stage.python_off_cpu_ns);
  WriteCategoriesMs(stage.category_ns, out);
  WriteFrameTimes("top_self", stage.top_self, out);
  WriteFrameTimes("top_application", stage.top_application, out);
  out.Key("top_python").BeginArray();
  for (const profile::PythonFrameTime& frame : stage.top_python) {
    out.BeginObject().Field("function", frame.function).Field("frame", frame.frame);
    FieldMs(out, "ms", frame.ns);
    FieldMs(out, "on_cpu_ms", frame.on_cpu_ns);
    FieldMs(out, "runnable_ms", frame.runnable_ns);
    out.Field("waited_in", frame.waited_in).EndObject();
  }
  out.EndArray();
  out.Key("sites").BeginArray();
  for (const profile::Site& site : stage.sites) {
    out.BeginObject()
        .Field("category", std::string(CategoryName(site.category)))
        .Field("frame", site.frame)
        .Field("application_frame", site.application_frame)
        .Field("inlined_callees_unknown", site.inlined_callees_unknown);
    FieldMs(out, "ms", site.ns);
    out.EndObject();
  }
  out.EndArray();
  out.Key("patterns").BeginArray();
  for (const profile::PatternTime& pattern : stage.patterns) {
    out.BeginObject().Field("pattern", std::string(profile::PatternName(pattern.pattern)));
    FieldMs(out, "ms", pattern.ns);
    FieldMs(out, "on_cpu_ms", pattern.on_cpu_ns);
    out.Field("application_frame", pattern.application_frame);
    FieldMs(out, "application_frame_ms", pattern.application_frame_ns);
    out.EndObject();
  }
  out.EndArray();
  WriteMonitors(stage.monitors, out);
  if (tasks != nullptr) WriteTaskDecomposition(*tasks, out);
  out.EndObject();
}

// What the executors' and the driver's own logs said (`analyze --logs`).
void WriteExecutorLogs(const Analysis& analysis, JsonWriter& out) {
  out.Key("logs").BeginObject();
  const executor_logs::ExecutorLogs* logs = analysis.logs.get();
  out.Field("available", logs != nullptr);
  if (logs == nullptr) {
    out.Field("reason", analysis.logs_error).EndObject();
    return;
  }
  out.Field("source", logs->source);
  out.FieldArray("layouts", logs->layouts);
  out.Field("files_read", static_cast<int64_t>(logs->files_read))
      .Field("files_not_logs", static_cast<int64_t>(logs->files_not_logs))
      .Field("files_left_out", static_cast<int64_t>(logs->files_left_out))
      .Field("bytes_read", static_cast<int64_t>(logs->bytes_read))
      .Field("lines_read", static_cast<int64_t>(logs->lines_read))
      .Field("problem_count", static_cast<int64_t>(logs->problems.count));
  out.FieldArray("problems", logs->problems.messages);
  out.Field("hits_left_out", static_cast<int64_t>(logs->hits_left_out))
      .Field("other_application_hits", static_cast<int64_t>(logs->other_application_hits));
  out.Key("hits").BeginArray();
  for (const executor_logs::LogHit& hit : logs->hits) {
    const std::string& executor = logs->ExecutorOf(hit);
    out.BeginObject()
        .Field("executor_id", executor)
        .Field("container", logs->processes[hit.process].container)
        .Field("signal", executor_logs::LogSignalName(hit.signal))
        .Field("cause",
               model::ExhaustionName(executor_logs::ReadingOf(hit, executor == "driver").what))
        .Field("file", hit.file)
        .Field("line", static_cast<int64_t>(hit.line))
        .Field("time", hit.time)
        .Field("time_ms", hit.time_ms)
        .Field("count", static_cast<int64_t>(hit.count))
        .Field("last_time", hit.last_time)
        .Field("exit_code", static_cast<int64_t>(hit.exit_code))
        .Field("text", hit.text)
        .EndObject();
  }
  out.EndArray().EndObject();
}

void WriteProfile(const Analysis& analysis, JsonWriter& out) {
  out.Key("profile").BeginObject();
  const profile::ApplicationProfile* p = analysis.profile.get();
  out.Field("available", p != nullptr);
  if (p == nullptr) {
    out.Field("reason", analysis.profile_error).EndObject();
    return;
  }
  out.Field("source", p->source);
  out.FieldArray("modes", p->modes);
  out.FieldDouble("interval_ms", static_cast<double>(p->interval_ns) / 1e6, 6)
      .Field("off_cpu_sampled", p->has_off_cpu())
      .Field("executors", static_cast<int64_t>(p->executors))
      .Field("batches_read", static_cast<int64_t>(p->batches_read))
      .Field("batches_skipped", static_cast<int64_t>(p->batches_skipped))
      .Field("problem_count", static_cast<int64_t>(p->problem_count));
  out.FieldArray("problems", p->problems);
  out.Field("max_profiled_tasks", static_cast<int64_t>(p->max_profiled_tasks))
      .Field("task_rows_left_out", static_cast<int64_t>(p->task_rows_left_out));
  FieldMs(out, "task_left_out_ms", p->task_ns_left_out);
  const bool monitors = p->monitor_rows_left_out > 0 || p->monitor_wait_ns_left_out > 0 ||
                        std::any_of(p->stages.begin(), p->stages.end(),
                                    [](const auto& stage) { return !stage.monitors.empty(); });
  if (monitors) {  // (minor 12) only when the agent sent monitor waits
    out.Field("max_monitor_keys", static_cast<int64_t>(p->max_monitor_keys))
        .Field("monitor_rows_left_out", CountOf(p->monitor_rows_left_out));
    FieldMs(out, "monitor_wait_left_out_ms", p->monitor_wait_ns_left_out);
  }
  profile::CategoryNs totals{};
  uint64_t task = 0, on_cpu = 0, off_cpu = 0, python = 0, python_off_cpu = 0;
  for (const profile::StageProfile& stage : p->stages) {
    for (int c = 0; c < kCategoryCount; ++c) totals[c] += stage.category_ns[c];
    task += stage.task_ns;
    on_cpu += stage.on_cpu_ns;
    off_cpu += stage.off_cpu_ns;
    python += stage.python_ns;
    python_off_cpu += stage.python_off_cpu_ns;
  }
  FieldMs(out, "sampled_task_ms", task);
  FieldMs(out, "on_cpu_ms", on_cpu);
  FieldMs(out, "off_cpu_ms", off_cpu);
  FieldMs(out, "python_worker_cpu_ms", python);
  FieldMs(out, "python_worker_off_cpu_ms", python_off_cpu);
  FieldMs(out, "outside_tasks_ms", p->untagged_ns);
  if (p->cpu_use.agent_cpu_ns() > 0) {
    // (minor 13) What profiling cost: the agents' own CPU against their JVMs' (agent_cpu.h).
    const uint64_t jvms = p->cpu_use.agent_measured_process_cpu_ns();
    out.Key("agent_cpu").BeginObject();
    FieldMs(out, "ms", p->cpu_use.agent_cpu_ns());
    FieldMs(out, "jvm_cpu_ms", jvms);
    out.FieldDouble(
        "share",
        jvms == 0 ? 0.0
                  : static_cast<double>(p->cpu_use.agent_cpu_ns()) / static_cast<double>(jvms),
        6);
    out.EndObject();
  }
  if (!p->driver.empty()) {
    // (minor 10) The driver's own samples (docs/report-schema.md, profile.driver).
    const profile::DriverTime driver = p->driver.Total();
    out.Key("driver").BeginObject();
    out.Field("windows", static_cast<int64_t>(p->driver.windows.size()))
        .Field("windows_left_out", static_cast<int64_t>(p->driver.windows_left_out))
        .Field("sampled_ms", driver.covered_ms);
    FieldMs(out, "threads_ms", driver.threads_ns);
    FieldMs(out, "threads_off_cpu_ms", driver.off_cpu_ns);
    FieldMs(out, "jvm_threads_ms", driver.jvm_ns);
    out.Key("top").BeginArray();
    for (size_t i = 0; i < driver.activities.size() && i < 5; ++i) {
      const profile::DriverActivity& activity = p->driver.activities[driver.activities[i].activity];
      out.BeginObject()
          .Field("thread", activity.thread)
          .Field("frame", activity.frame)
          .Field("application", activity.application)
          .Field("python", activity.python)
          .Field("off_cpu", activity.off_cpu);
      FieldMs(out, "ms", driver.activities[i].ns);
      out.EndObject();
    }
    out.EndArray();
    out.EndObject();
  }
  out.Key("categories_ms").BeginObject();
  for (int c = 0; c < kCategoryCount; ++c) {
    if (totals[c] == 0) continue;
    FieldMs(out, std::string(kCategoryNames[c]).c_str(), totals[c]);
  }
  out.EndObject();
  out.Field("stages", static_cast<int64_t>(p->stages.size()));
  out.EndObject();
}

}  // namespace

// An executor's (or the driver's) memory as its agent measured it (profile.memory_use).
void WriteJvmMemory(const profile::JvmMemory& jvm, JsonWriter& out) {
  const profile::MemoryReading& last = jvm.last;
  out.BeginObject()
      .Field("pid", static_cast<int64_t>(jvm.pid))
      .Key("readings")
      .Uint(jvm.readings)
      .Key("peaks")
      .BeginObject()
      .Key("rss_bytes")
      .Uint(jvm.max_rss_bytes)
      .Key("container_bytes")
      .Uint(jvm.max_container_bytes)
      .Key("python_rss_bytes")
      .Uint(jvm.max_python_rss_bytes);
  if (jvm.jvm_accounts) {
    out.Key("heap_used_bytes")
        .Uint(jvm.max_heap_used_bytes)
        .Key("heap_used_after_gc_bytes")
        .Uint(jvm.max_heap_after_gc_bytes)
        .Key("old_used_after_gc_bytes")
        .Uint(jvm.max_old_after_gc_bytes)
        .Key("metaspace_bytes")
        .Uint(jvm.max_metaspace_bytes)
        .Key("direct_buffer_bytes")
        .Uint(jvm.max_direct_buffer_bytes)
        .Key("mapped_buffer_bytes")
        .Uint(jvm.max_mapped_buffer_bytes)
        .Key("spark_execution_bytes")
        .Uint(jvm.max_spark_execution_bytes)
        .Key("spark_storage_bytes")
        .Uint(jvm.max_spark_storage_bytes);
  }
  out.EndObject()
      .Key("last")
      .BeginObject()
      .Field("time_ms", last.time_ms)
      .Key("rss_bytes")
      .Uint(last.rss_bytes)
      .Key("container_usage_bytes")
      .Uint(last.container_usage_bytes)
      .Key("container_limit_bytes")
      .Uint(last.container_limit_bytes)
      .Key("python_rss_bytes")
      .Uint(last.python_rss_bytes);
  if (jvm.jvm_accounts) {
    out.Key("heap_used_bytes")
        .Uint(last.heap_used_bytes)
        .Key("heap_committed_bytes")
        .Uint(last.heap_committed_bytes)
        .Key("heap_max_bytes")
        .Uint(last.heap_max_bytes)
        .Key("heap_used_after_gc_bytes")
        .Uint(last.heap_used_after_gc_bytes)
        .Key("old_used_bytes")
        .Uint(last.old_used_bytes)
        .Key("old_max_bytes")
        .Uint(last.old_max_bytes)
        .Key("direct_buffer_max_bytes")
        .Uint(last.direct_buffer_max_bytes)
        .Field("java_threads", static_cast<int64_t>(last.java_threads))
        .Key("gc_collections")
        .Uint(last.gc_collections);
  }
  out.EndObject();
  out.Key("timeline").BeginArray();
  for (const profile::MemoryPoint& point : jvm.timeline) {
    out.BeginArray()
        .Int(point.time_ms)
        .Uint(point.rss_bytes)
        .Uint(point.container_usage_bytes)
        .Uint(point.heap_used_bytes)
        .Uint(point.python_rss_bytes)
        .EndArray();
  }
  out.EndArray().EndObject();
}

void WriteStageSummary(const StageSummary& stage, JsonWriter& out,
                       const profile::StageProfile* profile,
                       const diagnosis::StageTaskDecomposition* tasks) {
  out.BeginObject()
      .Field("stage_id", static_cast<int64_t>(stage.stage_id))
      .Field("attempt", static_cast<int64_t>(stage.attempt))
      .Field("job_id", static_cast<int64_t>(stage.job_id))
      .Field("name", stage.name)
      .Field("num_tasks", static_cast<int64_t>(stage.num_tasks))
      .Field("status", stage.status)
      .Field("submission_ms", stage.submission_ms)
      .Field("completion_ms", stage.completion_ms)
      .Field("duration_ms", stage.duration_ms)
      .Field("failure_reason", stage.failure_reason)
      .Field("task_attempts", stage.task_attempts)
      .Field("failed_task_attempts", stage.failed_task_attempts);
  out.Key("task_duration_ms")
      .BeginObject()
      .Field("p50", stage.task_duration_ms.p50)
      .Field("p95", stage.task_duration_ms.p95)
      .Field("max", stage.task_duration_ms.max)
      .EndObject();
  out.Key("totals");
  WriteTotals(stage.totals, out);
  if (profile != nullptr) {
    out.Key("profile");
    WriteStageProfile(*profile, tasks, out);
  }
  out.EndObject();
}

void WriteJobSummary(const JobSummary& job, JsonWriter& out) {
  out.BeginObject()
      .Field("job_id", static_cast<int64_t>(job.job_id))
      .Field("description", job.description)
      .Field("job_group", job.job_group)
      .Field("sql_execution_id", job.sql_execution_id);
  out.FieldArray("stage_ids", job.stage_ids);
  out.Field("submission_ms", job.submission_ms)
      .Field("completion_ms", job.completion_ms)
      .Field("duration_ms", job.duration_ms)
      .Field("result", job.result)
      .Field("failure_reason", job.failure_reason)
      .Field("task_attempts", job.task_attempts)
      .Field("failed_task_attempts", job.failed_task_attempts);
  out.Key("totals");
  WriteTotals(job.totals, out);
  out.EndObject();
}

void WriteStreamingBatch(const model::StreamingBatch& b, JsonWriter& out) {
  out.BeginObject()
      .Field("first_batch_id", b.first_batch_id)
      .Field("batches", static_cast<int64_t>(b.batches))
      .Field("timestamp_ms", b.timestamp_ms)
      .Field("input_rows", b.input_rows)
      .Field("trigger_execution_ms", b.trigger_execution_ms)
      .Field("latest_offset_ms", b.latest_offset_ms)
      .Field("get_batch_ms", b.get_batch_ms)
      .Field("query_planning_ms", b.query_planning_ms)
      .Field("add_batch_ms", b.add_batch_ms)
      .Field("wal_commit_ms", b.wal_commit_ms)
      .Field("commit_offsets_ms", b.commit_offsets_ms)
      .Field("state_rows_total", b.state_rows_total)
      .Field("state_memory_bytes", b.state_memory_bytes)
      .Field("state_rows_updated", b.state_rows_updated)
      .Field("state_rows_removed", b.state_rows_removed)
      .Field("state_commit_ms", b.state_commit_ms)
      .Field("watermark_ms", b.watermark_ms)
      .FieldDouble("offsets_behind_latest", b.offsets_behind_latest, 6)
      .Field("jobs", static_cast<int64_t>(b.jobs))
      .Field("tasks", b.tasks)
      .Field("task_run_time_ms", b.task_run_time_ms)
      .EndObject();
}

// Only for an application with streaming queries (streaming_view.h).
void WriteStreaming(const Analysis& analysis, JsonWriter& out) {
  const std::vector<StreamingRunView> views = StreamingViews(analysis.model);
  if (views.empty()) return;
  out.Key("streaming").BeginObject();
  out.Field("runs_not_kept", analysis.model.streaming.runs_not_kept);
  out.Key("queries").BeginArray();
  for (const StreamingRunView& view : views) {
    const model::StreamingQueryRun& run = *view.run;
    out.BeginObject()
        .Field("query_id", run.query_id)
        .Field("run_id", run.run_id)
        .Field("name", run.name)
        .Field("start_time_ms", run.start_time_ms)
        .Field("status", !run.terminated              ? "running"
                         : run.exception_head.empty() ? "stopped"
                                                      : "failed")
        .Field("exception", run.exception_head);
    out.FieldArray("sources", run.sources);
    out.Field("sink", run.sink);
    out.FieldArray("state_operators", run.state_operators);
    out.Field("trigger_interval_ms", run.trigger_interval_ms)
        .Field("batches", run.batches_total)
        .Field("input_rows", run.input_rows_total)
        .Field("idle_events", run.idle_events)
        .Field("cancelled_jobs", static_cast<int64_t>(run.cancelled_jobs))
        .Field("state_shuffle_partitions", run.state_shuffle_partitions)
        .Field("watermark_seen", run.watermark_seen)
        .Field("records", static_cast<int64_t>(run.batches.size()))
        .Field("records_merge_factor", static_cast<int64_t>(run.records_merge_factor));
    out.Key("totals");
    WriteStreamingBatch(view.all, out);
    out.Field("first_state_rows", view.first_state_rows);
    const diagnosis::StreamingWindow& w = view.recent;
    out.Key("recent");
    if (!w.valid()) {
      out.Null();
    } else {
      out.BeginObject()
          .Field("first_batch_id", w.first_batch_id)
          .Field("last_batch_id", w.last_batch_id)
          .Field("batches", w.batches)
          .Field("input_rows", w.input_rows)
          .Field("span_ms", w.span_ms)
          .Field("busy_ms", w.busy_ms)
          .Field("add_batch_ms", w.add_batch_ms)
          .Field("bookkeeping_ms", w.bookkeeping_ms)
          .Field("tasks", w.tasks)
          .FieldDouble("input_rows_per_second", w.input_rows_per_s(), 6)
          .FieldDouble("processed_rows_per_second", w.processed_rows_per_s(), 6)
          .FieldDouble("busy_share", w.busy_share(), 6)
          .EndObject();
    }
    out.Key("worst_batches").BeginArray();
    for (const model::StreamingBatch& b : run.worst_batches) WriteStreamingBatch(b, out);
    out.EndArray();
    out.Key("timeline").BeginArray();
    for (const model::StreamingBatch& b : view.timeline) WriteStreamingBatch(b, out);
    out.EndArray();
    out.EndObject();
  }
  out.EndArray();
  out.EndObject();
}

void WriteJsonReport(const Analysis& analysis, JsonWriter& out) {
  const model::ApplicationModel& m = analysis.model;
  const ApplicationSummary& s = analysis.summary;
  out.BeginObject();
  out.Field("schema", kReportSchema).Field("schema_minor", kReportSchemaMinor);
  out.Key("application")
      .BeginObject()
      .Field("id", m.app_id)
      .Field("name", m.app_name)
      .Field("attempt_id", m.attempt_id)
      .Field("user", m.user)
      .Field("spark_version", m.spark_version)
      .Field("start_ms", m.start_time_ms)
      .Field("end_ms", m.end_time_ms)
      .Field("duration_ms", m.duration_ms())
      .Field("complete", m.complete)
      .Field("databricks", m.databricks)
      .EndObject();

  const Counts& c = s.counts;
  out.Key("counts")
      .BeginObject()
      .Field("jobs", c.jobs)
      .Field("failed_jobs", c.failed_jobs)
      .Field("stages", c.stages)
      .Field("stage_attempts", c.stage_attempts)
      .Field("failed_stage_attempts", c.failed_stage_attempts)
      .Field("task_attempts", c.task_attempts)
      .Field("speculative_task_attempts", c.speculative_task_attempts)
      .Field("sql_executions", c.sql_executions)
      .Field("task_start_without_end", c.task_start_without_end)
      .Field("task_end_without_start", c.task_end_without_start)
      .Field("resubmitted_tasks", c.resubmitted_tasks)
      .Field("photon_peak_memory_tasks", c.photon_peak_memory_tasks)
      .Field("photon_shuffle_write_tasks", c.photon_shuffle_write_tasks)
      .EndObject();

  out.Key("task_end_reasons");
  WriteCountMap(s.task_end_reasons, out);

  out.Key("executors")
      .BeginObject()
      .Field("added", s.executors.added)
      .Field("removed", s.executors.removed)
      .Field("max_concurrent", s.executors.max_concurrent)
      .Key("removal_reasons");
  WriteCountMap(s.executors.removal_reasons, out);
  out.Key("list").BeginArray();
  for (const model::Executor& executor : m.executors) {
    out.BeginObject()
        .Field("id", executor.executor_id)
        .Field("host", executor.host)
        .Field("cores", static_cast<int64_t>(executor.total_cores))
        .Field("added_ms", executor.added_time_ms)
        .Field("removed_ms", executor.removed_time_ms)
        .Field("removed_reason", executor.removed_reason);
    if (executor.peaks.present) {
      out.Key("peaks")
          .BeginObject()
          .Field("jvm_heap_memory_bytes", executor.peaks.jvm_heap_memory_bytes)
          .Field("jvm_off_heap_memory_bytes", executor.peaks.jvm_off_heap_memory_bytes)
          .Field("on_heap_execution_memory_bytes", executor.peaks.on_heap_execution_memory_bytes)
          .Field("process_tree_jvm_rss_memory_bytes",
                 executor.peaks.process_tree_jvm_rss_memory_bytes)
          .Field("major_gc_time_ms", executor.peaks.major_gc_time_ms)
          .Field("minor_gc_time_ms", executor.peaks.minor_gc_time_ms)
          .EndObject();
    }
    if (const profile::JvmMemory* jvm =
            analysis.profile ? analysis.profile->memory_use.Find(executor.executor_id) : nullptr) {
      out.Key("memory");
      WriteJvmMemory(*jvm, out);
    }
    out.EndObject();
  }
  out.EndArray();
  if (const profile::JvmMemory* driver =
          analysis.profile ? analysis.profile->memory_use.Find("driver") : nullptr) {
    out.Key("driver_memory");
    WriteJvmMemory(*driver, out);
  }
  out.EndObject();

  out.Key("totals");
  WriteTotals(s.totals, out);

  out.Key("stages").BeginArray();
  for (const StageSummary& stage : s.stages) {
    WriteStageSummary(
        stage, out,
        analysis.profile ? analysis.profile->Find(stage.stage_id, stage.attempt) : nullptr,
        diagnosis::FindTaskDecomposition(analysis.task_decompositions, stage.stage_id,
                                         stage.attempt));
  }
  out.EndArray();

  out.Key("jobs").BeginArray();
  for (const JobSummary& job : s.jobs) WriteJobSummary(job, out);
  out.EndArray();

  out.Key("sql_executions").BeginArray();
  for (const auto& [id, sql] : m.sql_executions) {
    out.BeginObject()
        .Field("execution_id", sql.execution_id)
        .Field("description", sql.description)
        .Field("start_ms", sql.start_time_ms)
        .Field("end_ms", sql.end_time_ms)
        .Field("error", sql.error_message_head);
    out.FieldArray("job_ids", sql.job_ids);
    auto summary = s.sql_executions.find(id);
    if (summary != s.sql_executions.end()) {
      const SqlExecutionSummary& q = summary->second;
      out.Field("duration_ms", q.duration_ms)
          .Field("result", q.result)
          .Field("task_attempts", q.task_attempts)
          .Field("failed_task_attempts", q.failed_task_attempts);
      out.Key("totals");
      WriteTotals(q.totals, out);
    }
    out.EndObject();
  }
  out.EndArray();

  const eventlog::ReadReport& r = analysis.read;
  out.Key("input")
      .BeginObject()
      .Field("name", analysis.log_name)
      .Field("layout", analysis.layout)
      .Field("in_progress_by_name", analysis.in_progress_by_name);
  out.Key("files").BeginArray();
  for (const eventlog::FileReadReport& file : r.files) {
    out.BeginObject()
        .Field("file", file.file)
        .Field("codec", file.codec)
        .Field("bytes", static_cast<int64_t>(file.compressed_bytes))
        .Field("decompressed_bytes", static_cast<int64_t>(file.decoded_bytes))
        .Field("lines", file.lines)
        .Field("events", file.events)
        .Field("error", file.error)
        .EndObject();
  }
  out.EndArray();
  out.Field("lines", r.lines).Field("events", r.events).Field("bad_line_count", r.bad_line_count);
  out.Key("bad_lines").BeginArray();
  for (const eventlog::BadLine& bad : r.bad_lines) {
    out.BeginObject()
        .Field("file", bad.file)
        .Field("line", bad.line)
        .Field("byte_offset", static_cast<int64_t>(bad.byte_offset))
        .Field("error", bad.error)
        .EndObject();
  }
  out.EndArray();
  out.Key("unknown_events").BeginObject();
  for (const auto& [name, count] : r.unknown_events) out.Field(name, count);
  out.EndObject();
  out.Key("not_read").BeginArray();
  for (const source::DiscoveryWarning& skipped : analysis.not_read) {
    out.BeginObject().Field("path", skipped.path).Field("why", skipped.message).EndObject();
  }
  out.EndArray();
  out.Field("not_read_left_out", static_cast<int64_t>(analysis.not_read_left_out));
  out.EndObject();

  out.Key("phases");
  WritePhases(analysis.phases, analysis.profile.get(), out);
  out.Key("findings").BeginArray();
  for (const diagnosis::Finding& finding : analysis.findings) WriteFinding(finding, out);
  out.EndArray();
  out.Key("cost");
  WriteCost(analysis.cost, out);
  WriteStreaming(analysis, out);
  // Only when a profile was read or asked for: reports without one stay as they were.
  if (analysis.profile != nullptr || !analysis.profile_error.empty()) WriteProfile(analysis, out);
  if (analysis.logs != nullptr || !analysis.logs_error.empty()) WriteExecutorLogs(analysis, out);
  if (!analysis.driver_batches.empty()) {
    out.Key("driver").BeginObject().Key("batches").BeginObject();
    for (const auto& [outcome, count] : analysis.driver_batches) out.Key(outcome).Uint(count);
    out.EndObject().EndObject();
  }
  out.EndObject();
}

std::string RenderJsonSection(const Analysis& analysis) {
  JsonWriter out;
  WriteJsonReport(analysis, out);
  return out.Take();
}

namespace {
// The document's nesting, as JsonWriter (2-space indent) writes it around the report objects.
constexpr std::string_view kApplicationIndent = "    ";
}  // namespace

std::string JsonApplicationsHead() {
  JsonWriter out;
  out.BeginObject()
      .Field("schema", kReportSchema)
      .Field("schema_minor", kReportSchemaMinor)
      .Key("applications")
      .BeginArray();
  return out.Take();
}

void AppendJsonApplication(std::string_view section, bool first, std::string& out) {
  // Every newline in JsonWriter's output is indentation (strings escape theirs), so one level
  // deeper is the same text with each line start moved right.
  if (!first) out += ',';
  out += '\n';
  out += kApplicationIndent;
  size_t start = 0;
  for (size_t nl = section.find('\n'); nl != std::string_view::npos;
       nl = section.find('\n', start)) {
    out.append(section, start, nl + 1 - start);
    out += kApplicationIndent;
    start = nl + 1;
  }
  out.append(section, start);
}

std::string JsonApplicationsTail(const NotAnalysedList& not_analysed) {
  // Written as an object of its own, whose members (already at the wrapper's indentation) then
  // follow the applications.
  JsonWriter out;
  out.BeginObject().Key("not_analysed").BeginArray();
  for (const source::DiscoveryWarning& entry : not_analysed.entries) {
    out.BeginObject().Field("path", entry.path).Field("why", entry.message).EndObject();
  }
  out.EndArray()
      .Field("not_analysed_left_out", static_cast<int64_t>(not_analysed.left_out))
      .EndObject();
  const std::string members = out.Take();
  return "\n  ]," + members.substr(1, members.size() - 2) + "}\n";
}

std::string RenderJson(const std::vector<const Analysis*>& analyses,
                       const NotAnalysedList& not_analysed) {
  // The pieces above, joined by ReportAssembler.
  return RenderReport("json", analyses, not_analysed);
}

}  // namespace sparkprof::report
