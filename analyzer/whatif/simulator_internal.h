// The what-if simulator's own parts, shared by its files and by no other caller: the bounds, the
// units of work the replay schedules, the run prepared once (preparation.cc), the run as a
// scenario changes it (scenario.cc) and the scheduler replay (replay.cc). simulator.cc ties them:
// prepare once, then per scenario change, replay and compare.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/model/application_model.h"
#include "analyzer/model/spark_values.h"
#include "analyzer/whatif/simulator.h"

namespace sparkprof::whatif {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 4;
inline constexpr double kSkewFactor = 2.0;  // fix_skew: tasks above 2x the stage median
// Bounds that keep a replay of hostile input finite: tasks per re-split stage, a task's duration
// and any delay (a year).
inline constexpr int64_t kMaxStageTasks = 100'000;
inline constexpr int64_t kMaxMs = 365ll * 24 * 3600 * 1000;
inline constexpr int64_t kMiB = 1 << 20;

// a - b, clamped to [0, kMaxMs] without overflowing on hostile timestamps.
inline int64_t Span(int64_t a, int64_t b) {
  const __int128 d = static_cast<__int128>(a) - static_cast<__int128>(b);
  return d <= 0 ? 0 : d >= kMaxMs ? kMaxMs : static_cast<int64_t>(d);
}

// Settings as Spark writes them (scenario.cc). A count from 1 to 1000000 (`ok` false otherwise);
// sizes and durations as analyzer/model/spark_values.h reads them; a Spark property of the run,
// `fallback` when it is not set or empty.
int64_t ParseCount(const std::string& text, bool& ok);
using model::ParseDurationMs;
using model::ParseSizeBytes;
std::string PropertyOr(const model::ApplicationModel& m, const char* key,
                       const std::string& fallback);

// One ended task attempt to replay: how long it held a slot, and -- when the run held it back
// while slots were free (delay scheduling: locality waits) -- how long after its stage's first
// task it launched; the replay does not launch it earlier than that.
struct Work {
  int64_t duration_ms;
  int64_t hold_offset_ms = -1;
  int64_t real_launch_ms = -1;  // relative to the application start (for computing the hold)
  int64_t task_id = -1;         // Spark's task id; -1 for the pieces of a re-split stage
  // The stage's first task on its executor in the run: it held the stage's warm-up (TakeWarmup).
  bool first_on_executor = false;
  // What the scenario's rescaling reads, from the task's metrics (0 without metrics).
  int64_t input_bytes = 0;
  int64_t records = 0;  // input and shuffle records read: the data the task was given
  int64_t shuffle_write_ms = 0;
  int64_t fetch_wait_ms = 0;
  int64_t gc_ms = 0;
  int64_t peak_memory_bytes = 0;
  int64_t memory_spilled_bytes = 0;
  int64_t disk_spilled_bytes = 0;
};

// A stage attempt that ran tasks.
struct Unit {
  int32_t stage_id = -1;
  int32_t attempt = 0;
  int32_t job = -1;
  std::string name;
  int64_t real_submit = -1;  // first task launch (or submission)
  int64_t real_end = -1;     // last task end
  std::vector<Work> tasks;   // in launch order
  std::vector<size_t> deps;  // units that must complete first
  int64_t delay_after_deps = 0;
  bool shuffle_read = false;  // re-split by shuffle_partitions
  // The first task of the stage on each executor takes this much longer (the stage's closure
  // and broadcasts deserialised, code warmed up, a Python worker started): taken off the run's
  // first tasks, added to the first task each simulated executor runs.
  int64_t warmup_ms = 0;
};

struct JobInfo {
  int32_t job_id = -1;
  int64_t real_submit = -1;
  int64_t real_end = -1;
  int32_t anchor_job = -1;    // the last job that had ended before this one was submitted
  int64_t anchor_offset = 0;  // real submit - real anchor time
  int64_t tail_ms = 0;        // real job end - real last task end of its units
  std::vector<size_t> units;
};

struct ExecutorSlots {
  int64_t added = 0;  // relative to the application start
  int64_t removed = kNever;
  int32_t slots = 1;
};

// Executor core-hours held from arrival to removal (or to `wall_ms`, when earlier).
double CoreHours(const std::vector<ExecutorSlots>& executors, int64_t wall_ms);

// Dynamic allocation as Spark's ExecutorAllocationManager runs it, simplified: while tasks wait
// for a slot for a backlog timeout, executors are requested (1, 2, 4, ... per round, up to what
// the waiting and running tasks need and `max`); each arrives `startup_ms` after its request;
// an executor idle for `idle_timeout_ms` is released while more than max(min, needed) remain.
struct Allocation {
  bool enabled = false;
  int32_t initial = 0;
  int32_t min = 0;
  int32_t max = 0;
  int32_t slots = 1;  // per executor
  int64_t first_arrival_ms = 0;
  int64_t startup_ms = 1000;
  int64_t backlog_ms = 1000;
  int64_t idle_timeout_ms = 60'000;
};

struct RunResult {
  int64_t wall_ms = 0;
  int32_t peak_executors = 0;  // alive at once
  double core_hours = 0;
  std::vector<std::pair<int64_t, int64_t>> unit_spans;  // sim start, end per unit
  std::vector<int64_t> unit_tasks;
};

// The discrete-event replay of `units` in `jobs` on `executors` (replay.cc).
RunResult Replay(const std::vector<Unit>& units, const std::vector<JobInfo>& jobs,
                 std::vector<ExecutorSlots> executors, int64_t app_tail_ms, int64_t real_wall_ms,
                 int64_t launch_gap_ms, const Allocation& allocation = Allocation{});

// What the memory rescaling reads from the run.
struct MemoryRelation {
  int64_t heap_mb = 1024;
  double fraction = 0.6;
  int64_t live_bytes = 0;        // the executors' peak storage + execution memory in use
  double spill_ms_per_byte = 0;  // per disk byte spilled: written and read back
  double disk_per_memory = 0.5;  // disk bytes per in-memory byte spilled
};

// The run's shuffle writes, over the tasks with metrics: what its disk rate is read from.
struct ShuffleWrites {
  int64_t bytes = 0;
  int64_t ms = 0;
};

// Everything a scenario starts from, built once from the model (preparation.cc).
struct PreparedRun {
  const model::ApplicationModel* model = nullptr;
  Prediction base;  // the run's actual figures and its replay as run (baseline)
  double task_cpus = 1;
  int32_t real_cores = 0;
  std::vector<ExecutorSlots> executors;
  int64_t launch_gap_ms = 0;
  std::vector<Unit> units;
  std::unordered_map<int32_t, std::vector<size_t>> units_of_stage;
  std::vector<JobInfo> jobs;
  int64_t app_tail_ms = 0;
  RunResult baseline;
  bool local_mode = false;
  ShuffleWrites shuffle_writes;
  MemoryRelation memory;
  // The units with their tasks' memory rescaled, for the last (heap, slots, new slots) asked:
  // the cost frontier simulates several executor counts of one instance type in a row.
  struct Rescaled {
    int64_t heap_mb = -1;
    int32_t slots = 0;
    int32_t new_slots = 0;
    std::shared_ptr<const std::vector<Unit>> units;
  };
  mutable std::mutex rescaled_mutex;
  mutable Rescaled rescaled;
};

std::unique_ptr<const PreparedRun> PrepareRun(const model::ApplicationModel& m);

// The run as a scenario changes it (scenario.cc): its executors, the allocation policy, and its
// units -- the prepared ones (or rescaled ones shared between scenarios) until a change needs a
// copy of its own.
class ChangedRun {
 public:
  explicit ChangedRun(const PreparedRun& run);

