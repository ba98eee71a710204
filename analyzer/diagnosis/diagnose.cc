#include "analyzer/diagnosis/diagnose.h"

#include <algorithm>

#include "analyzer/diagnosis/diagnosis_input.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis {

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "info";
}

Diagnosis Diagnose(const model::ApplicationModel& model) {
  DiagnosisInput input = MakeDiagnosisInput(model);
  Diagnosis result;
  // Root-cause rules first in this list only for readability; the order in the report is by cost.
  rules::DataSkew(input, result.findings);
  rules::Spill(input, result.findings);
  rules::GcPressure(input, result.findings);
  rules::TaskFailures(input, result.findings);
  rules::ExecutorLoss(input, result.findings);
  rules::ResourceWait(input, result.findings);
  rules::IoWriteBound(input, result.findings);
  rules::TooFewPartitions(input, result.findings);
  rules::TooManySmallTasks(input, result.findings);
  rules::ShuffleBottleneck(input, result.findings);
  rules::DriverBound(input, result.findings);
  rules::IdleExecutors(input, result.findings);
  rules::SchedulerOverhead(input, result.findings);
  rules::FetchFailures(input, result.findings);
  rules::SpeculationWaste(input, result.findings);
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) {
                     if (a.cost_ms != b.cost_ms) return a.cost_ms > b.cost_ms;
                     return static_cast<int>(a.severity) > static_cast<int>(b.severity);
                   });
  result.phases = input.phases;
  return result;
}

}  // namespace sparkprof::diagnosis
