// too-few-partitions: a long stage has fewer tasks than task slots, or partitions far larger than
// a task should hold, so cores sit idle or tasks grind through huge partitions.
//
// Thresholds and sources (analyzer-facts.md, section c):
//   * tasks < slots (Spark's docs/tuning.md asks for 2-3 tasks per core; under one per core some
//     cores get no work at all) AND the stage ran >= 30 s AND its tasks took >= 30 s in total
//     (shorter stages cost little). "Ran" is first task launch to last task finish: submission to
//     completion also counts the wait for slots held by concurrent stages, which more partitions
//     would not shorten; in a short run, a stage of >= 10 s that is >= 25% of the wall (ours);
//   * or median bytes read per task >= 1 GiB, with the same time floors (practitioner consensus
//     is 128-200 MB per partition; DataFlint flags 5 GiB partitions; 1 GiB is well past the
//     range where sorts and aggregations stay in memory).
// Recommendation: max(2 x slots, ceil(bytes read / 128 MiB)) partitions; through the setting that
// shapes this stage (shuffle partitions, or AQE's advisory size when AQE coalesces, for shuffle
// reads; maxPartitionBytes for file scans; the code otherwise).
#include <algorithm>
#include <string>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kMinStageMs = 30'000;
constexpr int64_t kShortRunStageMs = 10'000;
constexpr double kShortRunShare = 0.25;
constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kHugePartitionBytes = 1024 * kMiB;
constexpr int64_t kTargetPartitionBytes = 128 * kMiB;

// The SQL plan of the stage's query asks for an explicit partition count (.repartition(n)):
// AQE neither coalesces nor splits that shuffle, and no setting changes its count.
bool RepartitionedByNumber(const model::ApplicationModel& m, int32_t stage_id) {
  for (const auto& [key, stage] : m.stages) {
    if (key.first != stage_id) continue;
    for (int32_t job_id : stage.job_ids) {
      auto job = m.jobs.find(job_id);
      if (job == m.jobs.end()) continue;
      auto sql = m.sql_executions.find(job->second.sql_execution_id);
      if (sql != m.sql_executions.end() &&
          sql->second.physical_plan.find("REPARTITION_BY_NUM") != std::string::npos)
        return true;
    }
  }
  return false;
}
}  // namespace

