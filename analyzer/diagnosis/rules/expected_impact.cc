#include "analyzer/diagnosis/rules/expected_impact.h"

#include <algorithm>
#include <utility>

#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

int64_t ConcurrentTasks(const DiagnosisInput& input, int64_t tasks) {
  return std::max<int64_t>(1, std::min<int64_t>(input.slots(), tasks));
}

ExpectedImpact TaskTimeSaving(SparedTaskTime low, SparedTaskTime high, std::string method) {
  ExpectedImpact impact;
  impact.time_saved_ms_low = low.task_ms / low.concurrent;
  impact.time_saved_ms_high = high.task_ms / high.concurrent;
  impact.core_hours_saved_low = CoreHours(low.task_ms, 1);
  impact.core_hours_saved_high = CoreHours(high.task_ms, 1);
  impact.method = std::move(method);
  return impact;
}

ExpectedImpact HalfToAllOfTaskTime(int64_t task_ms, int64_t slots, std::string method) {
  ExpectedImpact impact;
  impact.time_saved_ms_low = task_ms / slots / 2;
  impact.time_saved_ms_high = task_ms / slots;
  impact.core_hours_saved_high = CoreHours(task_ms, 1);
  impact.method = std::move(method);
  return impact;
}

ExpectedImpact WallTimeSaving(int64_t low_ms, int64_t high_ms, int64_t held_cores,
                              std::string method) {
  ExpectedImpact impact;
  impact.time_saved_ms_low = low_ms;
  impact.time_saved_ms_high = high_ms;
  impact.core_hours_saved_low = CoreHours(low_ms, held_cores);
  impact.core_hours_saved_high = CoreHours(high_ms, held_cores);
  impact.method = std::move(method);
  return impact;
}

void AddCostingItsSaving(Finding f, std::vector<Finding>& out) {
  f.cost_ms = f.impact.time_saved_ms_high;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
