// How the rules that read the agent's samples (analyzer/profile) judge a cause, one way for all:
//
//   * Enough samples. A stage is judged only when its sampled task time is at least
//     kMinSamples (100) sampling intervals: a share measured from n samples has a standard error
//     of at most sqrt(0.25 / n), 5 points at n = 100.
//   * A cause worth naming holds at least kMinShare (10%) of a stage's sampled task time: below
//     it, that error is half the share itself. (Amdahl: removing 10% of a stage's task time
//     cannot shorten it by more.)
//   * The expected saving is what removing the cause's time saves: the stage's tasks shortened
//     by share x efficiency, replayed by the what-if simulator with every such stage changed at
//     once (low and high efficiency each rule states with its source). Where the cause is each
//     task's own doing -- its Python worker, its own serialization, its own reads -- and the
//     profile holds per-task rows, each task is shortened by its own share (SpreadOverTasks): a
//     stage's first tasks warm up while its later ones do the work, and one share for all
//     shortened the warm-up as much as the work (validation, docs/whatif.md: Python UDF ->
//     built-ins 26% -> 14% off, Java -> Kryo 8.2 / 7.0% -> 6.3 / 5.6%). A cause from a resource
//     the tasks share (CPUs other processes held: cpu-oversubscription) keeps the stage's share:
//     which task's thread happened to wait for a CPU is chance (spread by each task's own run
//     delay, the CPU fix came out 10.4 / 5.7% off instead of 8.9 / 4.3%). Without a replay that
//     reproduces the run (self-prediction error above 25%), the stages' task spans x share x
//     efficiency, capped at the application's wall time. A rule may add what the same fix saves
//     outside the tasks (OutsideTasks), measured apart.
//   * Reported when the high saving is at least kMinWallShare (1%) of the application's wall
//     time, or the cause holds kMinShareAlone (50%) of a stage whatever it saves (a user
//     reading the stage's flame graph must find it named).
//   * Severity follows the expected saving, by the rule every finding follows
//     (analyzer/diagnosis/severity.h): >= 25% of the wall time or of the core-hours critical,
//     >= 5% warning, else info.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/diagnosis/diagnosis_input.h"
#include "analyzer/diagnosis/finding.h"
#include "analyzer/profile/cpu_use.h"
#include "analyzer/profile/stage_profiles.h"
#include "analyzer/whatif/simulator.h"

