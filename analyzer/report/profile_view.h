// What the text, Markdown and HTML reports show of the agent's profile, computed once: the
// stages with the most sampled task time and, for each, its categories as shares ("serialization
// 77%"), in one place so the three formats print the same figures.
#pragma once

#include <string>
#include <vector>

#include "analyzer/diagnosis/finding.h"
#include "analyzer/diagnosis/task_decomposition.h"
#include "analyzer/profile/stage_profiles.h"

namespace sparkprof::report {

inline constexpr size_t kProfileStagesShown = 10;

struct CategoryShare {
  std::string name;  // "serialization", "python_wait", ...
  uint64_t ns = 0;
  double share = 0;  // of the stage's sampled task time (python: of its own time, not a share)
  bool off_cpu = false;
};

struct StageProfileView {
  const profile::StageProfile* stage = nullptr;
  std::vector<CategoryShare> categories;  // task-time categories with time, most first
};

// The stages with the most sampled task time, most first (at most kProfileStagesShown).
std::vector<StageProfileView> StageProfileViews(const profile::ApplicationProfile& profile);

// "serialization 77%, compute 15%, python_wait 5%" (shares >= 1%, at most `count`).
std::string CategorySharesText(const StageProfileView& view, size_t count = 5);

// The stage's Python workers, when sampled: "6.8 s on CPU, 3.8 s off CPU; most in
// `checksum (job.py)` (84%, hottest line checksum (job.py:41))"; "" without Python samples.
std::string PythonWorkersText(const profile::StageProfile& stage);

// The stage attempt's slowest task against its median task, in words
// (diagnosis::SlowestVsMedianText); "" without a decomposition or a slower task.
std::string SlowestTaskText(const std::vector<diagnosis::StageTaskDecomposition>& decompositions,
                            const profile::StageProfile& stage);

// A line per monitor class the stage's task threads waited to enter, most wait first (at most
// kMonitorLinesShown, then one line for the rest: "other classes: 12 waits, 40 ms waiting"):
// "com.acme.SharedScorer: 412 waits, 3.1 s waiting (7.52 ms each), in
// com.acme.Job.lockedWork; held in com.acme.SharedScorer.score (9 of 11 looks), by Executor task
// launch worker (11 of 11 looks)". Empty without monitor waits.
inline constexpr size_t kMonitorLinesShown = 3;
std::vector<std::string> MonitorLines(const profile::StageProfile& stage);

// The JVMs' memory as their agents measured it, one sentence each (the driver first, then the
// executors by id; at most kMemoryJvmsShown, then "N more JVMs"), e.g. "executor 1: heap at most
// 1.2 GiB of 2.0 GiB (after GC at most 800 MiB), resident set at most 2.5 GiB, container at most
// 3.0 GiB of its 4.0 GiB limit, ...". Empty without memory readings.
inline constexpr size_t kMemoryJvmsShown = 20;
std::vector<std::string> MemoryLines(const profile::ApplicationProfile& profile);

// How much of a finding's frame is shown: its time ("1.2 s"), or for a monitor's holder frame
// its looks ("9 looks").
std::string FrameAmountText(const diagnosis::FrameEvidence& frame);

// "cpu+wall every 10 ms, 4 executors, 12 batches" (the profile's header line).
std::string ProfileSourceText(const profile::ApplicationProfile& profile);

}  // namespace sparkprof::report
