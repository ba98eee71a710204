// How the rules turn the time a fix spares into the finding's expected impact (finding.h's
// ExpectedImpact), the estimates several rules share; and how a finding that costs this run what
// its fix could save at most is added. A rule whose estimate is its own fills the impact itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/diagnosis/diagnosis_input.h"
#include "analyzer/diagnosis/finding.h"

namespace sparkprof::diagnosis::rules {

// How many of `tasks` tasks run at once: one a slot, at least one.
int64_t ConcurrentTasks(const DiagnosisInput& input, int64_t tasks);

// Task time a fix spares, and how many of those tasks ran at once (the wall time it saves is
// task_ms / concurrent).
struct SparedTaskTime {
  int64_t task_ms = 0;
  int64_t concurrent = 1;
};
// Sparing `low` to `high`: in wall time, each one's task time over its concurrency; in core-hours,
// the task time itself (a task holds one core).
ExpectedImpact TaskTimeSaving(SparedTaskTime low, SparedTaskTime high, std::string method);

// Sparing up to `task_ms` of task time spread over `slots`: half (low) to all (high) of it in wall
// time; in core-hours, all of it at the high end only.
ExpectedImpact HalfToAllOfTaskTime(int64_t task_ms, int64_t slots, std::string method);

// Saving `low_ms` to `high_ms` of wall time during which `held_cores` cores are held: each in
// core-hours is that wall time on all of them.
ExpectedImpact WallTimeSaving(int64_t low_ms, int64_t high_ms, int64_t held_cores,
                              std::string method);

// Appends `f`, whose cost to this run is the most its fix is expected to save (the high end of
// its impact's wall time).
void AddCostingItsSaving(Finding f, std::vector<Finding>& out);

}  // namespace sparkprof::diagnosis::rules
