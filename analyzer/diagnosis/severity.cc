#include "analyzer/diagnosis/severity.h"

#include <algorithm>

namespace sparkprof::diagnosis {

bool IsFailureRule(std::string_view rule) {
  constexpr std::string_view kFailureRules[] = {"job-failures", "task-failures", "executor-loss",
                                                "fetch-failures"};
  return std::find(std::begin(kFailureRules), std::end(kFailureRules), rule) !=
         std::end(kFailureRules);
}

double HeldCoreHours(const model::ApplicationModel& model) {
  if (model.duration_ms() <= 0) return 0;
  double core_ms = 0;
  for (const model::Executor& executor : model.executors) {
    if (executor.total_cores <= 0) continue;
    const int64_t added =
        std::max(executor.added_time_ms >= 0 ? executor.added_time_ms : model.start_time_ms,
                 model.start_time_ms);
    const int64_t removed =
        std::min(executor.removed_time_ms >= 0 ? executor.removed_time_ms : model.end_time_ms,
                 model.end_time_ms);
    if (removed <= added) continue;
    core_ms += static_cast<double>(executor.total_cores) * static_cast<double>(removed - added);
  }
  return core_ms / 3'600'000.0;
}

double SavingShare(const Finding& finding, int64_t wall_ms, double held_core_hours) {
  if (finding.impact.time_saved_ms_high > 0) {
    return wall_ms > 0
               ? static_cast<double>(finding.expected_saving_ms()) / static_cast<double>(wall_ms)
               : 0.0;
  }
  if (held_core_hours <= 0) return 0;
  const double core_hours =
      (finding.impact.core_hours_saved_low + finding.impact.core_hours_saved_high) / 2;
  return core_hours / held_core_hours;
}

Severity SeverityForSavingShare(double share) {
  return share >= kCriticalSavingShare  ? Severity::kCritical
         : share >= kWarningSavingShare ? Severity::kWarning
                                        : Severity::kInfo;
}

void CapSeverityBySaving(const DiagnosisInput& input, std::vector<Finding>& findings) {
  const double held = HeldCoreHours(*input.model);
  for (Finding& f : findings) {
    if (IsFailureRule(f.rule)) continue;
    f.severity =
        std::min(f.severity, SeverityForSavingShare(SavingShare(f, input.phases.wall_ms, held)));
  }
}

}  // namespace sparkprof::diagnosis
