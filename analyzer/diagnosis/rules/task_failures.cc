// task-failures: task attempts that failed and had to be re-run.
//
// Thresholds and sources (analyzer-facts.md, section c):
//   * failed attempts / ended attempts >= 5% -> warning, >= 20% -> critical: Dr. Elephant's tuning
//     branch grades 0.05/0.1/0.15/0.2.
//   * any java.lang.OutOfMemoryError -> at least warning: Dr. Elephant flags OOM even under 2%.
//   Killed attempts (speculation losers, cancelled jobs), resubmissions and commit denials are not
//   failures of the work and are not counted; fetch failures and lost executors are left to the
//   fetch-failures and executor-loss rules.
// Root cause first: OOMs in a data-skewed stage point at skew, not at executor memory.
#include <algorithm>
#include <cstdlib>
#include <map>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/rules/skew_assessment.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kWarningRate = 0.05;
constexpr double kCriticalRate = 0.20;

bool CountsAsFailure(model::TaskEndKind kind) {
  switch (kind) {
    // FetchFailed and ExecutorLostFailure have their own rules (fetch-failures, executor-loss),
    // which name the cause; counting them here would report one problem twice.
    case model::TaskEndKind::kExceptionFailure:
    case model::TaskEndKind::kTaskResultLost:
    case model::TaskEndKind::kUnknownReason:
    case model::TaskEndKind::kOther:
      return true;
    default:
      return false;
  }
}
}  // namespace

void TaskFailures(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  int64_t ended = 0, failed = 0, failed_ms = 0, oom = 0;
  std::map<std::string, int64_t> by_class;
  std::map<int32_t, int64_t> by_stage;
  std::map<int32_t, int64_t> oom_by_stage;
  std::string first_message;
  for (const model::TaskAttempt& task : m.tasks) {
    if (!task.ended()) continue;
    ++ended;
    if (!CountsAsFailure(task.end)) continue;
    ++failed;
    failed_ms += std::max<int64_t>(task.duration_ms(), 0);
    ++by_stage[task.stage_id];
    std::string cls = model::TaskEndKindName(task.end);
    if (task.failure != model::kNone) {
      const model::TaskFailure& failure = m.task_failures[task.failure];
      if (!failure.exception_class.empty()) cls = failure.exception_class;
      if (first_message.empty()) first_message = failure.message_head;
    }
    if (cls.find("OutOfMemoryError") != std::string::npos) {
      ++oom;
      ++oom_by_stage[task.stage_id];
    }
    ++by_class[cls];
  }
  if (ended == 0 || failed == 0) return;
  const double rate = static_cast<double>(failed) / ended;
  if (rate < kWarningRate && oom == 0) return;

  Finding f = NewFinding("task-failures");
  f.confidence = {ConfidenceLevel::kHigh,
                  "failed task ends with their exception class and message, as Spark logged them"};
  f.severity = rate >= kCriticalRate ? Severity::kCritical : Severity::kWarning;
  for (const auto& [stage, count] : by_stage) f.stage_ids.push_back(stage);
  f.evidence = {
      {"failed_attempts", static_cast<double>(failed), "tasks"},
      {"ended_attempts", static_cast<double>(ended), "tasks"},
      {"failure_rate", rate, "ratio"},
      {"failed_attempt_ms", static_cast<double>(failed_ms), "ms"},
      {"out_of_memory_failures", static_cast<double>(oom), "tasks"},
  };
  std::vector<std::pair<std::string, int64_t>> classes(by_class.begin(), by_class.end());
  std::sort(classes.begin(), classes.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string class_text;
  for (size_t i = 0; i < classes.size() && i < 3; ++i) {
    class_text += (i ? ", " : "") + classes[i].first + " x" + std::to_string(classes[i].second);
  }
  f.title = std::to_string(failed) + " failed task attempts (" + Fixed(100 * rate, 1) +
            "%): " + classes.front().first;
  f.explanation =
      std::to_string(failed) + " of " + std::to_string(ended) + " task attempts failed (" +
      class_text + ") and were retried, wasting " + HumanDurationMs(failed_ms) + " of task time." +
      (first_message.empty() ? std::string() : " First message: \"" + first_message + "\".");

  bool skewed_oom = false;
  for (const StageStats& stage : input.stages) {
    if (oom_by_stage.count(stage.stage_id) != 0 &&
        AssessSkew(stage, input.phases.wall_ms).kind == SkewKind::kData)
      skewed_oom = true;
  }
  if (oom > 0 && skewed_oom) {
    f.explanation +=
        " The out-of-memory failures happened in a data-skewed stage: the task holding the "
        "oversized partition ran out of heap. Fix the skew (see data-skew) rather than "
        "raising memory for every executor.";
    bool shuffle_skew = false;
    for (const StageStats& stage : input.stages) {
      if (oom_by_stage.count(stage.stage_id) != 0 && stage.shuffle_read_bytes > 0)
        shuffle_skew = true;
    }
    if (shuffle_skew) {
      f.recommendations.push_back({"spark.sql.adaptive.skewJoin.enabled", "true",
                                   "splits the oversized partition that runs out of memory"});
    } else {
      f.recommendations.push_back(
          {"", "rewrite the input as evenly sized, splittable files (Parquet/ORC, no gzip)",
           "the failing stage reads files, not a shuffle: its oversized split is one large or "
           "unsplittable file, which AQE cannot split"});
    }
  } else if (oom > 0) {
    f.explanation +=
        " Out-of-memory failures with even data mean partitions are too large for the "
        "memory per task.";
    bool reads_shuffle = false;
    for (const StageStats& stage : input.stages) {
      if (oom_by_stage.count(stage.stage_id) != 0 && stage.shuffle_read_bytes > 0)
        reads_shuffle = true;
    }
    if (reads_shuffle) {
      int64_t current = std::atoll(input.Property("spark.sql.shuffle.partitions", "200").c_str());
      if (current <= 0) current = 200;
      f.recommendations.push_back({"spark.sql.shuffle.partitions", std::to_string(current * 2),
                                   "twice the current " + std::to_string(current) +
                                       " halves the data per task (Dr. Elephant halves cores per "
                                       "executor for the same effect)"});
      if (input.AqeCoalesces()) {
        f.recommendations.push_back(
            {"spark.sql.adaptive.advisoryPartitionSizeInBytes", "32m",
             "AQE is on and merges partitions back up to this size (64 MiB by default); half of "
             "it keeps the smaller partitions"});
      }
    } else {
      f.recommendations.push_back({"spark.sql.files.maxPartitionBytes", "64m",
                                   "the failing stages read files, not a shuffle: half the "
                                   "default 128 MiB split halves the data per task"});
    }
  } else {
    f.recommendations.push_back(
        {"", "fix the exception the tasks throw (" + classes.front().first + ")",
         "retries (spark.task.maxFailures) do not help a deterministic error; "
         "they only repeat the wasted work"});
  }
  f.impact.time_saved_ms_low = failed_ms / input.slots();
  f.impact.time_saved_ms_high = failed_ms / ConcurrentTasks(input, failed);
  f.impact.core_hours_saved_low = CoreHours(failed_ms, 1) / 2;
  f.impact.core_hours_saved_high = CoreHours(failed_ms, 1);
  f.impact.method =
      "the failed attempts' own time, spread over all slots (low) or over as many "
      "slots as there were failures (high); re-computation of lost output not counted";
  AddCostingItsSaving(std::move(f), out);
}

}  // namespace sparkprof::diagnosis::rules
