// spill: a stage's tasks ran out of execution memory and wrote to disk.
//
// Thresholds and sources (analyzer-facts.md, section c):
//   * disk spill >= 100 MB (0.1 GB) -> warning, >= 1 GB -> critical: pstysz/spark-advisor.
//   * or spill (memory) / bytes read >= 0.1 -> warning, >= 0.5 -> critical: Dr. Elephant (tuning
//     branch) grades spill/io 0.01/0.1/0.25/0.5; we start at its MODERATE level.
//   The ratio levels need >= 256 MiB of memory spill (or the disk floor) to count: ours, so toy
//   stages do not raise alarms. Zero spill never fires.
// Root cause first: when the stage is data-skewed and >= 50% of its spill sits in the slow tasks,
// the finding names skew and recommends skew fixes, not more memory for every executor.
// The fix divides what the stage reads (shuffle partitions, file splits, or the code's own
// partition count when it reads neither) and only then grows the memory the sort used: the heap,
// or the off-heap pool when spark.memory.offHeap.enabled puts execution memory there.
// Impact: spilled bytes are written and read back once; at 100-400 MB/s per task (local disk,
// serialisation included) spread over the stage's parallelism.
#include <algorithm>
#include <cmath>

#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/rules/skew_assessment.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kMB = 1000 * 1000;
constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kWarningDiskBytes = 100 * kMB;
constexpr int64_t kCriticalDiskBytes = 1000 * kMB;
constexpr double kWarningSpillRatio = 0.1;
constexpr double kCriticalSpillRatio = 0.5;
constexpr int64_t kMinRatioSpillBytes = 256 * kMiB;
}  // namespace

