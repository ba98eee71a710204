// gc-pressure: tasks spend a large share of their run time in JVM garbage collection.
//
// Thresholds and sources (analyzer-facts.md, section c):
//   * GC >= 10% of task run time -> warning: Spark's Executors tab turns GC red above 10%
//     (executorspage.js); Dr. Elephant's ExecutorGc MODERATE level is 10% too.
//   * >= 20% -> critical: Dr. Elephant's CRITICAL level.
//   * when the application's summed run time >= 5 min (Dr. Elephant's floor): below it GC
//     shares are noise from JIT warm-up and small heaps -- unless the short run spent >= 5 s and
//     >= 15% of its task time in GC (ours: a planted small-heap run measures 25-40%).
//   Per executor: every executor whose own share is >= 10% is listed.
// Root cause first: if >= 50% of the GC time sits in the slow tasks of data-skewed stages, the
// finding names skew. Otherwise peak JVM heap (executor metrics, where logged) against
// spark.executor.memory tells a heap that is too small (peak >= 90%, Dr. Elephant/DataFlint use
// 95%/1.2x) from object churn in a heap that has room (code and serializer changes).
#include <algorithm>
#include <map>

#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/rules/skew_assessment.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kWarningShare = 0.10;
constexpr double kCriticalShare = 0.20;
constexpr int64_t kMinRunTimeMs = 5 * 60 * 1000;
constexpr int64_t kShortRunMinGcMs = 5000;
constexpr double kShortRunShare = 0.15;
constexpr double kHeapFullShare = 0.90;
}  // namespace

