#include "analyzer/diagnosis/rules/rules.h"

#include <algorithm>

namespace sparkprof::diagnosis::rules {
namespace {

// In evaluation order (Diagnose ranks the findings afterwards). A row without a function is a rule
// the function of the row above it also evaluates (one pass over the same figures).
constexpr Rule kRules[] = {
    {"job-failures", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/slow-spark-jobs.md", JobFailures},
    {"data-skew", Category::kDataDistribution, "docs/recipes/troubleshoot/data-skew-diagnosis.md",
     DataSkew},
    {"straggler", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/data-skew-diagnosis.md", nullptr},
    {"spill", Category::kResourceConfiguration, "docs/recipes/troubleshoot/oom-and-spill.md",
     Spill},
    {"gc-pressure", Category::kResourceConfiguration, "docs/recipes/troubleshoot/gc-pressure.md",
     GcPressure},
    {"task-failures", Category::kAlgorithmic, "docs/recipes/troubleshoot/slow-spark-jobs.md",
     TaskFailures},
    {"executor-loss", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/oom-and-spill.md", ExecutorLoss},
    {"resource-wait", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/resource-wait-long.md", ResourceWait},
    {"io-write-bound", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/s3-write-slow.md", IoWriteBound},
    {"small-files", Category::kDataDistribution, "docs/recipes/troubleshoot/s3-write-slow.md",
     nullptr},
    {"too-few-partitions", Category::kDataDistribution,
     "docs/recipes/troubleshoot/shuffle-bottleneck.md", TooFewPartitions},
    {"too-many-small-tasks", Category::kDataDistribution,
     "docs/recipes/troubleshoot/shuffle-bottleneck.md", TooManySmallTasks},
    {"shuffle-bottleneck", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/shuffle-bottleneck.md", ShuffleBottleneck},
    {"driver-bound", Category::kAlgorithmic, "docs/recipes/troubleshoot/slow-spark-jobs.md",
     DriverBound},
    {"idle-executors", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/slow-spark-jobs.md", IdleExecutors},
    {"scheduler-overhead", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/slow-spark-jobs.md", SchedulerOverhead},
    {"fetch-failures", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/shuffle-bottleneck.md", FetchFailures},
    {"speculation-waste", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/data-skew-diagnosis.md", SpeculationWaste},
    {"broadcast-join-missed", Category::kAlgorithmic,
     "docs/recipes/troubleshoot/slow-spark-jobs.md", PlanJoins},
    {"broadcast-too-large", Category::kAlgorithmic, "docs/recipes/troubleshoot/oom-and-spill.md",
     nullptr},
    {"nested-loop-join", Category::kAlgorithmic, "docs/recipes/troubleshoot/slow-spark-jobs.md",
     nullptr},
    {"exploding-join", Category::kAlgorithmic, "docs/recipes/troubleshoot/slow-spark-jobs.md",
     nullptr},
    {"full-scan", Category::kAlgorithmic, "docs/recipes/troubleshoot/slow-spark-jobs.md", FullScan},
    {"python-udf", Category::kAlgorithmic, "docs/recipes/troubleshoot/slow-spark-jobs.md",
     PythonUdf},
    {"cache-misuse", Category::kAlgorithmic, "docs/recipes/troubleshoot/oom-and-spill.md",
     CacheMisuse},
    {"serialization-bound", Category::kAlgorithmic,
     "docs/recipes/troubleshoot/serialization-bound.md", SerializationBound},
    {"python-bound", Category::kAlgorithmic, "docs/recipes/troubleshoot/python-bound.md",
     PythonBound},
    {"per-task-overhead", Category::kDataDistribution, "docs/recipes/troubleshoot/python-bound.md",
     PerTaskOverhead},
    {"io-wait-bound", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/io-wait-bound.md", IoWaitBound},
    {"lock-contention", Category::kAlgorithmic, "docs/recipes/troubleshoot/lock-contention.md",
     LockContention},
    {"cpu-oversubscription", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/cpu-oversubscription.md", CpuOversubscription},
    {"hot-user-code", Category::kAlgorithmic, "docs/recipes/troubleshoot/hot-user-code.md",
     HotUserCode},
    {"falling-behind", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/structured-streaming.md", FallingBehind},
    {"batch-over-trigger", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/structured-streaming.md", BatchOverTrigger},
    {"batch-overhead", Category::kDataDistribution,
     "docs/recipes/troubleshoot/structured-streaming.md", BatchOverhead},
    {"state-growth", Category::kAlgorithmic, "docs/recipes/troubleshoot/structured-streaming.md",
     StateGrowth},
    {"slow-source", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/structured-streaming.md", SlowBatchStep},
    {"slow-commit", Category::kResourceConfiguration,
     "docs/recipes/troubleshoot/structured-streaming.md", nullptr},
    {"state-skew", Category::kDataDistribution, "docs/recipes/troubleshoot/structured-streaming.md",
     StateSkew},
};

}  // namespace

std::span<const Rule> AllRules() { return kRules; }

const Rule* FindRule(std::string_view id) {
  const Rule* end = std::end(kRules);
  const Rule* rule =
      std::find_if(std::begin(kRules), end, [&](const Rule& r) { return r.id == id; });
  return rule != end ? rule : nullptr;
}

void SetRule(Finding& f, std::string_view id) {
  f.rule = id;
  if (const Rule* rule = FindRule(id)) {
    f.category = rule->category;
    f.recipe = rule->recipe;
  }
}

Finding NewFinding(std::string_view id) {
  Finding f;
  SetRule(f, id);
  return f;
}

}  // namespace sparkprof::diagnosis::rules
