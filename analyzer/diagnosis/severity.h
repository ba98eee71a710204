// Severity: one rule for every finding, applied by Diagnose() after all rules ran.
//
// Failures -- the run lost work or did not produce its result: job-failures, task-failures,
// executor-loss, fetch-failures (IsFailureRule) -- keep the severity their rule gives, whatever
// they cost: a failed job is critical because its output is missing, an out-of-memory task
// because the next run may fail the same way, not because either was slow.
//
// Every other finding is about performance. It may be only as severe as what fixing it is
// expected to save (Finding::expected_saving_ms, the middle of its impact range, and the middle
// of its core-hours range), as a share of what the run spent:
//
//     share = wall time saved / the application's wall time, or, for a fix that saves no wall
//             time but releases capacity (idle executors), core-hours saved / the executor
//             core-hours the run held;
//     share >= 25%: may be critical;   share >= 5%: may be a warning;   else info.
//
// Why these shares, from first principles rather than from any set of logs:
//   * A fix that saves a share s of the wall time makes the run 1 / (1 - s) times as fast
//     (Amdahl). At s = 25% the run is 1.33x faster: a change its owner sees on every run and
//     the scheduling window, the SLA or the bill feels -- worth doing first, i.e. critical.
//   * At s = 5% (1.05x) the saving is of the size by which the same job on the same cluster
//     varies from run to run (executor placement, JVM warm-up, shared storage and network):
//     below it the user could not tell, after the change, whether it worked. Such a finding is
//     information, not a warning.
//   * Core-hours count the same way for a fix that releases capacity instead of shortening the
//     run (idle executors): the bill changes by that share. A fix that shortens tasks saves
//     core-hours only as far as the run ends sooner (the executors stay held until then), so
//     for it the wall-time share is the measure; counting its task time as released capacity
//     would make a 3% saving on a small cluster look like a warning.
// A rule decides whether its pattern is present (its own thresholds, with their sources) and may
// judge a finding less severe than its saving would allow (a note, e.g. an interactive shell's
// idle driver); it can never make a performance finding more severe than its saving: the cap
// is applied here, once, to every finding, so no rule can forget it.
#pragma once

#include <string_view>
#include <vector>

#include "analyzer/diagnosis/diagnosis_input.h"
#include "analyzer/diagnosis/finding.h"

namespace sparkprof::diagnosis {

inline constexpr double kCriticalSavingShare = 0.25;
inline constexpr double kWarningSavingShare = 0.05;

// The rules whose findings are failures (the list lives here, in one place).
bool IsFailureRule(std::string_view rule);

// Executor core-hours the run held: each executor with cores, from its addition to its removal
// (or the application's end), within the application. 0 when the log cannot show it.
double HeldCoreHours(const model::ApplicationModel& model);

// The expected saving's share of the run (see above): of the wall time, or of the core-hours held
// when the finding saves no wall time (0 for an unknown wall time or no core-hours held).
double SavingShare(const Finding& finding, int64_t wall_ms, double held_core_hours);

// The most severe a performance finding with this saving share may be.
Severity SeverityForSavingShare(double share);

// Caps every performance finding's severity by its saving (failures untouched).
void CapSeverityBySaving(const DiagnosisInput& input, std::vector<Finding>& findings);

}  // namespace sparkprof::diagnosis
