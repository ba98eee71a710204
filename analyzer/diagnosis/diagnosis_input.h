// What every rule reads: the model, the phase breakdown and the per-stage figures, computed once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyzer/diagnosis/phase_breakdown.h"
#include "analyzer/diagnosis/stage_stats.h"
#include "analyzer/diagnosis/task_decomposition.h"
#include "analyzer/model/application_model.h"
#include "analyzer/model/platform.h"
#include "analyzer/model/spark_values.h"
#include "analyzer/model/sql_plans.h"
#include "analyzer/profile/stage_profiles.h"
#include "analyzer/whatif/simulator.h"
#include "common/human_format.h"

namespace sparkprof::executor_logs {
struct ExecutorLogs;  // analyzer/executor_logs/executor_logs.h
}  // namespace sparkprof::executor_logs

namespace sparkprof::diagnosis {

// Where the application ran (analyzer/model/platform.h), in the rules' words.
using model::ClusterManager;
using model::ClusterManagerName;
using model::ClusterManagerOf;
using model::Platform;
using model::PlatformName;
using model::PlatformOf;
// Spark's size strings (analyzer/model/spark_values.h).
using model::kMaxSizeMiB;
using model::ParseSizeMiB;
// The SQL plans as trees (analyzer/model/sql_plans.h).
using model::BroadcastableSides;
using model::BroadcastableSidesOf;
using model::BuildSqlPlans;
using model::IsJoin;
using model::SqlPlan;
using model::StagesByAccumulator;

struct DiagnosisInput {
  const model::ApplicationModel* model = nullptr;
  PhaseBreakdown phases;
  std::vector<StageStats> stages;
  std::unordered_map<int64_t, std::vector<int32_t>> stages_by_accumulator;
  std::vector<SqlPlan> plans;  // refer to stages_by_accumulator: DiagnosisInput is not copied
  // The what-if simulator the rules' Simulated() calls share (prepared on first use): the one
  // MakeDiagnosisInput was given, else its own.
  const whatif::LazySimulator* simulator = nullptr;
  std::unique_ptr<whatif::LazySimulator> own_simulator;
  // The agent's samples per stage (sparkprof analyze --profile, or the driver's own); null
  // without a profile: the profile rules then stay silent.
  const profile::ApplicationProfile* profile = nullptr;
  // With a profile: per stage attempt, its slowest and median tasks with their sampled time.
  std::vector<StageTaskDecomposition> task_decompositions;
  // What the executors' and the driver's own logs said (sparkprof analyze --logs); null
  // without them: the kill causes then read the event log (and the profile) alone.
  const executor_logs::ExecutorLogs* logs = nullptr;

  DiagnosisInput() = default;
  DiagnosisInput(const DiagnosisInput&) = delete;
  DiagnosisInput& operator=(const DiagnosisInput&) = delete;

  // A Spark property, or fallback when it is not set.
  std::string Property(const char* key, const char* fallback) const {
    const std::string* value = model->SparkProperty(key);
    return value != nullptr ? *value : fallback;
  }
  // A numeric Spark property: its value when the whole text (spaces around it allowed) is a
  // number, else fallback (unset, or a value Spark itself would refuse).
  int64_t IntProperty(const char* key, int64_t fallback) const;
  double NumberProperty(const char* key, double fallback) const;
  // spark.master local[...]: every task runs in the driver, whose memory is spark.driver.memory.
  // Not local-cluster[...]: its tasks run in executor JVMs (spark.executor.memory).
  bool LocalMode() const { return Manager() == ClusterManager::kLocal; }
  // The memory setting of the JVMs that run tasks: the driver's in local mode.
  const char* TaskHeapKey() const {
    return LocalMode() ? "spark.driver.memory" : "spark.executor.memory";
  }
  // Adaptive execution merges small shuffle partitions up to
  // spark.sql.adaptive.advisoryPartitionSizeInBytes: spark.sql.adaptive.enabled (default true
  // since Spark 3.2, false before) and spark.sql.adaptive.coalescePartitions.enabled (default
  // true).
  bool AqeCoalesces() const;
  // From spark.master (Databricks clusters are standalone underneath; platform says Databricks).
  ClusterManager Manager() const;
  // The host every executor with cores ran on, when they all ran on one (a standalone cluster
  // or local-cluster on one machine); "" otherwise or without executors.
  std::string SingleExecutorHost() const;
  // From the log's platform markers: Databricks' metadata event or spark.databricks.* settings;
  // EMR's spark.emr.* / the EMRFS settings it writes; Dataproc's spark.dataproc.* settings.
  Platform GetPlatform() const;
  // Slots the run had at its peak (at least 1 so divisions stay defined).
  int64_t slots() const { return phases.peak_slots > 0 ? phases.peak_slots : 1; }
};

// The longest stretch with no task running after the first slot existed (executors held, the
// driver working alone or committing a write): its length and start (epoch ms, -1 when none).
// From the phase sweep (PhaseBreakdown::no_task_spans, less waiting_without_slots_spans: ready
// tasks waiting for an executor when none was alive are no executor's idle time).
struct NoTaskGap {
  int64_t ms = 0;
  int64_t start_ms = -1;
};
NoTaskGap LongestNoTaskGap(const DiagnosisInput& input);
// Every such stretch, in time order.
std::vector<NoTaskGap> NoTaskGaps(const DiagnosisInput& input);

// What a scenario saves, by the what-if simulator (analyzer/whatif): the replay as run minus the
// replay with the change. False when the model does not reproduce this run well enough to trust
// the difference (self-prediction error above 25%) or the log has no tasks to replay.
struct SimulatedSaving {
  int64_t saved_ms = 0;
  double self_prediction_error = 0;
  double core_hours_saved = 0;
};
bool Simulated(const DiagnosisInput& input, const whatif::Scenario& scenario, SimulatedSaving& out);

// Fills `input` (not copyable: its plans point into it). `simulator`, when given, must be over
// `model` and outlive `input`.
void MakeDiagnosisInput(const model::ApplicationModel& model, DiagnosisInput& input,
                        const whatif::LazySimulator* simulator = nullptr,
                        const profile::ApplicationProfile* profile = nullptr,
                        const executor_logs::ExecutorLogs* logs = nullptr);

}  // namespace sparkprof::diagnosis