void Spill(const DiagnosisInput& input, std::vector<Finding>& out) {
  for (const StageStats& stage : input.stages) {
    const int64_t spill = stage.memory_spill_bytes + stage.disk_spill_bytes;
    if (spill <= 0) continue;
    const int64_t read = stage.input_bytes + stage.shuffle_read_bytes;
    const double spill_ratio = read > 0 ? static_cast<double>(stage.memory_spill_bytes) / read : 0;
    // The ratio levels only count once the spill itself is worth time (>= 256 MiB in memory or
    // the 100 MB disk floor): a 15 MiB spill in a toy stage is 2x its input and still costs
    // nothing.
    const bool sizeable = stage.memory_spill_bytes >= kMinRatioSpillBytes ||
                          stage.disk_spill_bytes >= kWarningDiskBytes;
    bool warn = stage.disk_spill_bytes >= kWarningDiskBytes ||
                (sizeable && spill_ratio >= kWarningSpillRatio);
    if (!warn) continue;
    bool critical = stage.disk_spill_bytes >= kCriticalDiskBytes ||
                    (sizeable && spill_ratio >= kCriticalSpillRatio);

    SkewAssessment skew = AssessSkew(stage, input.phases.wall_ms);
    const double slow_share = static_cast<double>(stage.slow_task_spill_bytes) / spill;
    const bool skew_is_cause = skew.kind == SkewKind::kData && slow_share >= kRootCauseShare;

    Finding f = NewFinding("spill");
    f.confidence = {ConfidenceLevel::kHigh,
                    "memory and disk bytes spilled are Spark's own task metrics"};
    f.severity = critical ? Severity::kCritical : Severity::kWarning;
    f.stage_ids = {stage.stage_id};
    f.evidence = {
        {"memory_spill_bytes", static_cast<double>(stage.memory_spill_bytes), "bytes"},
        {"disk_spill_bytes", static_cast<double>(stage.disk_spill_bytes), "bytes"},
        {"bytes_read", static_cast<double>(read), "bytes"},
        {"spill_over_read", spill_ratio, "ratio"},
        {"spill_share_in_slow_tasks", slow_share, "ratio"},
        {"slow_tasks", static_cast<double>(stage.slow_tasks), "tasks"},
        {"successful_tasks", static_cast<double>(stage.successful_tasks), "tasks"},
        {"peak_execution_memory_max", static_cast<double>(stage.peak_execution_memory_max),
         "bytes"},
    };
    if (stage.executor_execution_memory_peak > 0) {
      f.evidence.push_back({"executor_execution_memory_peak",
                            static_cast<double>(stage.executor_execution_memory_peak), "bytes"});
    }
    const int64_t parallel =
        std::max<int64_t>(1, std::min<int64_t>(input.slots(), stage.successful_tasks));
    int64_t io_ms_low = static_cast<int64_t>(2.0 * stage.disk_spill_bytes / (400.0 * kMB) * 1000);
    int64_t io_ms_high = static_cast<int64_t>(2.0 * stage.disk_spill_bytes / (100.0 * kMB) * 1000);
    std::string head =
        "Stage " + std::to_string(stage.stage_id) + " (" + stage.name + ") spilled " +
        HumanBytes(stage.memory_spill_bytes) + " of in-memory data (" +
        HumanBytes(stage.disk_spill_bytes) + " on disk) while reading " + HumanBytes(read) +
        ". Spilling means a task's sort or aggregation buffer did not fit in its share "
        "of execution memory, so it was written to local disk and read back. ";
    if (skew_is_cause) {
      f.title = "Spill in stage " + std::to_string(stage.stage_id) + " is caused by data skew";
      f.explanation =
          head + Fixed(100.0 * slow_share, 0) + "% of it came from " +
          std::to_string(stage.slow_tasks) + " of " + std::to_string(stage.successful_tasks) +
          " tasks, the ones holding the oversized partition (" + Fixed(skew.bytes_ratio) +
          "x the median bytes). The other tasks fit in "
          "memory: giving every executor more memory would cost memory everywhere and "
          "still leave the hot partition too large. Fix the skew (see data-skew).";
      if (stage.shuffle_read_bytes > 0) {
        f.recommendations.push_back(
            {"spark.sql.adaptive.skewJoin.enabled", "true",
             "splits the oversized partition so no single task has to hold it"});
        f.recommendations.push_back({"", "salt the hot key or broadcast the smaller side",
                                     "the spill is in the skewed tasks only; evening the "
                                     "partitions removes it without more memory"});
      } else {
        f.recommendations.push_back(
            {"", "rewrite the input as evenly sized, splittable files (Parquet/ORC; no gzip)",
             "the stage reads files, not a shuffle: the oversized input split is one large or "
             "unsplittable file, which AQE's skew handling (shuffles only) cannot split"});
      }
      f.impact.method =
          "spilled bytes written and read back once at 100-400 MB/s within the "
          "skewed tasks, capped at the skew tail (part of the data-skew finding's "
          "saving, not in addition to it)";
      // The spill I/O sits inside the skew tail the data-skew finding already counts: never more,
      // so the root cause sorts before (or level with, and then ahead of) this symptom.
      const int64_t tail_ms = std::max<int64_t>(stage.max_task_ms - stage.median_task_ms, 0);
      f.impact.time_saved_ms_low = std::min(io_ms_low, tail_ms);
      f.impact.time_saved_ms_high = std::min(io_ms_high, tail_ms);
      f.impact.core_hours_saved_low = CoreHours(io_ms_low, 1);
      f.impact.core_hours_saved_high = CoreHours(io_ms_high, 1);
    } else {
      f.title = "Stage " + std::to_string(stage.stage_id) +
                " spills: tasks need more memory than "
                "their share";
      // Factor by which each task's data must shrink so its buffers fit: spilled / peak held.
      double need = stage.peak_execution_memory_max > 0 && stage.successful_tasks > 0
                        ? static_cast<double>(stage.memory_spill_bytes) / stage.successful_tasks /
                              stage.peak_execution_memory_max
                        : 1.0;
      int64_t factor = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(1.0 + need)), 2, 8);
      f.explanation = head + "The spill is spread over the stage's tasks (" +
                      Fixed(100.0 * slow_share, 0) +
                      "% in slow tasks), so the partitions are too "
                      "large for the memory per task. Cutting each partition by " +
                      std::to_string(factor) +
                      "x (from the spilled bytes against the peak "
                      "execution memory a task held) lets them sort and aggregate in memory.";
      if (stage.shuffle_read_bytes > 0) {
        int64_t current = input.IntProperty("spark.sql.shuffle.partitions", 200);
        if (current <= 0) current = 200;
        current = std::min<int64_t>(current, int64_t{1} << 30);  // a hostile property
        // In double: a hostile log's byte counts may be near INT64_MAX.
        const double data_bytes = static_cast<double>(stage.shuffle_read_bytes) +
                                  static_cast<double>(stage.memory_spill_bytes);
        int64_t by_size = static_cast<int64_t>(
            std::min(std::ceil(data_bytes / (128.0 * kMiB)), static_cast<double>(INT32_MAX)));
        if (input.AqeCoalesces()) {
          // AQE merged the shuffle's partitions into this stage's tasks: the task count, not the
          // shuffle partition setting, is what to multiply, and the advisory size sets it.
          const int64_t want = std::max<int64_t>({int64_t{stage.num_tasks} * factor, by_size, 1});
          const int64_t advisory_mib = std::max<int64_t>(1, stage.shuffle_read_bytes / want / kMiB);
          f.recommendations.push_back(
              {"spark.sql.adaptive.advisoryPartitionSizeInBytes",
               std::to_string(advisory_mib) + "m",
               "AQE is on and merged the shuffle into " + std::to_string(stage.num_tasks) +
                   " tasks of about " +
                   HumanBytes(stage.shuffle_read_bytes / std::max(stage.num_tasks, 1)) + "; " +
                   HumanBytes(stage.shuffle_read_bytes) + " / " + std::to_string(want) + " (" +
                   std::to_string(factor) +
                   "x the tasks, and at most 128 MiB of read + spilled data per task) keeps each "
                   "task's buffers in memory"});
          if (current < want) {
            f.recommendations.push_back(
                {"spark.sql.shuffle.partitions", std::to_string(want),
                 "AQE only merges partitions, so the shuffle must start with at least " +
                     std::to_string(want) + " (" + std::to_string(current) + " now)"});
          }
        } else {
          int64_t target = std::max(current * factor, by_size);
          f.recommendations.push_back(
              {"spark.sql.shuffle.partitions", std::to_string(target),
               "this stage read " + HumanBytes(stage.shuffle_read_bytes) + " in " +
                   std::to_string(stage.num_tasks) + " tasks and spilled; " +
                   std::to_string(factor) + "x the current " + std::to_string(current) +
                   " partitions (and at least 128 MiB per partition of read + spilled data) keeps "
                   "each task's buffers in memory"});
        }
      } else if (stage.input_bytes > 0) {
        int64_t target_mib = std::max<int64_t>(16, 128 / factor);
        f.recommendations.push_back(
            {"spark.sql.files.maxPartitionBytes", std::to_string(target_mib) + "m",
             "this stage scans files and spilled; input splits of " + std::to_string(target_mib) +
                 " MiB instead of 128 MiB give each task " + std::to_string(factor) +
                 "x less data"});
      } else {
        f.recommendations.push_back(
            {"",
             "split the stage's input into " + std::to_string(factor) +
                 "x more partitions (numPartitions of spark.range or parallelize, or "
                 "repartition before the sort or aggregation)",
             "this stage reads neither a shuffle nor files: its partition count is the code's"});
      }
      if (input.Property("spark.memory.offHeap.enabled", "false") == "true") {
        // Execution memory is then the off-heap pool: that is what the sort filled.
        const int64_t off_heap_mib =
            ParseSizeMiB(input.Property("spark.memory.offHeap.size", "0"), 0);
        if (off_heap_mib > 0) {
          f.recommendations.push_back(
              {"spark.memory.offHeap.size",
               std::to_string(off_heap_mib * std::min<int64_t>(factor, 2)) + "m",
               "only if repartitioning is not possible: with spark.memory.offHeap.enabled the "
               "tasks' execution memory is the " +
                   std::to_string(off_heap_mib) +
                   " MiB off-heap pool, not the heap; the executor's container must hold the "
                   "larger pool too"});
        }
      } else {
        const char* heap_key = input.TaskHeapKey();
        int64_t memory_mib = ParseSizeMiB(input.Property(heap_key, "1g"), 1024);
        f.recommendations.push_back(
            {heap_key, std::to_string(memory_mib * std::min<int64_t>(factor, 2) / 1024) + "g",
             "only if repartitioning is not possible: " + std::to_string(memory_mib) +
                 " MiB now; " +
                 (input.LocalMode()
                      ? std::string("in local mode the tasks run in the driver, so its heap is "
                                    "the one that counts (set it at launch: --driver-memory)")
                      : std::string("more heap per task slot also removes spill, at a memory "
                                    "cost on every executor"))});
      }
      f.impact.method =
          "spilled bytes written and read back once at 100-400 MB/s per task, spread "
          "over the stage's parallel tasks";
      f.impact.time_saved_ms_low =
          std::min<int64_t>(io_ms_low / parallel, std::max<int64_t>(stage.duration_ms, 0));
      f.impact.time_saved_ms_high =
          std::min<int64_t>(io_ms_high / parallel, std::max<int64_t>(stage.duration_ms, 0));
      f.impact.core_hours_saved_low = CoreHours(io_ms_low, 1);
      f.impact.core_hours_saved_high = CoreHours(io_ms_high, 1);
    }
    f.cost_ms = f.impact.time_saved_ms_high;
    if (!stage.photon_figures.empty()) {
      f.explanation += " (The " + stage.photon_figures +
                       " figures come from Photon's own SQL metrics: Spark's task metrics are 0 "
                       "for Photon tasks.";
      if (stage.photon_figures.find("peak memory") != std::string::npos) {
        f.explanation +=
            " A task's peak memory is the sum of its Photon operators' peaks, an "
            "upper bound: the operators' peaks need not coincide.";
        if (stage.photon_peak_memory_largest_operator_max > 0) {
          f.explanation +=
              " By its largest operator's peak instead (a lower bound; the figure "
              "spark-rapids-tools reports), a task held at most " +
              HumanBytes(stage.photon_peak_memory_largest_operator_max) + ".";
        }
      }
      f.explanation += ")";
      f.confidence.reason += "; " + stage.photon_figures + " from Photon's SQL metrics";
    }
    out.push_back(std::move(f));
  }
}

}  // namespace sparkprof::diagnosis::rules