  const std::vector<Unit>& units() const {
    return own_units_active_ ? own_units_ : shared_units_ ? *shared_units_ : *prepared_units_;
  }
  // The units to change in place (copied on the first call).
  std::vector<Unit>& WritableUnits();
  void ShareUnits(std::shared_ptr<const std::vector<Unit>> units);
  bool units_as_prepared() const { return !own_units_active_ && shared_units_ == nullptr; }
  // Nothing the replay reads changed: it would replay the baseline again.
  bool ReplaysAsRun(const PreparedRun& run) const;

  std::vector<ExecutorSlots> executors;
  int32_t slots_per_executor = 1;  // the most of the run's executors
  int32_t new_slots_per_executor = 1;
  Allocation allocation;
  std::vector<bool> removed;  // per unit: the scenario removed it (a join turned broadcast)
  int64_t new_heap_mb = 0;
  bool rescale_memory = false;

 private:
  const std::vector<Unit>* prepared_units_;
  std::shared_ptr<const std::vector<Unit>> shared_units_;
  std::vector<Unit> own_units_;
  bool own_units_active_ = false;
};

// The scenario's settings and fixes applied to the prepared run, each described in `changes`.
ChangedRun ApplyScenario(const PreparedRun& run, const Scenario& scenario,
                         std::vector<std::string>& changes);
// What a prediction under the scenario rests on.
std::vector<std::string> Assumptions(const PreparedRun& run, const Scenario& scenario,
                                     const ChangedRun& changed);

}  // namespace sparkprof::whatif