void TooFewPartitions(const DiagnosisInput& input, std::vector<Finding>& out) {
  const int64_t slots = input.slots();
  for (const StageStats& stage : input.stages) {
    // Short runs: a stage of >= 10 s that is a quarter of the wall counts too (ours).
    const bool long_in_short_run =
        stage.task_span_ms >= kShortRunStageMs &&
        static_cast<double>(stage.task_span_ms) >= kShortRunShare * input.phases.wall_ms;
    if ((!long_in_short_run &&
         (stage.task_span_ms < kMinStageMs || stage.total_task_ms < kMinStageMs)) ||
        stage.successful_tasks == 0)
      continue;
    const bool few = stage.num_tasks < slots && input.phases.peak_slots > 1;
    const bool huge = stage.median_read_bytes >= kHugePartitionBytes;
    if (!few && !huge) continue;
    const int64_t read = stage.input_bytes + stage.shuffle_read_bytes;
    const int64_t target =
        std::max<int64_t>(2 * slots, (read + kTargetPartitionBytes - 1) / kTargetPartitionBytes);
    if (target <= stage.num_tasks) continue;
    Finding f = NewFinding("too-few-partitions");
    f.confidence = {ConfidenceLevel::kMedium,
                    "task counts against slots and bytes per task are measured; the better "
                    "partition count is an estimate from the stage's bytes"};
    f.severity = Severity::kWarning;
    f.stage_ids = {stage.stage_id};
    f.evidence = {
        {"tasks", static_cast<double>(stage.num_tasks), "tasks"},
        {"slots", static_cast<double>(slots), "cores"},
        {"stage_duration_ms", static_cast<double>(stage.duration_ms), "ms"},
        {"task_span_ms", static_cast<double>(stage.task_span_ms), "ms"},
        {"total_task_ms", static_cast<double>(stage.total_task_ms), "ms"},
        {"bytes_read", static_cast<double>(read), "bytes"},
        {"median_task_read_bytes", static_cast<double>(stage.median_read_bytes), "bytes"},
        {"recommended_partitions", static_cast<double>(target), "count"},
    };
    f.title = "Stage " + std::to_string(stage.stage_id) + " runs " +
              std::to_string(stage.num_tasks) + " tasks on " + std::to_string(slots) + " slots";
    f.explanation =
        "Stage " + std::to_string(stage.stage_id) + " (" + stage.name + ") ran for " +
        HumanDurationMs(stage.task_span_ms) + " (first task start to last task end) with " +
        std::to_string(stage.num_tasks) + " tasks, each reading " +
        HumanBytes(stage.median_read_bytes) + " (median), while " + std::to_string(slots) +
        " task slots were available. " +
        (few ? "With fewer tasks than slots, " + std::to_string(slots - stage.num_tasks) +
                   " cores had nothing to do for the whole stage. "
             : std::string()) +
        (huge ? "Partitions over 1 GiB rarely fit a task's memory; 128-200 MiB do. "
              : std::string()) +
        std::to_string(target) +
        " partitions give every core 2 tasks (so a slow one is "
        "balanced by the others)" +
        (read > 0 ? " and about " + HumanBytes(read / target) + " each." : std::string("."));
    if (read == 0) {
      f.recommendations.push_back(
          {"",
           ".repartition(" + std::to_string(target) +
               ") (or parallelize "
               "with numSlices=" +
               std::to_string(target) + ") before this stage",
           "the stage reads neither files nor shuffle data, so no SQL "
           "partition setting applies; its parallelism comes from the code"});
    } else if (stage.shuffle_read_bytes >= stage.input_bytes &&
               RepartitionedByNumber(*input.model, stage.stage_id)) {
      f.recommendations.push_back(
          {"",
           "change the .repartition(" + std::to_string(stage.num_tasks) +
               ") before this stage to .repartition(" + std::to_string(target) + ")",
           "the plan repartitions to a fixed number (REPARTITION_BY_NUM): that number, not "
           "spark.sql.shuffle.partitions or AQE, sets this stage's " +
               std::to_string(stage.num_tasks) + " tasks"});
    } else if (stage.shuffle_read_bytes >= stage.input_bytes && input.AqeCoalesces()) {
      const int64_t advisory_mib = std::max<int64_t>(1, read / target / kMiB);
      f.recommendations.push_back(
          {"spark.sql.adaptive.advisoryPartitionSizeInBytes", std::to_string(advisory_mib) + "m",
           "AQE is on and merges shuffle partitions up to this size (64 MiB by default), so it "
           "sets the task count: " +
               HumanBytes(read) + " / " + std::to_string(target) + " partitions"});
      const int64_t current = input.IntProperty("spark.sql.shuffle.partitions", 200);
      if (current < target) {
        f.recommendations.push_back(
            {"spark.sql.shuffle.partitions", std::to_string(target),
             "AQE only merges partitions, so the shuffle must start with at least " +
                 std::to_string(target) + " (" + std::to_string(current) + " now)"});
      }
      f.recommendations.push_back({"",
                                   "if the plan repartitions to " +
                                       std::to_string(stage.num_tasks) +
                                       " (.repartition(n) or coalesce(n)), change that number to " +
                                       std::to_string(target) + " in the code",
                                   "an explicit partition count overrides both settings"});
    } else if (stage.shuffle_read_bytes >= stage.input_bytes) {
      f.recommendations.push_back({"spark.sql.shuffle.partitions", std::to_string(target),
                                   "max(2 x " + std::to_string(slots) + " slots, " +
                                       HumanBytes(read) + " / 128 MiB); or .repartition(" +
                                       std::to_string(target) + ") before this stage"});
    } else {
      int64_t split_mib = std::max<int64_t>(1, read / target / kMiB);
      f.recommendations.push_back({"spark.sql.files.maxPartitionBytes",
                                   std::to_string(split_mib) + "m",
                                   HumanBytes(read) + " of input over " + std::to_string(target) +
                                       " splits; if the files are unsplittable (gzip), repartition "
                                       "after reading instead"});
    }
    const int64_t ideal = stage.total_task_ms / std::min<int64_t>(slots, target);
    const int64_t saved = std::max<int64_t>(stage.task_span_ms - ideal, 0);
    f.impact = WallTimeSaving(saved / 2, saved, slots,
                              "the stage's running time (first task start to last task end) "
                              "minus its total task time spread evenly over the slots (high), "
                              "half of that gain (low: larger tasks rarely split perfectly)");
    f.cost_ms = saved;
    whatif::Scenario split;
    split.stage_partitions[stage.stage_id] =
        static_cast<int32_t>(std::min<int64_t>(target, 100'000));
    SimulatedSaving simulated;
    if (Simulated(input, split, simulated)) {
      f.impact.time_saved_ms_high = simulated.saved_ms;
      f.impact.time_saved_ms_low = simulated.saved_ms / 2;
      f.impact.core_hours_saved_high = simulated.core_hours_saved;
      f.impact.core_hours_saved_low = simulated.core_hours_saved / 2;
      f.impact.method = "simulated (sparkprof whatif): the run replayed with stage " +
                        std::to_string(stage.stage_id) + "'s work spread over " +
                        std::to_string(target) + " tasks saves " +
                        HumanDurationMs(simulated.saved_ms) +
                        " of wall time (high; the model reproduces this run within " +
                        Fixed(100 * simulated.self_prediction_error, 1) +
                        "%), half of it (low: larger tasks rarely split perfectly)";
    }
    out.push_back(std::move(f));
  }
}

}  // namespace sparkprof::diagnosis::rules
