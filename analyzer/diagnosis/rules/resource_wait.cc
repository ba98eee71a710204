// resource-wait: the application waited for executors before any task could run.
//
// Thresholds: no existing tool measures this (analyzer-facts.md, section d.2), so the thresholds
// are ours: resource wait >= 10 s AND >= 5% of wall time -> warning; >= 25% -> critical. Below 10 s
// it is normal JVM and container start-up.
// Evidence: the phase breakdown's resource_wait (start until the first slot) and starved task time
// (pending tasks with no free slot, during the whole run).
#include <algorithm>

#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kMinWaitMs = 10'000;
constexpr double kWarningShare = 0.05;
constexpr double kCriticalShare = 0.25;
}  // namespace

void ResourceWait(const DiagnosisInput& input, std::vector<Finding>& out) {
  const PhaseBreakdown& p = input.phases;
  const double share = p.Ratio(p.resource_wait_ms);
  if (p.resource_wait_ms < kMinWaitMs || share < kWarningShare) return;
  Finding f;
  f.rule = "resource-wait";
  f.severity = share >= kCriticalShare ? Severity::kCritical : Severity::kWarning;
  f.recipe = "docs/recipes/troubleshoot/resource-wait-long.md";
  f.title = "Waited " + Millis(p.resource_wait_ms) + " for executors before any task could run";
  f.evidence = {
      {"resource_wait_ms", static_cast<double>(p.resource_wait_ms), "ms"},
      {"resource_wait_share", share, "ratio"},
      {"starved_task_ms", static_cast<double>(p.starved_task_ms), "ms"},
      {"wall_ms", static_cast<double>(p.wall_ms), "ms"},
      {"peak_slots", static_cast<double>(p.peak_slots), "cores"},
  };
  const std::string memory = input.Property("spark.executor.memory", "1g");
  f.explanation = "The application started, then spent " + Millis(p.resource_wait_ms) + " (" +
                  Fixed(100 * share, 0) + "% of its " + Millis(p.wall_ms) +
                  ") before the first executor registered. Nothing in Spark was slow during that "
                  "time: the cluster manager had no room (queue full, nodes scaling up, images "
                  "pulling). Over the whole run, tasks also queued " +
                  Millis(p.starved_task_ms) +
                  " (task time) while every slot was busy: demand beyond the " +
                  std::to_string(p.peak_slots) + " slots.";
  f.recommendations.push_back(
      {"spark.yarn.queue", "<a queue with guaranteed capacity>",
       "the wait happens before Spark runs anything; only capacity "
       "reserved for this job (or a less busy queue/node pool) removes it"});
  if (ParseSizeMiB(memory, 1024) >= 16 * 1024) {
    f.recommendations.push_back({"spark.executor.memory", memory + " -> smaller executors",
                                 "containers of " + memory +
                                     " find room later than small ones on a "
                                     "busy cluster"});
  }
  f.impact.time_saved_ms_low = 0;
  f.impact.time_saved_ms_high = p.resource_wait_ms;
  f.impact.method =
      "up to the whole wait if capacity were there at submission; none if the queue "
      "stays as busy (the wait is outside Spark); no cores were held while waiting";
  f.cost_ms = p.resource_wait_ms;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
