// data-skew: a stage waits for a few tasks far longer than the typical one, because they have
// more data. straggler: the same wait with evenly split data (a slow host, or something slow in
// one task).
//
// Thresholds and sources (analyzer-facts.md, section c):
//   * max / median task time >= 4 -> warning, >= 8 -> critical: Dr. Elephant (tuning branch) grades
//     2/4/8/16 as LOW/MODERATE/SEVERE/CRITICAL; we report from MODERATE, so a ratio under 2 never
//     fires and 2..4 stays quiet as noise.
//   * max task >= 5 s: DataFlint ignores skew whose longest task is under 5 s; below it the tail
//     costs little whatever the ratio -- except in a short run, where a tail (max - median) of
//     >= 1 s and >= 10% of the application's wall time is a tenth of the run (ours).
//   * Stragglers (time skew on even data) whose longest task is in a first wave that was slow as a
//     whole (every executor's first task of the stage above 2x the median) are JVM warm-up (class
//     loading, JIT, codegen), not reported: speculation would not help.
//   * >= 5 successful tasks: fewer is not a distribution.
//   * Data vs host: the longest task read >= 2x the median bytes (or records) -> a skewed key or
//     partition (HDInsight's data-skew rule uses 3x the average; the median is robust against the
//     skewed partitions themselves, so 2x). Otherwise, if the other tasks on its host were also 2x
//     slower than the median, the host is slow; else the time skew has no data cause (GC, a slow
//     record path, external calls).
//   * Skewed input splits (data skew in a stage that reads no shuffle): one file or split is larger
//     (an unsplittable gzip file, one big file among small ones); AQE only splits shuffle
//     partitions, so the advice is spark.sql.files.maxPartitionBytes and the file layout.
//   * With a profile, the explanation adds how the slowest task's sampled time differs from the
//     median task's (task_decomposition.h); the finding itself does not depend on it.
//   * AQE splits a partition when it is > skewedPartitionFactor (5) x median AND >
//     skewedPartitionThresholdInBytes (256 MB) (docs/sql-performance-tuning.md): we compute values
//     that would catch this run's partition.
#include <algorithm>
#include <cmath>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/rules/skew_assessment.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kWarningRatio = 4.0;
constexpr double kCriticalRatio = 8.0;
constexpr int64_t kMinMaxTaskMs = 5000;
constexpr int64_t kMinShortRunTailMs = 1000;
constexpr double kShortRunTailShare = 0.10;
constexpr int64_t kMinTasks = 5;
constexpr double kDataRatio = 2.0;
constexpr int64_t kMiB = 1 << 20;
}  // namespace

SkewAssessment AssessSkew(const StageStats& stage, int64_t wall_ms) {
  SkewAssessment a;
  if (stage.successful_tasks < kMinTasks || stage.median_task_ms <= 0) return a;
  a.time_ratio = static_cast<double>(stage.max_task_ms) / static_cast<double>(stage.median_task_ms);
  if (stage.median_read_bytes > 0) {
    a.bytes_ratio = static_cast<double>(stage.max_task_read_bytes) / stage.median_read_bytes;
  }
  if (stage.median_read_records > 0) {
    a.records_ratio = static_cast<double>(stage.max_task_read_records) / stage.median_read_records;
  }
  const int64_t tail = stage.max_task_ms - stage.median_task_ms;
  const bool long_enough =
      stage.max_task_ms >= kMinMaxTaskMs ||
      (wall_ms > 0 && tail >= kMinShortRunTailMs &&
       static_cast<double>(tail) >= kShortRunTailShare * static_cast<double>(wall_ms));
  if (a.time_ratio < kWarningRatio || !long_enough) return a;
  a.warm_up = stage.longest_is_executor_first_task;
  if (a.bytes_ratio >= kDataRatio || a.records_ratio >= kDataRatio) {
    a.kind = SkewKind::kData;
  } else if (stage.max_task_host_median_ms >= 2 * stage.median_task_ms) {
    a.kind = SkewKind::kSlowHost;
  } else {
    a.kind = SkewKind::kTime;
  }
  return a;
}

