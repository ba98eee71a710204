// shuffle-bottleneck: tasks of a stage wait on shuffle fetches (reading map output over the
// network) or on writing shuffle files, instead of computing.
//
// Thresholds (ours; Sparklens shows ReadFetch% and ShuffleWrite% per stage without thresholds):
//   * fetch wait + shuffle write time >= 20% of the stage's executor run time -> warning, >= 40% ->
//     critical; and >= 60 s of task time in total, so small stages do not count.
#include <algorithm>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kWarningShare = 0.20;
constexpr double kCriticalShare = 0.40;
constexpr int64_t kMinShuffleMs = 60'000;
}  // namespace

void ShuffleBottleneck(const DiagnosisInput& input, std::vector<Finding>& out) {
  for (const StageStats& stage : input.stages) {
    const int64_t shuffle_ms = stage.fetch_wait_ms + stage.shuffle_write_ms;
    if (stage.run_time_ms <= 0 || shuffle_ms < kMinShuffleMs) continue;
    const double share = static_cast<double>(shuffle_ms) / stage.run_time_ms;
    if (share < kWarningShare) continue;
    const bool fetch = stage.fetch_wait_ms >= stage.shuffle_write_ms;
    Finding f = NewFinding("shuffle-bottleneck");
    f.confidence = {ConfidenceLevel::kMedium,
                    "fetch wait and shuffle write time are measured per task; whether disks or "
                    "the network limit them is not in the log"};
    f.severity = share >= kCriticalShare ? Severity::kCritical : Severity::kWarning;
    f.stage_ids = {stage.stage_id};
    f.evidence = {
        {"fetch_wait_ms", static_cast<double>(stage.fetch_wait_ms), "ms"},
        {"shuffle_write_ms", static_cast<double>(stage.shuffle_write_ms), "ms"},
        {"run_time_ms", static_cast<double>(stage.run_time_ms), "ms"},
        {"shuffle_share", share, "ratio"},
        {"shuffle_read_bytes", static_cast<double>(stage.shuffle_read_bytes), "bytes"},
        {"shuffle_write_bytes", static_cast<double>(stage.shuffle_write_bytes), "bytes"},
    };
    f.title = "Stage " + std::to_string(stage.stage_id) + " spends " + Fixed(100 * share, 0) +
              "% of task time " + (fetch ? "waiting for shuffle fetches" : "writing shuffle files");
    f.explanation =
        "Tasks of stage " + std::to_string(stage.stage_id) + " (" + stage.name + ") waited " +
        HumanDurationMs(stage.fetch_wait_ms) +
        " for shuffle blocks from other executors and spent " +
        HumanDurationMs(stage.shuffle_write_ms) + " writing shuffle output, " +
        Fixed(100 * share, 0) + "% of their " + HumanDurationMs(stage.run_time_ms) +
        " run time. They read " + HumanBytes(stage.shuffle_read_bytes) + " and wrote " +
        HumanBytes(stage.shuffle_write_bytes) +
        " of shuffle data: the network or the disks of the serving executors are the limit, "
        "not the CPUs.";
    if (fetch) {
      f.recommendations.push_back({"spark.reducer.maxSizeInFlight", "96m",
                                   "twice the 48m default: more blocks in flight per reducer hides "
                                   "network latency when fetch wait dominates"});
      f.recommendations.push_back({"spark.shuffle.io.numConnectionsPerPeer", "2",
                                   "more connections between executor pairs for large shuffles"});
      f.recommendations.push_back(
          {"",
           "shuffle less: broadcast the small side of joins, filter and "
           "project before the shuffle, pre-aggregate",
           "every byte not shuffled is neither written, served nor fetched"});
    } else {
      f.recommendations.push_back(
          {"spark.shuffle.file.buffer", "1m",
           "32x the 32k default: fewer, larger disk writes for shuffle files"});
      f.recommendations.push_back({"spark.shuffle.unsafe.file.output.buffer", "1m",
                                   "the same for the unsafe (Tungsten) shuffle writer"});
    }
    const int64_t parallel = ConcurrentTasks(input, stage.successful_tasks);
    f.impact = TaskTimeSaving({shuffle_ms * 3 / 10, parallel}, {shuffle_ms * 6 / 10, parallel},
                              "30-60% of the stage's shuffle wait and write time, spread over "
                              "its parallel tasks (buffer and in-flight tuning overlap I/O; less "
                              "data removes it)");
    f.cost_ms = f.impact.time_saved_ms_high;
    if (!stage.photon_figures.empty()) {
      f.explanation += " (The " + stage.photon_figures +
                       " figures come from Photon's own SQL metrics: Spark's task metrics are 0 "
                       "for Photon tasks.)";
      f.confidence.reason += "; " + stage.photon_figures + " from Photon's SQL metrics";
    }
    out.push_back(std::move(f));
  }
}

}  // namespace sparkprof::diagnosis::rules
