// Runs every rule over one application model and returns the phase breakdown and the findings,
// ranked (see RankFindings).
#pragma once

#include <vector>

#include "analyzer/diagnosis/finding.h"
#include "analyzer/diagnosis/phase_breakdown.h"
#include "analyzer/diagnosis/task_decomposition.h"
#include "analyzer/model/application_model.h"
#include "analyzer/profile/stage_profiles.h"
#include "analyzer/whatif/simulator.h"

namespace sparkprof::executor_logs {
struct ExecutorLogs;  // analyzer/executor_logs/executor_logs.h
}  // namespace sparkprof::executor_logs

namespace sparkprof::diagnosis {

struct Diagnosis {
  PhaseBreakdown phases;
  std::vector<Finding> findings;
  // With a profile: per stage attempt, its slowest and median tasks (task_decomposition.h).
  std::vector<StageTaskDecomposition> task_decompositions;
};

// `simulator` (over `model`), when given, is shared with other users of the what-if simulator.
// `profile`, when given, is the agent's samples of this application (the profile rules read it);
// `logs`, the executors' and the driver's own logs (the kill causes read them).
Diagnosis Diagnose(const model::ApplicationModel& model,
                   const whatif::LazySimulator* simulator = nullptr,
                   const profile::ApplicationProfile* profile = nullptr,
                   const executor_logs::ExecutorLogs* logs = nullptr);

// Links symptoms to root causes and orders the findings:
//   1. job-failures first: the run did not produce its result.
//   2. Then by what fixing the problem is expected to save (Finding::expected_saving_ms), most
//      first, the time it costs breaking ties, then severity.
//   3. A symptom (spill, GC, task failures in a skewed stage or a stage with too few partitions;
//      fetch failures after executor losses; ...) right after its root cause, whatever its own
//      saving: fixing the root removes it. Finding::symptom_of names the root's rule.
void RankFindings(std::vector<Finding>& findings);

}  // namespace sparkprof::diagnosis
