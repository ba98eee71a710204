// What-if: replay an application task by task through a model of Spark's scheduler, as it ran
// (the self-prediction, whose error against the real wall time is printed with every answer)
// and under other settings.
//
// The model (docs/whatif.md has the full statement of assumptions):
//   * Jobs are submitted when the driver submitted them, relative to the last job that had ended
//     before (or the application start): driver-only gaps and concurrent jobs keep their shape.
//   * A stage attempt is released when its parent stages (that ran) have completed, plus the delay
//     the run showed between them; the job ends when its last stage attempt ends plus the run's own
//     gap (result fetch, job commit); the application ends the run's tail after its last job.
//   * Every ended task attempt (failed ones too: they held a slot) is a unit of work of its real
//     duration (launch to finish), placed FIFO (job, stage, attempt, launch order) on the earliest
//     free slot of the executors alive then; executors arrive and leave when they did (or, with
//     dynamic allocation simulated, when its policy would request and release them).
//   * A task the run held back for >= 1 s while a slot was free (delay scheduling for locality)
//     launches no earlier than its real offset after its stage's first task. Barrier stages are
//     not modelled; speculation only when the scenario turns it on.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "analyzer/model/application_model.h"

namespace sparkprof::whatif {

struct PreparedRun;  // simulator_internal.h

// The changes a what-if applies; -1 / false = as the run had it. Combinations are simulated
// together (they are not additive).
struct Scenario {
  int32_t executors = -1;  // spark.executor.instances (executors with cores, not the driver)
  int32_t cores_per_executor = -1;  // spark.executor.cores
  int32_t shuffle_partitions = -1;  // spark.sql.shuffle.partitions: re-splits shuffle-read stages
  bool fix_skew = false;            // tasks above 2x the stage median split to the median
  // Narrower changes, for the diagnosis rules' expected impact: fix the skew of these stages
  // only (with fix_skew; empty = all stages), re-split these stages to this many tasks.
  std::vector<int32_t> skew_stages;
  std::map<int32_t, int32_t> stage_partitions;
  // A re-split stage's fixed cost per task as the profile measured it, as a share (0..1) of its
  // mean task (the time of each task that was not the work its data asked for: launching, a
  // Python worker's setup and round trip, the result), instead of the estimate from the run's
  // own tasks (FixedTaskCostMs, at most 200 ms), which needs empty tasks and otherwise takes the
  // shortest.
  std::map<int32_t, double> stage_fixed_task_share;
  int64_t executor_memory_mb = -1;   // spark.executor.memory: spill and GC per task rescaled
  int64_t max_partition_bytes = -1;  // spark.sql.files.maxPartitionBytes: file scans re-split
  bool fix_broadcast = false;        // sort-merge joins whose small side fits become broadcasts
  // With fix_broadcast, only these joins (SQL execution id, plan node); empty = every one.
  std::vector<std::pair<int64_t, int32_t>> broadcast_joins;
  int32_t dynamic_allocation = -1;  // spark.dynamicAllocation.enabled: 0 off, 1 on
  int32_t min_executors = -1;       // spark.dynamicAllocation.minExecutors
  int32_t max_executors = -1;       // spark.dynamicAllocation.maxExecutors
  int32_t speculation = -1;         // spark.speculation: 0 off, 1 on
  // A code change the profile measured (analyzer/profile): the tasks of these stages (every
  // attempt) take this fraction of their time, e.g. 0.6 when 40% of their sampled time goes.
  std::map<int32_t, double> stage_task_time_factor;
  // The same per task attempt (Spark's task id), where the profile measured each task's own
  // share: it overrides its stage's factor for that task; a stage's warm-up takes the mean factor
  // of the tasks that held it (the first on each executor). The pieces of a re-split stage have
  // no task id and take the stage's factor.
  std::map<int64_t, double> task_time_factor;
};

// The keys --set accepts, for help texts and errors.
extern const char* const kSupportedSettings;
// Parses "--set key=value" (the settings above) and "--fix skew|broadcast"; false with `error`
// set otherwise.
bool ApplySetting(const std::string& assignment, Scenario& scenario, std::string& error);
bool ApplyFix(const std::string& fix, Scenario& scenario, std::string& error);

struct StagePrediction {
  int32_t stage_id = -1;
  int32_t attempt = 0;
  std::string name;
  int64_t actual_ms = -1;     // first task launch to last task end in the run
  int64_t baseline_ms = -1;   // the same, simulated as run
  int64_t predicted_ms = -1;  // the same, simulated with the scenario
  int64_t actual_tasks = 0;
  int64_t predicted_tasks = 0;
  bool removed = false;  // the scenario removed the stage (a join turned into a broadcast)
};

struct Prediction {
  int64_t actual_wall_ms = 0;
  int64_t baseline_wall_ms = 0;   // self-prediction: the run simulated as it was
  int64_t predicted_wall_ms = 0;  // the scenario
  // |baseline - actual| / actual: how far the model is from this run before any change.
  double self_prediction_error = 0;
  // Executor core-hours held (added to removed, or to the end), from the run and simulated.
  double actual_core_hours = 0;
  double baseline_core_hours = 0;
  double predicted_core_hours = 0;
  int32_t actual_executors = 0;
  int32_t predicted_executors = 0;
  int32_t actual_cores_per_executor = 0;
  int32_t predicted_cores_per_executor = 0;
  int64_t actual_executor_memory_mb = 0;  // the heap per executor (spark.executor.memory)
  int64_t predicted_executor_memory_mb = 0;
  std::vector<StagePrediction> stages;   // stage attempts with tasks, by (id, attempt)
  std::vector<std::string> changes;      // what the scenario changed, in words
  std::vector<std::string> assumptions;  // what the prediction rests on
};

// The run prepared once for many scenarios: executors and their slots, the stage attempts as
// units of work, jobs, dependencies and the replay of the run as it was (the baseline every
// prediction is measured against). Preparing costs about one replay; each Simulate() one more.
// Simulate() does not change the Simulator, so threads may share one. The model must outlive it.
class Simulator {
 public:
  explicit Simulator(const model::ApplicationModel& model);
  ~Simulator();
  Simulator(Simulator&&) noexcept;
  Simulator& operator=(Simulator&&) noexcept;

  Prediction Simulate(const Scenario& scenario) const;

 private:
  std::unique_ptr<const PreparedRun> prepared_;
};

// A Simulator built on first use, for callers that may not need one (the diagnosis rules' expected
// impacts, the cost frontier): all of them share its preparation. Get() is thread-safe.
class LazySimulator {
 public:
  explicit LazySimulator(const model::ApplicationModel& model) : model_(model) {}
  const Simulator& Get() const;

 private:
  const model::ApplicationModel& model_;
  mutable std::once_flag once_;
  mutable std::unique_ptr<Simulator> simulator_;
};

// One scenario: Simulator(model).Simulate(scenario).
Prediction Simulate(const model::ApplicationModel& model, const Scenario& scenario);

}  // namespace sparkprof::whatif
