// idle-executors: executors held (and paid for) while their cores ran no task.
//
// Slot utilisation = task slot-time / allocated core-time, where allocated core-time = sum over
// executors with cores of cores x (removed, else application end, - added).
// Thresholds and sources (analyzer-facts.md, section c):
//   * idle >= 50% of allocated core-time -> warning: DataFlint's idleCoresTooHigh (idle cores >
//   50%).
//   * idle >= 80% (slot use < 20%) -> critical: pstysz/spark-advisor's lower level.
//   * only when >= 1 core-hour was allocated (ours): smaller runs waste too little to act on --
//     unless the executors sat through one stretch of >= 20 s with no task at all while the
//     driver worked alone (>= 20 s driver-only; a job commit is io-write-bound's) (ours).
// Costs core-hours, not wall time: cost_ms is 0, so it sorts after the findings that cost time.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/severity.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kWarningIdle = 0.5;
constexpr double kCriticalIdle = 0.8;
constexpr double kMinAllocatedCoreHours = 1.0;
constexpr int64_t kShortRunGapMs = 20'000;
}  // namespace

namespace {
// The time-weighted 95th percentile of running tasks over the time at least one ran; each
// executor's count capped at its cores while it is alive (executors with unknown cores uncapped).
int64_t P95RunningTasks(const model::ApplicationModel& m) {
  std::map<std::string, int64_t> cores_of;
  struct Change {
    int64_t time_ms;
    int order;  // 0: task ends / executor removals, 1: executor additions, 2: task launches
    std::string executor;
    int64_t delta;
    bool cores;  // executor cores (else running tasks)
  };
  std::vector<Change> changes;
  for (const model::Executor& executor : m.executors) {
    if (executor.total_cores <= 0) continue;
    cores_of[executor.executor_id] = executor.total_cores;
    int64_t added = executor.added_time_ms >= 0 ? executor.added_time_ms : m.start_time_ms;
    changes.push_back({added, 1, executor.executor_id, executor.total_cores, true});
    if (executor.removed_time_ms >= 0)
      changes.push_back(
          {executor.removed_time_ms, 0, executor.executor_id, -executor.total_cores, true});
  }
  for (const model::TaskAttempt& task : m.tasks) {
    if (task.launch_time_ms < 0 || !task.ended() || task.executor == model::kNone) continue;
    const std::string& executor = m.strings.Get(task.executor);
    changes.push_back({task.launch_time_ms, 2, executor, 1, false});
    changes.push_back({std::max(task.finish_time_ms, task.launch_time_ms), 0, executor, -1, false});
  }
  std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return a.time_ms != b.time_ms ? a.time_ms < b.time_ms : a.order < b.order;
  });
  std::map<std::string, std::pair<int64_t, int64_t>> state;  // executor -> (running, alive cores)
  auto counted = [&](const std::string& executor) {
    const auto& [running, alive] = state[executor];
    return cores_of.count(executor) != 0 ? std::min(running, alive) : running;
  };
  std::map<int64_t, int64_t> ms_at_level;
  int64_t level = 0, busy_ms = 0, now = changes.empty() ? 0 : changes.front().time_ms;
  for (const Change& c : changes) {
    if (level > 0 && c.time_ms > now) {
      ms_at_level[level] += c.time_ms - now;
      busy_ms += c.time_ms - now;
    }
    now = c.time_ms;
    level -= counted(c.executor);
    auto& [running, alive] = state[c.executor];
    int64_t& value = c.cores ? alive : running;
    value = std::max<int64_t>(value + c.delta, 0);
    level += counted(c.executor);
  }
  int64_t seen = 0;
  for (const auto& [running, ms] : ms_at_level) {
    seen += ms;
    if (20 * seen >= 19 * busy_ms) return running;
  }
  return 0;
}