void DataSkew(const DiagnosisInput& input, std::vector<Finding>& out) {
  for (const StageStats& stage : input.stages) {
    SkewAssessment skew = AssessSkew(stage, input.phases.wall_ms);
    if (skew.kind == SkewKind::kNone) continue;
    if (skew.kind != SkewKind::kData && skew.warm_up) continue;
    Finding f = NewFinding("data-skew");
    f.confidence = {ConfidenceLevel::kHigh,
                    "the task durations of one stage attempt, as Spark's TaskEnd events record "
                    "them; the slow tasks' input and shuffle bytes are in the evidence"};
    f.severity = skew.time_ratio >= kCriticalRatio ? Severity::kCritical : Severity::kWarning;
    f.stage_ids = {stage.stage_id};
    const int64_t tail_ms = stage.max_task_ms - stage.median_task_ms;
    f.cost_ms = tail_ms;
    f.evidence = {
        {"max_task_ms", static_cast<double>(stage.max_task_ms), "ms"},
        {"median_task_ms", static_cast<double>(stage.median_task_ms), "ms"},
        {"p95_task_ms", static_cast<double>(stage.p95_task_ms), "ms"},
        {"max_over_median_time", skew.time_ratio, "ratio"},
        {"max_task_read_bytes", static_cast<double>(stage.max_task_read_bytes), "bytes"},
        {"median_task_read_bytes", static_cast<double>(stage.median_read_bytes), "bytes"},
        {"max_over_median_bytes", skew.bytes_ratio, "ratio"},
        {"max_over_median_records", skew.records_ratio, "ratio"},
        {"successful_tasks", static_cast<double>(stage.successful_tasks), "tasks"},
    };
    std::string head = "Stage " + std::to_string(stage.stage_id) + " (" + stage.name +
                       "): its longest task took " + HumanDurationMs(stage.max_task_ms) + ", " +
                       Fixed(skew.time_ratio) + "x the median task (" +
                       HumanDurationMs(stage.median_task_ms) +
                       "). The stage cannot finish before that task, "
                       "so for about " +
                       HumanDurationMs(tail_ms) + " most of the " + std::to_string(input.slots()) +
                       " task slots had nothing to do. ";
    const std::string aqe = input.Property("spark.sql.adaptive.enabled", "true");
    if (skew.kind == SkewKind::kData && stage.shuffle_read_bytes == 0) {
      f.title = "Skewed input in stage " + std::to_string(stage.stage_id) + ": one split holds " +
                Fixed(std::max(skew.bytes_ratio, skew.records_ratio)) + "x the median data";
      f.explanation = head + "That task also read " + HumanBytes(stage.max_task_read_bytes) +
                      " against a median of " + HumanBytes(stage.median_read_bytes) + " (" +
                      Fixed(skew.bytes_ratio) + "x bytes, " + Fixed(skew.records_ratio) +
                      "x records). The stage reads files, not a shuffle, so the skew is in the "
                      "input splits: one file is much larger than the others or cannot be split "
                      "(gzip). AQE's skew handling only splits shuffle partitions and cannot "
                      "help here; the split size and the file layout can.";
      const int64_t split_mib =
          std::clamp<int64_t>(std::max<int64_t>(2 * stage.median_read_bytes / kMiB, 16), 16, 128);
      f.recommendations.push_back(
          {"spark.sql.files.maxPartitionBytes", std::to_string(split_mib) + "m",
           std::to_string(split_mib) + " MiB splits (about twice the median task's " +
               HumanBytes(stage.median_read_bytes) +
               ", within 16-128 MiB) cut a large splittable file into pieces like the others"});
      f.recommendations.push_back(
          {"",
           "rewrite the input as evenly sized files in a splittable format (Parquet/ORC, no "
           "gzip), or .repartition() right after reading",
           "an unsplittable file is always read by one task, whatever the split size"});
    } else if (skew.kind == SkewKind::kData) {
      f.title = "Data skew in stage " + std::to_string(stage.stage_id) + ": one partition holds " +
                Fixed(std::max(skew.bytes_ratio, skew.records_ratio)) + "x the median data";
      f.explanation = head + "That task also read " + HumanBytes(stage.max_task_read_bytes) +
                      " against a median of " + HumanBytes(stage.median_read_bytes) + " (" +
                      Fixed(skew.bytes_ratio) + "x bytes, " + Fixed(skew.records_ratio) +
                      "x records): the work is unevenly split by key, not slowed by a machine. "
                      "More memory or executors would not shorten it; splitting the hot key would.";
      if (aqe != "true") {
        f.recommendations.push_back({"spark.sql.adaptive.enabled", "true",
                                     "adaptive execution is off in this run; it is what splits "
                                     "skewed shuffle partitions at run time"});
      }
      f.recommendations.push_back({"spark.sql.adaptive.skewJoin.enabled", "true",
                                   "lets AQE split a sort-merge-join partition that is much larger "
                                   "than the median into several tasks"});
      int64_t factor = static_cast<int64_t>(std::floor(std::max(2.0, skew.bytes_ratio / 2)));
      if (skew.bytes_ratio > 0 && skew.bytes_ratio < 10) {
        f.recommendations.push_back(
            {"spark.sql.adaptive.skewJoin.skewedPartitionFactor", std::to_string(factor),
             "the skewed partition is " + Fixed(skew.bytes_ratio) +
                 "x the median; the default factor 5 " +
                 (skew.bytes_ratio < 5 ? std::string("would not flag it")
                                       : std::string("flags it only barely")) +
                 ", half the observed ratio does"});
      }
      if (stage.max_task_read_bytes > 0 && stage.max_task_read_bytes < 256 * kMiB) {
        int64_t threshold_mib = std::max<int64_t>(
            1, std::min<int64_t>(std::max<int64_t>(2 * stage.median_read_bytes / kMiB, 16),
                                 stage.max_task_read_bytes / 2 / kMiB));
        f.recommendations.push_back(
            {"spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
             std::to_string(threshold_mib) + "m",
             "the skewed partition is " + HumanBytes(stage.max_task_read_bytes) +
                 ", under the 256 MB default, so AQE leaves it alone; half its size (and at least "
                 "2x the median) catches it without splitting normal partitions"});
      }
      int64_t salts = std::clamp<int64_t>(
          static_cast<int64_t>(std::ceil(std::max(skew.bytes_ratio, skew.records_ratio))), 2, 64);
      f.recommendations.push_back(
          {"",
           "salt the hot join/group key: add a random suffix 0.." + std::to_string(salts - 1) +
               " to it on the large side and replicate the small side " + std::to_string(salts) +
               " times (or broadcast the small side if it fits)",
           "the largest partition is " + Fixed(std::max(skew.bytes_ratio, skew.records_ratio)) +
               "x the median; " + std::to_string(salts) +
               " salts bring it near the median when AQE cannot split it (aggregations, "
               "non-join shuffles)"});
    } else {
      // Even data: not skew. A straggler is fixed by speculation or the host, not by the keys.
      bool host = skew.kind == SkewKind::kSlowHost;
      SetRule(f, "straggler");
      f.confidence = {ConfidenceLevel::kMedium,
                      "task durations are measured and the slow task read no more than the "
                      "median, so the data is even; why it was slow is not in the log" +
                          std::string(host ? " (its host's other tasks were slow too)" : "")};
      f.title = std::string(host ? "Slow host in stage " : "Straggler tasks in stage ") +
                std::to_string(stage.stage_id) + ": " + Fixed(skew.time_ratio) +
                "x the median task time with even data";
      f.explanation = head + "The longest task read " + HumanBytes(stage.max_task_read_bytes) +
                      ", about as much as the median task (" + HumanBytes(stage.median_read_bytes) +
                      "), so the data is evenly split. " +
                      (host ? "The other tasks on its host " + stage.max_task_host + " took " +
                                  HumanDurationMs(stage.max_task_host_median_ms) +
                                  " (median), also slow: the machine is the likely cause."
                            : std::string("Its host ran other tasks at normal speed, so look at "
                                          "what differs for that task (GC, a slow record, an "
                                          "external call)."));
      f.recommendations.push_back({"spark.speculation", "true",
                                   "re-launches tasks far slower than their stage's median on "
                                   "another executor; the data is even, so a copy would finish "
                                   "in about the median time"});
      f.recommendations.push_back({"spark.speculation.multiplier", "3",
                                   "only tasks 3x slower than the median are copied (the Spark 4.0 "
                                   "default), so healthy tasks are not duplicated; this stage's "
                                   "tail is " +
                                       Fixed(skew.time_ratio) + "x"});
      if (host) {
        f.recommendations.push_back({"",
                                     "check host " + stage.max_task_host +
                                         " (disk, network, noisy neighbours) or exclude it",
                                     "its tasks were slow with normal data"});
      }
    }
    // With the agent's profile: what the slowest task did with its extra time, in one sentence.
    if (const StageTaskDecomposition* tasks =
            FindTaskDecomposition(input.task_decompositions, stage.stage_id, stage.attempt)) {
      if (const std::string text = SlowestVsMedianText(*tasks); !text.empty()) {
        f.explanation += " The agent's samples: " + text + ".";
      }
    }
    f.impact = WallTimeSaving(
        std::max<int64_t>(stage.max_task_ms - stage.p95_task_ms, 0), tail_ms, input.slots() - 1,
        "the stage ends with its longest task; if that task shrank to the p95 task time (low) or "
        "the median (high), the stage would end that much earlier; core-hours are the other slots "
        "held idle during that tail");
    if (skew.kind == SkewKind::kData) {
      // The what-if replay of the run with this stage's hot partitions split (AQE-style).
      whatif::Scenario fix;
      fix.fix_skew = true;
      fix.skew_stages = {stage.stage_id};
      SimulatedSaving simulated;
      if (Simulated(input, fix, simulated)) {
        f.impact.time_saved_ms_high = simulated.saved_ms;
        f.impact.time_saved_ms_low = simulated.saved_ms * 3 / 4;
        f.impact.core_hours_saved_high = simulated.core_hours_saved;
        f.impact.core_hours_saved_low = simulated.core_hours_saved * 3 / 4;
        f.impact.method =
            "simulated (sparkprof whatif --fix skew, this stage only): the run replayed with "
            "its tasks above 2x the median split into median-sized pieces (no more than pay "
            "for their per-task cost on this run's slots) saves " +
            HumanDurationMs(simulated.saved_ms) +
            " of wall time (high; the model reproduces this run "
            "within " +
            Fixed(100 * simulated.self_prediction_error, 1) +
            "%), three quarters of it (low: splitting costs a little)";
      }
    }
    out.push_back(std::move(f));
  }
}

}  // namespace sparkprof::diagnosis::rules
