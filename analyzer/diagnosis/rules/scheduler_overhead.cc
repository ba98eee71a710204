// scheduler-overhead: task time spent outside the task's own work: scheduler delay (launch to
// start, result fetch), task deserialisation, result serialisation.
//
// Per task attempt with metrics: overhead = duration - executor run time (= scheduler delay +
// deserialisation + result serialisation + getting result; the Spark UI derives scheduler delay the
// same way). Split: deserialize = "Executor Deserialize Time", result = "Result Serialization Time"
// + getting-result time, scheduler delay = the rest.
// Thresholds (ours; no tool grades this): overhead >= 20% of task time AND >= 60 s in total ->
// warning; >= 40% -> critical.
#include <algorithm>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kWarningShare = 0.20;
constexpr double kCriticalShare = 0.40;
constexpr int64_t kMinOverheadMs = 60'000;
}  // namespace

void SchedulerOverhead(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  int64_t duration = 0, overhead = 0, deserialize = 0, result = 0, tasks = 0;
  for (const model::TaskAttempt& task : m.tasks) {
    if (!task.has_metrics || task.duration_ms() < 0) continue;
    const int64_t d = task.duration_ms();
    const int64_t task_overhead = std::max<int64_t>(d - task.metrics.executor_run_time_ms, 0);
    duration += d;
    overhead += task_overhead;
    deserialize += std::min<int64_t>(task.metrics.executor_deserialize_time_ms, task_overhead);
    int64_t getting =
        task.getting_result_time_ms > 0 && task.finish_time_ms >= task.getting_result_time_ms
            ? task.finish_time_ms - task.getting_result_time_ms
            : 0;
    result += std::min<int64_t>(task.metrics.result_serialization_time_ms + getting, task_overhead);
    ++tasks;
  }
  if (duration <= 0 || overhead < kMinOverheadMs) return;
  const double share = static_cast<double>(overhead) / duration;
  if (share < kWarningShare) return;
  const int64_t scheduler_delay = std::max<int64_t>(overhead - deserialize - result, 0);

  Finding f = NewFinding("scheduler-overhead");
  f.confidence = {ConfidenceLevel::kMedium,
                  "inferred from task wall time outside executor run time (launch, "
                  "deserialisation, result fetch)"};
  f.severity = share >= kCriticalShare ? Severity::kCritical : Severity::kWarning;
  f.evidence = {
      {"overhead_ms", static_cast<double>(overhead), "ms"},
      {"task_time_ms", static_cast<double>(duration), "ms"},
      {"overhead_share", share, "ratio"},
      {"scheduler_delay_ms", static_cast<double>(scheduler_delay), "ms"},
      {"deserialize_ms", static_cast<double>(deserialize), "ms"},
      {"result_ms", static_cast<double>(result), "ms"},
      {"task_attempts", static_cast<double>(tasks), "tasks"},
  };
  f.title = Fixed(100 * share, 0) + "% of task time is scheduling and (de)serialisation overhead";
  f.explanation =
      "Of " + HumanDurationMs(duration) + " of task time, " + HumanDurationMs(overhead) +
      " was spent outside the tasks' own work: " + HumanDurationMs(scheduler_delay) +
      " scheduler delay (waiting to start, shipping the task, fetching results), " +
      HumanDurationMs(deserialize) + " deserialising tasks and " + HumanDurationMs(result) +
      " serialising or fetching results, over " + std::to_string(tasks) + " task attempts (" +
      HumanDurationMs(overhead / std::max<int64_t>(tasks, 1)) + " each).";
  if (scheduler_delay >= deserialize && scheduler_delay >= result) {
    f.recommendations.push_back(
        {"",
         "use fewer, larger tasks (see too-many-small-tasks; "
         "spark.sql.shuffle.partitions / spark.sql.files.maxPartitionBytes)",
         "scheduler delay is paid per task; it dominates the overhead here"});
  }
  if (deserialize * 3 >= overhead) {
    f.recommendations.push_back(
        {"",
         "broadcast large objects (sc.broadcast) instead of capturing them in "
         "closures or UDFs",
         "task deserialisation takes " + HumanDurationMs(deserialize) +
             ": every task ships what its closure references (the first tasks on a new executor "
             "also "
             "load classes, so short applications show some of this anyway)"});
  }
  if (result * 3 >= overhead) {
    f.recommendations.push_back(
        {"",
         "return less to the driver (aggregate on the executors, write "
         "results out instead of collect())",
         "result serialisation and fetching take " + HumanDurationMs(result)});
  }
  if (f.recommendations.empty()) {
    f.recommendations.push_back({"", "use fewer, larger tasks", "overhead is paid per task"});
  }
  const int64_t slots = input.slots();
  f.impact = TaskTimeSaving({overhead / 4, slots}, {overhead * 3 / 4, slots},
                            "25-75% of the overhead task time (some per-task cost always "
                            "remains), spread over the slots");
  AddCostingItsSaving(std::move(f), out);
}

}  // namespace sparkprof::diagnosis::rules
