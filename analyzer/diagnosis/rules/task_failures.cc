// task-failures: task attempts that failed and had to be re-run.
//
// Thresholds and sources (analyzer-facts.md, section c):
//   * failed attempts / ended attempts >= 5% -> warning, >= 20% -> critical: Dr. Elephant's tuning
//     branch grades 0.05/0.1/0.15/0.2.
//   * any attempt that ran out of memory (java.lang.OutOfMemoryError, a Python MemoryError) ->
//     at least warning: Dr. Elephant flags OOM even under 2%.
//   Killed attempts (speculation losers, cancelled jobs), resubmissions and commit denials are not
//   failures of the work and are not counted; fetch failures and lost executors are left to the
//   fetch-failures and executor-loss rules.
// Root cause first: a memory or the disk that ran out is named first with its numbers and its
// fix (rules/kill_causes.h: an OOM in a data-skewed stage points at the skew, not at executor
// memory; a collecting aggregate at the aggregate, not at partitions).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/kill_causes.h"
#include "analyzer/diagnosis/rules/rules.h"

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
  // Attempts that ran out of a memory or the disk, by what ran out: the first of each, its stages.
  std::map<model::Exhaustion, int64_t> by_exhaustion;
  std::map<model::Exhaustion, const model::TaskAttempt*> first_of;
  std::map<model::Exhaustion, std::set<int32_t>> stages_of;
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
    const model::Exhaustion what =
        model::TaskExhaustion(m, task, ContainerManagerLimitsMemory(input)).what;
    if (model::IsMemory(what)) ++oom;
    if (what != model::Exhaustion::kUnknown) {
      if (by_exhaustion[what]++ == 0) first_of[what] = &task;
      stages_of[what].insert(task.stage_id);
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

  // The cause the finding leads with: what ran out for the most attempts.
  model::Exhaustion lead = model::Exhaustion::kUnknown;
  for (const auto& [what, count] : by_exhaustion) {
    if (lead == model::Exhaustion::kUnknown || count > by_exhaustion[lead]) lead = what;
  }
  if (lead != model::Exhaustion::kUnknown) {
    const KillCause cause = TaskKillCause(input, *first_of[lead]);
    const std::vector<int32_t> stages(stages_of[lead].begin(), stages_of[lead].end());
    f.title = CauseTitle(lead) + ": " + std::to_string(by_exhaustion[lead]) + " of " +
              std::to_string(failed) + " failed task attempts (" + Fixed(100 * rate, 1) +
              "% failed): " + classes.front().first;
    f.explanation = CauseSentence(input, cause, stages) + " " + f.explanation;
    AddCauseEvidence(input, cause, f);
    AddCauseFix(input, cause, stages, f);
  }
  if (f.recommendations.empty()) {
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
