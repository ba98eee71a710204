// Every diagnosis rule: a row of the table in rules.cc -- its id, the category and recipe its
// findings carry, the function that evaluates it -- and a file holding that function, which
// appends its findings. The ids are the ones docs/report-schema.md names; thresholds and their
// sources sit in each file. A new rule is one file and one row (and its declaration below).
// A rule's severity thresholds ("ratio >= 8: critical") say how bad its pattern can be; the
// severity a performance finding ends with is at most what its expected saving allows
// (analyzer/diagnosis/severity.h, applied by Diagnose() to every finding; failures exempt).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "analyzer/diagnosis/diagnosis_input.h"
#include "analyzer/diagnosis/finding.h"

namespace sparkprof::diagnosis::rules {

using Evaluate = void (*)(const DiagnosisInput& input, std::vector<Finding>& out);
struct Rule {
  const char* id;      // the findings' `rule`
  Category category;   // their category (a rule may set another for one finding: job-failures
                       // by the failure's cause)
  const char* recipe;  // the docs page their report links
  Evaluate evaluate;   // null: evaluated by the function of the row above
};
// In evaluation order.
std::span<const Rule> AllRules();
const Rule* FindRule(std::string_view id);  // null for an id no row has
// A finding of rule `id`, with the table's category and recipe; SetRule gives an existing finding
// another rule's id, category and recipe.
Finding NewFinding(std::string_view id);
void SetRule(Finding& f, std::string_view id);

// Nanoseconds as evidence in whole milliseconds: truncated on purpose, as the report has always
// written them.
template <typename Integer>
double WholeMs(Integer ns) {
  const Integer ms = ns / 1'000'000;
  return static_cast<double>(ms);
}

// job_failures.cc
void JobFailures(const DiagnosisInput& input, std::vector<Finding>& out);
// data_skew.cc (data-skew and straggler)
void DataSkew(const DiagnosisInput& input, std::vector<Finding>& out);
// spill.cc
void Spill(const DiagnosisInput& input, std::vector<Finding>& out);
// gc_pressure.cc
void GcPressure(const DiagnosisInput& input, std::vector<Finding>& out);
// resource_wait.cc
void ResourceWait(const DiagnosisInput& input, std::vector<Finding>& out);
// io_write_bound.cc (io-write-bound and small-files)
void IoWriteBound(const DiagnosisInput& input, std::vector<Finding>& out);
// task_failures.cc
void TaskFailures(const DiagnosisInput& input, std::vector<Finding>& out);
// executor_loss.cc
void ExecutorLoss(const DiagnosisInput& input, std::vector<Finding>& out);
// too_few_partitions.cc
void TooFewPartitions(const DiagnosisInput& input, std::vector<Finding>& out);
// too_many_small_tasks.cc
void TooManySmallTasks(const DiagnosisInput& input, std::vector<Finding>& out);
// shuffle_bottleneck.cc
void ShuffleBottleneck(const DiagnosisInput& input, std::vector<Finding>& out);
// driver_bound.cc
void DriverBound(const DiagnosisInput& input, std::vector<Finding>& out);
// idle_executors.cc
void IdleExecutors(const DiagnosisInput& input, std::vector<Finding>& out);
// scheduler_overhead.cc
void SchedulerOverhead(const DiagnosisInput& input, std::vector<Finding>& out);
// fetch_failures.cc
void FetchFailures(const DiagnosisInput& input, std::vector<Finding>& out);
// plan_joins.cc: broadcast-join-missed, broadcast-too-large, nested-loop-join, exploding-join
void PlanJoins(const DiagnosisInput& input, std::vector<Finding>& out);
// plan_scans.cc: full-scan, python-udf
void FullScan(const DiagnosisInput& input, std::vector<Finding>& out);
void PythonUdf(const DiagnosisInput& input, std::vector<Finding>& out);
// cache_misuse.cc
void CacheMisuse(const DiagnosisInput& input, std::vector<Finding>& out);
// falling_behind.cc, batch_over_trigger.cc, batch_overhead.cc, state_growth.cc: streaming
// queries (streaming_batches.h)
void FallingBehind(const DiagnosisInput& input, std::vector<Finding>& out);
void BatchOverTrigger(const DiagnosisInput& input, std::vector<Finding>& out);
void BatchOverhead(const DiagnosisInput& input, std::vector<Finding>& out);
void StateGrowth(const DiagnosisInput& input, std::vector<Finding>& out);
// slow_batch_step.cc: slow-source and slow-commit
void SlowBatchStep(const DiagnosisInput& input, std::vector<Finding>& out);
// state_skew.cc
void StateSkew(const DiagnosisInput& input, std::vector<Finding>& out);
// speculation_waste.cc
void SpeculationWaste(const DiagnosisInput& input, std::vector<Finding>& out);
// The profile's rules (profile_judgement.h): each reads the agent's samples per stage.
// serialization_bound.cc
void SerializationBound(const DiagnosisInput& input, std::vector<Finding>& out);
// python_bound.cc
void PythonBound(const DiagnosisInput& input, std::vector<Finding>& out);
void PerTaskOverhead(const DiagnosisInput& input, std::vector<Finding>& out);
// io_wait_bound.cc
void IoWaitBound(const DiagnosisInput& input, std::vector<Finding>& out);
// lock_contention.cc
void LockContention(const DiagnosisInput& input, std::vector<Finding>& out);
// cpu_oversubscription.cc
void CpuOversubscription(const DiagnosisInput& input, std::vector<Finding>& out);
// hot_user_code.cc
void HotUserCode(const DiagnosisInput& input, std::vector<Finding>& out);

// Core-hours for a stretch of wall time during which `cores` were held.
inline double CoreHours(int64_t millis, int64_t cores) {
  return static_cast<double>(millis) * static_cast<double>(cores) / 3'600'000.0;
}

}  // namespace sparkprof::diagnosis::rules
