// idle-executors: executors held (and paid for) while their cores ran no task.
//
// Slot utilisation = task slot-time / allocated core-time, where allocated core-time = sum over
// executors with cores of cores x (removed, else application end, - added).
// Thresholds and sources (analyzer-facts.md, section c):
//   * idle >= 50% of allocated core-time -> warning: DataFlint's idleCoresTooHigh (idle cores >
//   50%).
//   * idle >= 80% (slot use < 20%) -> critical: pstysz/spark-advisor's lower level.
//   * only when >= 1 core-hour was allocated (ours): smaller runs waste too little to act on.
// Costs core-hours, not wall time: cost_ms is 0, so it sorts after the findings that cost time.
#include <algorithm>
#include <cmath>
#include <vector>

#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kWarningIdle = 0.5;
constexpr double kCriticalIdle = 0.8;
constexpr double kMinAllocatedCoreHours = 1.0;
}  // namespace

void IdleExecutors(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  if (m.duration_ms() <= 0) return;
  double allocated_core_ms = 0;
  int64_t max_cores_per_executor = 0;
  for (const model::Executor& executor : m.executors) {
    if (executor.total_cores <= 0) continue;
    int64_t added = std::max(executor.added_time_ms >= 0 ? executor.added_time_ms : m.start_time_ms,
                             m.start_time_ms);
    int64_t removed = std::min(
        executor.removed_time_ms >= 0 ? executor.removed_time_ms : m.end_time_ms, m.end_time_ms);
    if (removed <= added) continue;
    allocated_core_ms +=
        static_cast<double>(executor.total_cores) * static_cast<double>(removed - added);
    max_cores_per_executor = std::max<int64_t>(max_cores_per_executor, executor.total_cores);
  }
  if (allocated_core_ms / 3'600'000.0 < kMinAllocatedCoreHours) return;
  const double busy = static_cast<double>(input.phases.task_slot_ms);
  const double idle_share = std::clamp(1.0 - busy / allocated_core_ms, 0.0, 1.0);
  if (idle_share < kWarningIdle) return;
  const double idle_core_hours = (allocated_core_ms - busy) / 3'600'000.0;

  // Demand: the 95th percentile of concurrently running tasks, sampled at every task launch.
  std::vector<std::pair<int64_t, int>> edges;
  for (const model::TaskAttempt& task : m.tasks) {
    if (task.launch_time_ms < 0 || !task.ended()) continue;
    edges.push_back({task.launch_time_ms, 1});
    edges.push_back({std::max(task.finish_time_ms, task.launch_time_ms), -1});
  }
  std::sort(edges.begin(), edges.end());
  std::vector<int64_t> running_at_launch;
  int64_t running = 0;
  for (const auto& [time, delta] : edges) {
    running += delta;
    if (delta > 0) running_at_launch.push_back(running);
  }
  std::sort(running_at_launch.begin(), running_at_launch.end());
  const int64_t p95_running = NearestRank(running_at_launch, 0.95);
  const int64_t cores = std::max<int64_t>(1, max_cores_per_executor);
  const int64_t executors_needed = std::max<int64_t>(1, (p95_running + cores - 1) / cores);

  Finding f;
  f.rule = "idle-executors";
  f.severity = idle_share >= kCriticalIdle ? Severity::kCritical : Severity::kWarning;
  f.recipe = "docs/recipes/troubleshoot/slow-spark-jobs.md";
  f.evidence = {
      {"allocated_core_hours", allocated_core_ms / 3'600'000.0, "core-hours"},
      {"busy_core_hours", busy / 3'600'000.0, "core-hours"},
      {"idle_share", idle_share, "ratio"},
      {"idle_core_hours", idle_core_hours, "core-hours"},
      {"p95_running_tasks", static_cast<double>(p95_running), "tasks"},
      {"peak_slots", static_cast<double>(input.phases.peak_slots), "cores"},
      {"driver_only_ms", static_cast<double>(input.phases.driver_only_ms), "ms"},
  };
  f.title = Fixed(100 * idle_share, 0) + "% of the allocated executor cores ran no task (" +
            Fixed(idle_core_hours, 1) + " core-hours)";
  f.explanation = "Executors held " + Fixed(allocated_core_ms / 3'600'000.0, 1) +
                  " core-hours; tasks used " + Fixed(busy / 3'600'000.0, 1) +
                  ". The rest was paid for and idle: while the driver "
                  "worked alone (" +
                  Millis(input.phases.driver_only_ms) +
                  " with no task running), "
                  "during stage tails, and whenever fewer tasks were ready than cores. 95% of the "
                  "time a task started, at most " +
                  std::to_string(p95_running) +
                  " tasks were "
                  "running, which " +
                  std::to_string(executors_needed) + " executors of " + std::to_string(cores) +
                  " cores serve.";
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
       "the 95th percentile of concurrently running tasks was " + std::to_string(p95_running) +
           ", i.e. " + std::to_string(executors_needed) + " executors of " + std::to_string(cores) +
           " cores"});
  f.recommendations.push_back({"spark.dynamicAllocation.executorIdleTimeout", "60s",
                               "the default; an executor without tasks for a minute is released"});
  f.impact.time_saved_ms_low = 0;
  f.impact.time_saved_ms_high = 0;
  f.impact.core_hours_saved_low = idle_core_hours * 0.3;
  f.impact.core_hours_saved_high = idle_core_hours * 0.7;
  f.impact.method =
      "30-70% of the idle core-hours: dynamic allocation releases executors after the "
      "idle timeout and re-acquires them with some delay, so not all idle time goes; "
      "run time is unchanged";
  f.cost_ms = 0;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
