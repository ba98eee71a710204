// speculation-waste: speculative copies that lost the race and were killed: slot time spent on
// work that was thrown away.
//
// Losers: ended attempts killed (TaskKilled) while another attempt of the same task succeeded,
// speculative copies and originals alike. Wins: speculative attempts that succeeded.
// Thresholds (ours): losing attempts >= 5% of task time -> warning, >= 15% -> critical. Spark 4.0
// raised spark.speculation.multiplier 1.5 -> 3 and quantile 0.75 -> 0.9 for this reason
// (apache/spark#45858, analyzer-facts.md).
#include <algorithm>
#include <map>
#include <set>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kWarningShare = 0.05;
constexpr double kCriticalShare = 0.15;
}  // namespace

void SpeculationWaste(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  int64_t task_ms = 0, speculative = 0, wins = 0;
  for (const model::TaskAttempt& task : m.tasks) {
    if (!task.ended()) continue;
    task_ms += std::max<int64_t>(task.duration_ms(), 0);
    if (task.speculative) ++speculative;
    if (task.end == model::TaskEndKind::kSuccess && task.speculative) ++wins;
  }
  if (speculative == 0 || task_ms <= 0) return;
  // Only now (most runs have no speculation): which tasks succeeded.
  std::set<std::pair<std::pair<int32_t, int32_t>, int32_t>> succeeded;  // ((stage, attempt), index)
  for (const model::TaskAttempt& task : m.tasks) {
    if (task.ended() && task.end == model::TaskEndKind::kSuccess) {
      succeeded.insert({{task.stage_id, task.stage_attempt}, task.index});
    }
  }
  int64_t losers = 0, lost_ms = 0;
  std::set<int32_t> stages;
  for (const model::TaskAttempt& task : m.tasks) {
    if (task.end != model::TaskEndKind::kTaskKilled) continue;
    if (succeeded.count({{task.stage_id, task.stage_attempt}, task.index}) == 0) continue;
    ++losers;
    lost_ms += std::max<int64_t>(task.duration_ms(), 0);
    stages.insert(task.stage_id);
  }
  const double share = static_cast<double>(lost_ms) / task_ms;
  if (share < kWarningShare) return;

  Finding f = NewFinding("speculation-waste");
  f.confidence = {ConfidenceLevel::kHigh,
                  "speculative attempts and their outcome (killed or used) are in the log"};
  f.severity = share >= kCriticalShare ? Severity::kCritical : Severity::kWarning;
  f.stage_ids.assign(stages.begin(), stages.end());
  f.evidence = {
      {"speculative_attempts", static_cast<double>(speculative), "tasks"},
      {"speculative_wins", static_cast<double>(wins), "tasks"},
      {"killed_losing_attempts", static_cast<double>(losers), "tasks"},
      {"lost_task_ms", static_cast<double>(lost_ms), "ms"},
      {"lost_share_of_task_time", share, "ratio"},
  };
  const std::string multiplier = input.Property("spark.speculation.multiplier", "1.5");
  f.title = "Speculation threw away " + HumanDurationMs(lost_ms) + " of task time (" +
            Fixed(100 * share, 0) + "%)";
  f.explanation =
      std::to_string(speculative) + " speculative copies were launched; " + std::to_string(wins) +
      " finished first. " + std::to_string(losers) +
      " attempts lost the race and were killed, after running " + HumanDurationMs(lost_ms) +
      " in total. Copies of tasks that are slow because of their data (skew) always lose: "
      "the copy has the same partition to process.";
  if (input.NumberProperty("spark.speculation.multiplier", 1.5) < 3.0) {
    f.recommendations.push_back({"spark.speculation.multiplier", "3",
                                 "copy only tasks 3x slower than the median (now " + multiplier +
                                     "; 3 is the Spark 4.0 default)"});
  }
  const std::string quantile = input.Property("spark.speculation.quantile", "0.75");
  if (input.NumberProperty("spark.speculation.quantile", 0.75) < 0.9) {
    f.recommendations.push_back({"spark.speculation.quantile", "0.9",
                                 "wait until 90% of a stage's tasks finished before copying (now " +
                                     quantile + "; 0.9 is the Spark 4.0 default)"});
  }
  if (wins * 4 < speculative || f.recommendations.empty()) {
    f.recommendations.push_back({"spark.speculation", "false",
                                 "fewer than a quarter of the copies won (" + std::to_string(wins) +
                                     " of " + std::to_string(speculative) +
                                     "): the slow tasks are slow because "
                                     "of their data; fix skew instead"});
  }
  f.impact.time_saved_ms_low = 0;
  f.impact.time_saved_ms_high = lost_ms / input.slots();
  f.impact.core_hours_saved_low = CoreHours(lost_ms, 1) / 2;
  f.impact.core_hours_saved_high = CoreHours(lost_ms, 1);
  f.impact.method =
      "the killed attempts held slots other tasks could have used: up to their time "
      "spread over all slots (wall), half to all of it in core-hours";
  AddCostingItsSaving(std::move(f), out);
}

}  // namespace sparkprof::diagnosis::rules