namespace sparkprof::diagnosis::rules {

// Task-time categories (common/category.h); diagnosis::Category is a finding's kind of fix.
using TaskCategory = ::sparkprof::Category;

inline constexpr int64_t kMinSamples = 100;
inline constexpr double kMinShare = 0.10;
inline constexpr double kMinShareAlone = 0.50;
inline constexpr double kMinWallShare = 0.01;

// A task attempt's own share of a cause (SpreadOverTasks).
struct TaskShare {
  int64_t task_id = -1;  // Spark's task id
  double share = 0;      // of the task's sampled time
};

// One stage where a cause holds a share of the sampled task time (all attempts summed).
struct ProfiledCause {
  int32_t stage_id = -1;
  profile::StageProfile stage;  // Combined(stage_id)
  uint64_t ns = 0;
  double share = 0;
  int64_t task_span_ms = 0;  // first launch to last end, summed over attempts (0 when unknown)
  // Each task's own share, where the rule measured the cause per task (SpreadOverTasks); empty:
  // every task of the stage takes `share`. A stage's first tasks (warm-up, worker start) and its
  // later ones rarely hold a cause alike, and the replay shortens each task by its own.
  std::vector<TaskShare> task_shares;
};

// Spreads cause.ns over the stage's profiled tasks in proportion to `weight_of(task)` (ns of the
// task's own categories that hold the cause) and fills cause.task_shares: a task's share is its
// part of cause.ns over its sampled time (at most 1). Leaves them empty when the per-task rows
// miss more than a tenth of the stage's sampled time (rows left out: docs/limits.md) or no task
// weighs anything.
template <typename WeightOf>
void SpreadOverTasks(ProfiledCause& cause, WeightOf&& weight_of);

// The stages (most time first) where `time_of(stage)` holds >= kMinShare of a judged stage's
// sampled task time.
template <typename TimeOf>
std::vector<ProfiledCause> StagesWhere(const DiagnosisInput& input, TimeOf&& time_of);

// Whether the stage has enough samples to be judged (kMinSamples intervals).
bool EnoughSamples(const DiagnosisInput& input, const profile::StageProfile& stage);

struct Efficiency {
  double low = 0;
  double high = 0;
  std::string source;  // why these fractions of the cause's time go away
};

// Wall time the same fix saves outside the stages' tasks (the driver's own time while no task
// runs), added to the replay's saving as it is -- the replay keeps driver-only gaps as they
// were -- with the words that say where it comes from.
struct OutsideTasks {
  int64_t low_ms = 0;
  int64_t high_ms = 0;
  std::string source;
};

// A fix that changes a stage's shape rather than shortening its tasks (fewer, larger tasks):
// the two replays its saving range is read from, and the words that say what they change. The
// efficiency then serves only the fallback without a trustworthy replay.
struct FixReplay {
  whatif::Scenario low;
  whatif::Scenario high;
  std::string method;
};

// Fills f.impact, f.cost_ms and f.severity from the causes and the efficiency (see above);
// false when the finding is not worth reporting (kMinWallShare / kMinShareAlone).
// `report_regardless`: fill everything and return true whatever the saving (a rule that judged
// its cause by another share itself).
// `outside`: what the fix saves outside the tasks too (OutsideTasks), or null.
// `replay`: the fix's own replays (FixReplay) instead of the tasks shortened, or null.
bool JudgeProfiledCauses(const DiagnosisInput& input, const std::vector<ProfiledCause>& causes,
                         const Efficiency& efficiency, Finding& f, bool report_regardless = false,
                         const OutsideTasks* outside = nullptr, const FixReplay* replay = nullptr);

template <typename WeightOf>
void SpreadOverTasks(ProfiledCause& cause, WeightOf&& weight_of) {
  cause.task_shares.clear();
  const std::vector<profile::TaskTime>& tasks = cause.stage.tasks;
  std::vector<double> weights;
  weights.reserve(tasks.size());
  uint64_t covered = 0;
  double total_weight = 0;
  for (const profile::TaskTime& task : tasks) {
    covered += task.task_ns();
    weights.push_back(static_cast<double>(weight_of(task)));
    total_weight += weights.back();
  }
  if (total_weight <= 0 || 10 * covered < 9 * cause.stage.task_ns) return;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const uint64_t task_ns = tasks[i].task_ns();
    if (task_ns == 0) continue;
    const double part = static_cast<double>(cause.ns) * weights[i] / total_weight;
    cause.task_shares.push_back(
        {tasks[i].task_attempt_id, std::min(1.0, part / static_cast<double>(task_ns))});
  }
}

// SpreadOverTasks for a cause measured on CPU in `category` with its share of the run delay
// (StageProfile::RunnableNs): each task weighs its own time in the category, scaled by its own
// (on CPU + cpu_starved) / on CPU.
void SpreadByRunnableCategory(std::vector<ProfiledCause>& causes, TaskCategory category);
// SpreadOverTasks for a cause measured off CPU in `category`: each task weighs its own time in it.
void SpreadByCategory(std::vector<ProfiledCause>& causes, TaskCategory category);

// "1.23 s (42% of stage 3's sampled task time)"; with `on_cpu_ns` (a cause measured on CPU and
// given its share of the run delay, StageProfile::RunnableNs), how it was scaled, so the figure
// can be recomputed: "...: 2.1 s on CPU x (2.7 s on CPU + 13.0 s waiting for a CPU) / 2.7 s".
std::string TimeAndShare(const ProfiledCause& cause, uint64_t on_cpu_ns = 0);
// Frames for an explanation: the sites' frames (and the application frame beneath each), at
// most `count`, as "`frame` (1.2 s)" joined by ", ".
std::string SitesText(const profile::StageProfile& stage, TaskCategory category, size_t count = 3);
// Adds the cause's stage's sites of `category` (at most `count`) to f.frames.
void AddSiteFrames(const ProfiledCause& cause, TaskCategory category, Finding& f, size_t count = 3);
// The confidence a profile-based finding carries: high with >= 1,000 samples of the cause,
// medium otherwise; the reason names the sample counts and the mode.
Confidence ProfileConfidence(const DiagnosisInput& input, const ProfiledCause& cause);

