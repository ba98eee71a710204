// state-skew: a stateful streaming query one of whose state partitions does far more work than
// the others in batch after batch -- a hot key: every row of a key goes to the one partition that
// holds its state -- so every batch waits for that partition's task.
//
// The figures: Spark's StateOperatorProgress has none per partition (3.5: rows, memory and times
// summed over the partitions; 4.x adds only each partition's last uploaded snapshot version), so
// the stateful stage's tasks are the per-partition figures. The stateful stage: the batch's stage
// that reads a shuffle with as many tasks as the state has partitions (numShufflePartitions, fixed
// by the checkpoint: task i reads, updates and commits state partition i); the last such stage of
// the batch's jobs.
// Pattern, from first principles, over the recent batches (streaming_batches.h):
//   * in a batch, the slowest partition took at least kSkewRatio (2) x the stage's median task:
//     it alone does the work of two typical partitions, so with a slot for each partition the
//     stage lasts at least twice what the typical partition needs -- and read at least
//     kSkewRatio x the median task's shuffled rows: a hot key is more rows; a task as slow with
//     as many rows as the others is its host, a GC pause or the stage's first task warming up
//     (a real run's task 0 was slowest in 3 of 6 batches with 0.99 x the median's rows);
//   * the same partition is that slow in at least half of the batches (and at least 3): a slow
//     host, a GC pause or a cold cache lands on any partition, a hot key on its own one every
//     batch. With P partitions a random slow task falls on a given one 1 / P of the time.
// Figures: per skewed batch, the time the stage waited for the hot partition beyond an even
// spread of its tasks' time: slowest task - max(median task, task time / slots) (with fewer slots
// than partitions the other tasks fill the slots meanwhile); summed, that is the impact, half of
// it low. Silent when it is 0: the slots were busy with the other partitions meanwhile (a few
// rows of a tiny batch in one of 40 partitions on 2 slots), and spreading the key saves nothing.
// Fix: the state's partitions are fixed by the checkpoint, and more of them would not split one
// key: spread the hot key (a salt column in the grouping key, the partial results combined
// downstream) or route it to a query of its own.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/streaming_batches.h"
#include "common/human_format.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kSkewRatio = 2.0;
constexpr int64_t kMinSkewedBatches = 3;

// One batch's stateful stage: its successful tasks' run time and shuffle records by partition.
struct StatefulStage {
  int64_t batch_id = -1;
  std::vector<int64_t> run_ms;  // by partition (task index); -1: no successful attempt
  std::vector<int64_t> records;
};

int64_t Median(std::vector<int64_t> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

// The stateful stage of each batch of `run` in [first_batch_id, last_batch_id], by batch id.
std::map<int64_t, StatefulStage> StatefulStages(const model::ApplicationModel& m,
                                                const model::StreamingQueryRun& run,
                                                int64_t first_batch_id, int64_t last_batch_id) {
  std::map<int64_t, StatefulStage> stages;
  const int64_t partitions = run.state_shuffle_partitions;
  for (const auto& [job_id, job] : m.jobs) {
    if (job.job_group != run.run_id || job.streaming_batch_id < first_batch_id ||
        job.streaming_batch_id > last_batch_id) {
      continue;
    }
    for (int32_t stage_id : job.stage_ids) {
      for (auto it = m.stages.lower_bound({stage_id, 0});
           it != m.stages.end() && it->first.first == stage_id; ++it) {
        const model::StageAttempt& stage = it->second;
        if (stage.job_ids.empty() || stage.job_ids.front() != job_id) continue;
        if (stage.num_tasks != partitions) continue;
        StatefulStage found;
        found.batch_id = job.streaming_batch_id;
        found.run_ms.assign(partitions, -1);
        found.records.assign(partitions, 0);
        bool reads_shuffle = false;
        auto [begin, end] = m.TasksOf(stage);
        for (const uint32_t* t = begin; t != end; ++t) {
          const model::TaskAttempt& task = m.tasks[*t];
          if (task.end != model::TaskEndKind::kSuccess || task.index < 0 ||
              task.index >= partitions) {
            continue;
          }
          found.run_ms[task.index] = task.metrics.executor_run_time_ms;
          found.records[task.index] = task.metrics.shuffle_records_read;
          reads_shuffle = reads_shuffle || task.metrics.shuffle_records_read > 0;
        }
        // The later stage of the batch wins: stage ids grow within a batch's jobs.
        if (reads_shuffle) stages[job.streaming_batch_id] = std::move(found);
      }
    }
  }
  return stages;
}
}  // namespace