void GcPressure(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  int64_t gc = 0, run = 0;
  std::map<uint32_t, std::pair<int64_t, int64_t>> by_executor;  // gc, run
  for (const model::TaskAttempt& task : m.tasks) {
    if (!task.has_metrics) continue;
    gc += task.metrics.jvm_gc_time_ms;
    run += task.metrics.executor_run_time_ms;
    auto& [executor_gc, executor_run] = by_executor[task.executor];
    executor_gc += task.metrics.jvm_gc_time_ms;
    executor_run += task.metrics.executor_run_time_ms;
  }
  if (gc <= 0 || run <= 0) return;
  const double share = static_cast<double>(gc) / run;
  // Short runs: only a clear share of real GC time, not warm-up noise.
  if (run < kMinRunTimeMs && (gc < kShortRunMinGcMs || share < kShortRunShare)) return;
  if (share < kWarningShare) return;

  std::vector<std::pair<std::string, double>> hot_executors;
  for (const auto& [executor, gc_run] : by_executor) {
    if (gc_run.second <= 0) continue;
    double executor_share = static_cast<double>(gc_run.first) / gc_run.second;
    if (executor_share >= kWarningShare) {
      hot_executors.push_back(
          {executor == model::kNone ? "?" : m.strings.Get(executor), executor_share});
    }
  }
  std::sort(hot_executors.begin(), hot_executors.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });

  int64_t skew_gc = 0;
  std::vector<int32_t> skewed_stages;
  for (const StageStats& stage : input.stages) {
    if (AssessSkew(stage, input.phases.wall_ms).kind != SkewKind::kData) continue;
    skew_gc += stage.slow_task_gc_ms;
    skewed_stages.push_back(stage.stage_id);
  }
  const double skew_share = static_cast<double>(skew_gc) / gc;

  int64_t heap_peak = 0;
  for (const model::Executor& executor : m.executors) {
    if ((!executor.is_driver() || input.LocalMode()) && executor.peaks.present)
      heap_peak = std::max(heap_peak, executor.peaks.jvm_heap_memory_bytes);
  }
  const char* heap_key = input.TaskHeapKey();  // the driver's in local mode
  const int64_t memory_mib = ParseSizeMiB(input.Property(heap_key, "1g"), 1024);
  const double heap_share =
      heap_peak > 0 ? static_cast<double>(heap_peak) / (memory_mib * 1048576.0) : 0;

  Finding f = NewFinding("gc-pressure");
  f.confidence = {ConfidenceLevel::kHigh,
                  "JVM GC time is measured by every task (Spark's jvmGCTime metric)"};
  f.severity = share >= kCriticalShare ? Severity::kCritical : Severity::kWarning;
  f.evidence = {
      {"gc_time_ms", static_cast<double>(gc), "ms"},
      {"run_time_ms", static_cast<double>(run), "ms"},
      {"gc_share", share, "ratio"},
      {"executors_over_10_percent", static_cast<double>(hot_executors.size()), "count"},
      {"gc_share_in_skewed_tasks", skew_share, "ratio"},
  };
  if (!hot_executors.empty())
    f.evidence.push_back({"worst_executor_gc_share", hot_executors.front().second, "ratio"});
  if (heap_peak > 0) {
    f.evidence.push_back({"peak_jvm_heap_bytes", static_cast<double>(heap_peak), "bytes"});
    f.evidence.push_back({"peak_heap_over_executor_memory", heap_share, "ratio"});
  }
  std::string executors_text;
  for (size_t i = 0; i < hot_executors.size() && i < 5; ++i) {
    executors_text += (i ? ", " : "") + hot_executors[i].first + " (" +
                      Fixed(100 * hot_executors[i].second, 0) + "%)";
  }
  // Where the GC happened: the stages with the most GC time that hold half of it (at most 5),
  // each at >= 10% of its own run time.
  {
    std::vector<std::pair<int64_t, int32_t>> by_stage;
    for (const StageStats& stage : input.stages) {
      if (stage.gc_ms > 0 && stage.run_time_ms > 0 &&
          static_cast<double>(stage.gc_ms) >= kWarningShare * stage.run_time_ms) {
        by_stage.push_back({stage.gc_ms, stage.stage_id});
      }
    }
    std::sort(by_stage.rbegin(), by_stage.rend());
    int64_t covered = 0;
    for (const auto& [stage_gc, stage_id] : by_stage) {
      if (covered * 2 >= gc || f.stage_ids.size() >= 5) break;
      if (std::find(f.stage_ids.begin(), f.stage_ids.end(), stage_id) == f.stage_ids.end()) {
        f.stage_ids.push_back(stage_id);
      }
      covered += stage_gc;
    }
  }
  std::string head =
      "Tasks spent " + HumanDurationMs(gc) + " in garbage collection, " + Fixed(100 * share, 1) +
      "% of their " + HumanDurationMs(run) + " run time (Spark's UI marks over 10% red). " +
      (executors_text.empty() ? std::string() : "Executors over 10%: " + executors_text + ". ");
  if (skew_share >= kRootCauseShare) {
    f.stage_ids = skewed_stages;
    f.title = "GC time comes from skewed tasks, not from a small heap";
    f.explanation =
        head + Fixed(100 * skew_share, 0) +
        "% of the GC time is in the slow tasks of "
        "data-skewed stages, which hold an oversized partition in memory. A bigger heap on "
        "every executor would not help the others; fix the skew (see data-skew).";
    f.recommendations.push_back({"", "fix the data skew (salting, AQE skew join, broadcast)",
                                 "the GC is concentrated in the tasks reading the hot partition"});
  } else if (heap_share >= kHeapFullShare) {
    // Executor peaks cannot be split by task: when skewed tasks hold a fair part of the GC, the
    // full heap may be theirs, so say so before recommending memory.
    if (skew_share >= kRootCauseShare / 2) {
      head += Fixed(100 * skew_share, 0) +
              "% of the GC time is in the slow tasks of data-skewed stages "
              "(see data-skew): fix that first, then re-check the heap. ";
    }
    f.title = "GC pressure: executor heaps are full";
    int64_t cores = input.IntProperty("spark.executor.cores", 0);
    f.explanation = head + "The JVM heap peaked at " + HumanBytes(heap_peak) + ", " +
                    Fixed(100 * heap_share, 0) + "% of " + heap_key + " (" +
                    std::to_string(memory_mib) +
                    " MiB): the heap is too "
                    "small for what the tasks keep alive, so the collector runs again and again.";
    f.recommendations.push_back({heap_key, std::to_string((memory_mib * 3 / 2 + 1023) / 1024) + "g",
                                 "1.5x the current " + std::to_string(memory_mib) +
                                     " MiB (Dr. Elephant's "
                                     "GC step), since the heap peaked at " +
                                     Fixed(100 * heap_share, 0) + "%"});
    if (cores > 1 && !input.LocalMode()) {
      f.recommendations.push_back({"spark.executor.cores",
                                   std::to_string(std::max<int64_t>(1, cores / 2)),
                                   "alternatively halve the concurrent tasks sharing one heap (" +
                                       std::to_string(cores) + " now) at the same memory"});
    }
  } else {
    f.title = "GC pressure from object churn";
    f.explanation = head +
                    (heap_peak > 0 ? "The heap peaked at only " + Fixed(100 * heap_share, 0) +
                                         "% of " + heap_key +
                                         ", so size is not the problem: "
                                         "tasks allocate many short-lived objects. "
                                   : std::string("No heap peaks are logged, so heap size cannot "
                                                 "be checked; high GC with room in the heap "
                                                 "usually means many short-lived objects. ")) +
                    "More memory would not help; fewer allocations would.";
    if (input.Property("spark.serializer", "").find("Kryo") == std::string::npos) {
      f.recommendations.push_back({"spark.serializer", "org.apache.spark.serializer.KryoSerializer",
                                   "Java serialisation allocates far more objects per record"});
    }
    f.recommendations.push_back(
        {"",
         "replace row-by-row UDFs and RDD lambdas that build objects "
         "per record with built-in SQL functions; cache serialized "
         "(MEMORY_ONLY_SER) if caching",
         "built-ins run on Spark's binary rows without per-record objects"});
  }
  // Phase GC (wall share of GC) is what could come back; collectors cannot reach zero.
  f.impact.time_saved_ms_low = input.phases.gc_ms * 3 / 10;
  f.impact.time_saved_ms_high = input.phases.gc_ms * 7 / 10;
  f.impact.core_hours_saved_low = CoreHours(gc * 3 / 10, 1);
  f.impact.core_hours_saved_high = CoreHours(gc * 7 / 10, 1);
  f.impact.method =
      "30-70% of the GC time (wall share from the phase breakdown, task time for "
      "core-hours); a well-sized heap without churn still collects";
  f.cost_ms = input.phases.gc_ms;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