// Whether the samples hold task threads' wall time (modes wall and cpu+wall): an exact wait is a
// share of nothing in CPU samples.
bool WallSampled(const profile::ApplicationProfile& profile);
// A stage's lock time (lock-contention's measure): the larger of the sampled lock_wait and the
// exact monitor wait (the JVM's contended entries, spin and run delay included), at most the
// stage's sampled task time; the sampled lock_wait alone without wall samples.
uint64_t LockNs(const profile::StageProfile& stage, bool wall_sampled);
// The part of a stage's run delay (cpu_starved) that may lie inside its exact monitor waits: what
// the exact wait holds beyond the sampled lock_wait, at most the run delay. lock-contention
// claims it, so cpu-oversubscription leaves it out (one wait is never claimed twice).
uint64_t RunDelayInMonitorWaitsNs(const profile::StageProfile& stage, bool wall_sampled);
// A profile rule's finding begun the way each one is, so their evidence reads alike: its id, the
// top cause's confidence (ProfileConfidence), and the evidence -- `<measure>_ms` (total_ns: the
// causes' time as the rule counts it), the top stage's share (`top_stage_<measure>_share`, or
// `share_name`), `top_stage_sampled_task_ms`, then the rule's own figures, `stages` (how many
// causes) last. `causes` must not be empty.
Finding NewProfileFinding(const DiagnosisInput& input, const char* id,
                          const std::vector<ProfiledCause>& causes, std::string_view measure,
                          uint64_t total_ns, std::vector<Evidence> own,
                          std::string_view share_name = {});

// The driver's threads' wait for CPUs while no task ran (ApplicationCpuUse::DriverRunDelayDuring
// over PhaseBreakdown::driver_only_spans): covered_s is 0 without a profile or a polled driver.
// Otherwise its figures are added to f's evidence -- driver_only_ms first when asked, then
// driver_only_run_delay_ms, driver_only_busiest_thread_run_delay_ms and
// driver_only_other_processes_cpus, and driver_only_python_run_delay_ms when the Python driver
// program was sampled (its CPU then counts as the application's) -- for cpu-oversubscription and
// driver-bound alike.
// `spans` (sorted, disjoint, `spans_ms` long): the driver-only spans the rule judges.
profile::DriverRunDelay DriversWaitWhileNoTaskRan(const DiagnosisInput& input,
                                                  const profile::SpansMs& spans, int64_t spans_ms,
                                                  Finding& f, bool with_driver_only_ms);

// ---- implementation of the template ----
std::vector<ProfiledCause> CollectCauses(
    const DiagnosisInput& input,
    const std::vector<std::pair<int32_t, profile::StageProfile>>& stages,
    const std::vector<uint64_t>& times);

template <typename TimeOf>
std::vector<ProfiledCause> StagesWhere(const DiagnosisInput& input, TimeOf&& time_of) {
  std::vector<std::pair<int32_t, profile::StageProfile>> stages;
  std::vector<uint64_t> times;
  if (input.profile == nullptr) return {};
  int32_t last = -1;
  for (const profile::StageProfile& attempt : input.profile->stages) {
    if (attempt.stage_id == last) continue;
    last = attempt.stage_id;
    profile::StageProfile combined = input.profile->Combined(attempt.stage_id);
    if (!EnoughSamples(input, combined)) continue;
    times.push_back(time_of(combined));
    stages.emplace_back(attempt.stage_id, std::move(combined));
  }
  return CollectCauses(input, stages, times);
}

}  // namespace sparkprof::diagnosis::rules