void StateSkew(const DiagnosisInput& input, std::vector<Finding>& out) {
  const int64_t slots = std::max<int64_t>(input.slots(), 1);
  for (const model::StreamingQueryRun& run : input.model->streaming.runs) {
    if (run.state_operators.empty() || run.state_shuffle_partitions < 3) continue;
    const StreamingWindow w = RecentBatches(run);
    if (!w.valid()) continue;
    const std::map<int64_t, StatefulStage> stages =
        StatefulStages(*input.model, run, w.first_batch_id, w.last_batch_id);
    if (stages.empty()) continue;
    // Per partition: the batches in which it was the slowest by kSkewRatio.
    std::map<int64_t, std::vector<const StatefulStage*>> skewed_by_partition;
    std::map<const StatefulStage*, std::pair<int64_t, int64_t>> slowest;  // partition, median
    for (const auto& [batch_id, stage] : stages) {
      std::vector<int64_t> known;
      for (int64_t ms : stage.run_ms) {
        if (ms >= 0) known.push_back(ms);
      }
      if (known.size() < 3) continue;
      const int64_t median = Median(known);
      const auto max_it = std::max_element(stage.run_ms.begin(), stage.run_ms.end());
      const int64_t partition = max_it - stage.run_ms.begin();
      if (*max_it < kSkewRatio * std::max<int64_t>(median, 1)) continue;
      const int64_t hot_rows = stage.records[partition];
      if (hot_rows == 0 || hot_rows < kSkewRatio * Median(stage.records)) continue;
      skewed_by_partition[partition].push_back(&stage);
      slowest[&stage] = {partition, median};
    }
    const auto hot = std::max_element(
        skewed_by_partition.begin(), skewed_by_partition.end(),
        [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    if (hot == skewed_by_partition.end()) continue;
    const int64_t skewed_batches = static_cast<int64_t>(hot->second.size());
    const int64_t judged_batches = static_cast<int64_t>(stages.size());
    if (skewed_batches < kMinSkewedBatches || 2 * skewed_batches < judged_batches) continue;

    const int64_t partition = hot->first;
    int64_t waited_ms = 0, hot_ms = 0, median_sum_ms = 0, hot_records = 0, median_records = 0;
    for (const StatefulStage* stage : hot->second) {
      const int64_t median = slowest[stage].second;
      int64_t total = 0;
      for (int64_t ms : stage->run_ms) total += std::max<int64_t>(ms, 0);
      const int64_t even = std::max(median, total / slots);
      const int64_t slowest_ms = stage->run_ms[partition];
      waited_ms += std::max<int64_t>(slowest_ms - even, 0);
      hot_ms += slowest_ms;
      median_sum_ms += median;
      hot_records += stage->records[partition];
      median_records += Median(stage->records);
    }
    if (waited_ms == 0) continue;
    const int64_t mean_hot_ms = hot_ms / skewed_batches;
    const int64_t mean_median_ms = median_sum_ms / skewed_batches;
    const double records_ratio =
        median_records > 0 ? static_cast<double>(hot_records) / median_records : 0;

    Finding f = NewFinding("state-skew");
    f.severity = Severity::kWarning;
    f.confidence = {ConfidenceLevel::kMedium,
                    "the stateful stage is the batch's shuffle-reading stage with one task per "
                    "state partition; task times and records are Spark's own"};
    f.title = QueryLabel(run) + ": state partition " + std::to_string(partition) +
              " is the slowest in " + std::to_string(skewed_batches) + " of " +
              std::to_string(judged_batches) + " batches (" + HumanDurationMs(mean_hot_ms) +
              " against a median of " + HumanDurationMs(mean_median_ms) + ")";
    f.evidence = {
        {"state_partitions", static_cast<double>(run.state_shuffle_partitions), "count"},
        {"hot_partition", static_cast<double>(partition), "count"},
        {"batches", static_cast<double>(judged_batches), "count"},
        {"skewed_batches", static_cast<double>(skewed_batches), "count"},
        {"hot_partition_task_ms", static_cast<double>(mean_hot_ms), "ms"},
        {"median_task_ms", static_cast<double>(mean_median_ms), "ms"},
        {"records_ratio", std::round(records_ratio * 100) / 100, "ratio"},  // 0: median read none
        {"waited_ms", static_cast<double>(waited_ms), "ms"},
        {"slots", static_cast<double>(slots), "cores"},
    };
    const std::string operators = StateOperatorList(run);
    f.explanation =
        "The query keeps its state (" + operators + ") in " +
        std::to_string(run.state_shuffle_partitions) +
        " partitions, one task each in every batch's stateful stage, and a key's rows all go to "
        "the partition holding its state. In " +
        std::to_string(skewed_batches) + " of its last " + std::to_string(judged_batches) +
        " batches partition " + std::to_string(partition) +
        "'s task was the slowest, at least twice the stage's median task in time and in rows "
        "read: " +
        HumanDurationMs(mean_hot_ms) + " against " + HumanDurationMs(mean_median_ms) +
        " on average" +
        (records_ratio > 0
             ? ", reading " + Fixed(records_ratio) + " times the median task's shuffled rows"
             : std::string()) +
        ". The same partition every batch is a hot key, not a slow host. Each such batch waited " +
        "for it beyond an even spread of the stage's work: " + HumanDurationMs(waited_ms) +
        " in all.";
    f.recommendations.push_back(
        {"",
         "spread the hot key: add a salt to the grouping key (e.g. pmod(hash(<another column>), "
         "8)) and combine the partial results per key downstream, or route the hot key to a "
         "query of its own",
         "the state's partitions are fixed by the checkpoint, and more of them would not split "
         "one key: only spreading the key's rows evens the partitions"});
    f.impact = WallTimeSaving(waited_ms / 2, waited_ms, 0,
                              "the time each skewed batch's stateful stage waited for the hot "
                              "partition beyond an even spread (slowest task - max(median task, "
                              "task time / slots)), summed; half of it low");
    AddCostingItsSaving(std::move(f), out);
  }
}

}  // namespace sparkprof::diagnosis::rules