// Executors with cores alive at once, at most (the driver in local mode included).
int64_t PeakExecutors(const model::ApplicationModel& m) {
  std::vector<std::pair<int64_t, int>> edges;
  for (const model::Executor& executor : m.executors) {
    if (executor.total_cores <= 0) continue;
    edges.push_back({executor.added_time_ms >= 0 ? executor.added_time_ms : m.start_time_ms, 1});
    if (executor.removed_time_ms >= 0) edges.push_back({executor.removed_time_ms, -1});
  }
  std::sort(edges.begin(), edges.end());
  int64_t alive = 0, peak = 0;
  for (const auto& [time, delta] : edges) {
    alive += delta;
    peak = std::max(peak, alive);
  }
  return peak;
}
}  // namespace

void IdleExecutors(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  if (m.duration_ms() <= 0) return;
  const double allocated_core_ms = HeldCoreHours(m) * 3'600'000.0;
  if (allocated_core_ms <= 0) return;
  int64_t max_cores_per_executor = 0;
  for (const model::Executor& executor : m.executors) {
    max_cores_per_executor = std::max<int64_t>(max_cores_per_executor, executor.total_cores);
  }
  // Small runs: only when executors sat through one long stretch without any task (ready tasks
  // waiting with no executor alive are no executor's idle time: left out).
  int64_t driver_only_ms = input.phases.driver_only_ms;
  for (const auto& [from, to] : input.phases.waiting_without_slots_spans)
    driver_only_ms -= to - from;
  if (allocated_core_ms / 3'600'000.0 < kMinAllocatedCoreHours &&
      (LongestNoTaskGap(input).ms < kShortRunGapMs || driver_only_ms < kShortRunGapMs)) {
    return;
  }
  const double busy = static_cast<double>(input.phases.task_slot_ms);
  const double idle_share = std::clamp(1.0 - busy / allocated_core_ms, 0.0, 1.0);
  if (idle_share < kWarningIdle) return;
  const double idle_core_hours = (allocated_core_ms - busy) / 3'600'000.0;

  // Demand: the 95th percentile over time of the tasks running at once, while any ran. Each
  // executor counts at most its cores: the scheduler frees a slot at the task's status update and
  // may launch the next task before the driver records the finish time, so launch..finish spans
  // overlap by the result-handling time (with tiny tasks, far beyond the cores).
  const int64_t p95_running = P95RunningTasks(m);
  const int64_t cores = std::max<int64_t>(1, max_cores_per_executor);
  const int64_t executors_had = std::max<int64_t>(1, PeakExecutors(m));
  const int64_t executors_needed =
      std::clamp<int64_t>((p95_running + cores - 1) / cores, 1, executors_had);
  const bool fewer = executors_needed < executors_had;
  const bool local = input.LocalMode();

  Finding f = NewFinding("idle-executors");
  f.confidence = {ConfidenceLevel::kHigh,
                  "executor lifetimes and task run times from the log: idle slot time is "
                  "measured, not estimated"};
  f.severity = idle_share >= kCriticalIdle ? Severity::kCritical : Severity::kWarning;
  f.evidence = {
      {"allocated_core_hours", allocated_core_ms / 3'600'000.0, "core-hours"},
      {"busy_core_hours", busy / 3'600'000.0, "core-hours"},
      {"idle_share", idle_share, "ratio"},
      {"idle_core_hours", idle_core_hours, "core-hours"},
      {"p95_running_tasks", static_cast<double>(p95_running), "tasks"},
      {"peak_executors", static_cast<double>(executors_had), "count"},
      {"peak_slots", static_cast<double>(input.phases.peak_slots), "cores"},
      {"driver_only_ms", static_cast<double>(input.phases.driver_only_ms), "ms"},
  };
  f.title = Fixed(100 * idle_share, 0) + "% of the allocated executor cores ran no task (" +
            Fixed(idle_core_hours, 1) + " core-hours)";
  f.explanation =
      "Executors held " + Fixed(allocated_core_ms / 3'600'000.0, 1) + " core-hours; tasks used " +
      Fixed(busy / 3'600'000.0, 1) +
      ". The rest was paid for and idle: while the driver worked alone (" +
      HumanDurationMs(input.phases.driver_only_ms) +
      " with no task running), during stage tails, and whenever fewer tasks were "
      "ready than cores. 95% of the time tasks ran, at most " +
      std::to_string(p95_running) + " ran at once, which " +
      (local ? "as many of the driver's " + std::to_string(cores) + " local task threads serve."
             : std::to_string(executors_needed) + " executors of " + std::to_string(cores) +
                   " cores serve" +
                   (fewer ? " (the run had " + std::to_string(executors_had) + ")."
                          : std::string(": the busy periods used all ") +
                                std::to_string(executors_had) +
                                " executors, so the waste is in the gaps between "
                                "them, not in the peak."));
  if (local) {
    f.recommendations.push_back(
        {"spark.master", "local[" + std::to_string(std::max<int64_t>(1, p95_running)) + "]",
         "local mode runs every task in the driver; " + std::to_string(p95_running) +
             " threads cover 95% of the time tasks ran, the other cores can go to other work"});
  } else {
    const bool dynamic = input.Property("spark.dynamicAllocation.enabled", "false") == "true";
    if (!dynamic) {
      f.recommendations.push_back({"spark.dynamicAllocation.enabled", "true",
                                   "releases executors that have no task and asks for them again "
                                   "when tasks queue"});
      f.recommendations.push_back(
          {"spark.dynamicAllocation.shuffleTracking.enabled", "true",
           "lets dynamic allocation work without an external shuffle service"});
    }
    f.recommendations.push_back(
        {"spark.dynamicAllocation.maxExecutors", std::to_string(executors_needed),
         fewer
             ? "95% of the time tasks ran, at most " + std::to_string(p95_running) +
                   " ran at once, i.e. " + std::to_string(executors_needed) + " executors of " +
                   std::to_string(cores) + " cores, fewer than the " +
                   std::to_string(executors_had) + " the run had"
             : "the cap the run had: at its busiest it kept all " + std::to_string(executors_had) +
                   " executors busy, so keep it; the saving comes from releasing them in the "
                   "gaps"});
    f.recommendations.push_back(
        {"spark.dynamicAllocation.executorIdleTimeout", "60s",
         "the default; an executor without tasks for a minute is released"});
  }
  f.impact.time_saved_ms_low = 0;
  f.impact.time_saved_ms_high = 0;
  f.impact.core_hours_saved_low = idle_core_hours * 0.3;
  f.impact.core_hours_saved_high = idle_core_hours * 0.7;
  f.impact.method =
      local ? "30-70% of the idle core-hours: fewer local threads leave the machine's other cores "
              "to other work, but the peaks need the threads they use; run time is unchanged"
            : "30-70% of the idle core-hours: dynamic allocation releases executors after the "
              "idle timeout and re-acquires them with some delay, so not all idle time goes; "
              "run time is unchanged";
  f.cost_ms = 0;
  if (fewer && !local) {
    // The what-if replay with the executors the demand needed: core-hours saved and what it
    // does to the wall time (queued tasks wait longer at the peaks).
    whatif::Scenario right_sized;
    right_sized.executors = static_cast<int32_t>(executors_needed);
    const whatif::Prediction p = input.simulator->Get().Simulate(right_sized);
    if (p.actual_wall_ms > 0 && p.self_prediction_error <= 0.25) {
      const double saved = std::max(p.baseline_core_hours - p.predicted_core_hours, 0.0);
      const int64_t slower = p.predicted_wall_ms - p.baseline_wall_ms;
      f.impact.core_hours_saved_high = saved;
      f.impact.core_hours_saved_low = saved * 0.5;
      f.evidence.push_back({"simulated_wall_change_ms", static_cast<double>(slower), "ms"});
      f.impact.method =
          "simulated (sparkprof whatif --set spark.executor.instances=" +
          std::to_string(executors_needed) + "): the run replayed with " +
          std::to_string(executors_needed) + " executors holds " + Fixed(saved, 2) +
          " fewer core-hours (high) and ends " + HumanDurationMs(std::max<int64_t>(slower, 0)) +
          " later; half of it (low) with dynamic allocation, which releases executors only after "
          "the idle timeout (self-prediction error " +
          Fixed(100 * p.self_prediction_error, 1) + "%)";
    }
  }
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
