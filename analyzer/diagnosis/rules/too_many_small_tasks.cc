// too-many-small-tasks: a stage cut into so many tiny tasks that scheduling and start-up dominate.
//
// Thresholds and sources (analyzer-facts.md, section c):
//   * > 5000 tasks with median task time < 500 ms: DataFlint's SmallTasksAlert.
//   * or > 1000 tasks with median < 100 ms and > 10 tasks per slot (ours: the same overhead at a
//     tenth of the per-task work).
// Recommendation: max(2 x slots, ceil(bytes read / 128 MiB)) partitions, only when fewer than now.
#include <algorithm>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kManyTasks = 5000;
constexpr int64_t kSmallMedianMs = 500;
constexpr int64_t kSomeTasks = 1000;
constexpr int64_t kTinyMedianMs = 100;
constexpr int64_t kMiB = 1 << 20;
}  // namespace

void TooManySmallTasks(const DiagnosisInput& input, std::vector<Finding>& out) {
  const int64_t slots = input.slots();
  for (const StageStats& stage : input.stages) {
    const int64_t tasks = stage.successful_tasks;
    bool dataflint = tasks > kManyTasks && stage.median_task_ms < kSmallMedianMs;
    bool tiny = tasks > kSomeTasks && stage.median_task_ms < kTinyMedianMs && tasks > 10 * slots;
    if (!dataflint && !tiny) continue;
    const int64_t read = stage.input_bytes + stage.shuffle_read_bytes;
    const int64_t target = std::max<int64_t>(2 * slots, (read + 128 * kMiB - 1) / (128 * kMiB));
    if (target >= tasks) continue;
    Finding f = NewFinding("too-many-small-tasks");
    f.confidence = {ConfidenceLevel::kHigh,
                    "task counts and per-task run times and bytes are measured"};
    f.severity = Severity::kWarning;
    f.stage_ids = {stage.stage_id};
    const int64_t overhead_per_task =
        tasks > 0 ? stage.scheduling_overhead_ms / std::max<int64_t>(tasks, 1) : 0;
    f.evidence = {
        {"tasks", static_cast<double>(tasks), "tasks"},
        {"median_task_ms", static_cast<double>(stage.median_task_ms), "ms"},
        {"overhead_per_task_ms", static_cast<double>(overhead_per_task), "ms"},
        {"bytes_read", static_cast<double>(read), "bytes"},
        {"slots", static_cast<double>(slots), "cores"},
        {"recommended_partitions", static_cast<double>(target), "count"},
    };
    f.title = "Stage " + std::to_string(stage.stage_id) + " runs " + std::to_string(tasks) +
              " tasks of " + HumanDurationMs(stage.median_task_ms) + " (median)";
    f.explanation = "Stage " + std::to_string(stage.stage_id) + " (" + stage.name + ") ran " +
                    std::to_string(tasks) + " tasks with a median of " +
                    HumanDurationMs(stage.median_task_ms) + ", reading " + HumanBytes(read) +
                    " in total (" + HumanBytes(tasks > 0 ? read / tasks : 0) +
                    " each). Every task pays scheduling, deserialisation and result handling (" +
                    HumanDurationMs(overhead_per_task) +
                    " per task here beyond its run time), so tiny tasks "
                    "spend a large share on overhead. " +
                    std::to_string(target) + " partitions keep every one of the " +
                    std::to_string(slots) + " slots busy.";
    if (read == 0) {
      f.recommendations.push_back(
          {"",
           "create fewer partitions in the code (.coalesce(" + std::to_string(target) +
               "), or parallelize with numSlices=" + std::to_string(target) + ")",
           "the stage reads neither files nor shuffle data, so no SQL partition setting "
           "applies"});
    } else if (stage.shuffle_read_bytes >= stage.input_bytes) {
      f.recommendations.push_back(
          {"spark.sql.shuffle.partitions", std::to_string(target),
           "max(2 x " + std::to_string(slots) + " slots, " + HumanBytes(read) + " / 128 MiB)"});
      if (input.AqeCoalesces()) {
        f.recommendations.push_back(
            {"",
             "find where the " + std::to_string(tasks) +
                 " partitions come from: a .repartition(n) or an RDD shuffle, which AQE "
                 "does not coalesce",
             "AQE's partition coalescing is on in this run and would have merged these "
             "partitions up to spark.sql.adaptive.advisoryPartitionSizeInBytes if it applied"});
      } else {
        f.recommendations.push_back({"spark.sql.adaptive.coalescePartitions.enabled", "true",
                                     "lets AQE merge small shuffle partitions at run time"});
      }
    } else {
      f.recommendations.push_back({"spark.sql.files.maxPartitionBytes", "128m",
                                   "packs small files into 128 MiB splits; many small input files "
                                   "make many tiny tasks (compact them upstream if possible)"});
    }
    const int64_t total_overhead = overhead_per_task * (tasks - target);
    f.impact = TaskTimeSaving({total_overhead / 2, slots}, {total_overhead, slots},
                              "per-task overhead (duration minus run time) times the tasks "
                              "removed, spread over the slots; half of it for the low end");
    AddCostingItsSaving(std::move(f), out);
  }
}

}  // namespace sparkprof::diagnosis::rules
