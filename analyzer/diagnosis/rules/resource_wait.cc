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

namespace {

// What reserves or brings capacity sooner depends on who hands out the containers.
void AddCapacityAdvice(const DiagnosisInput& input, Finding& f) {
  const Platform platform = input.GetPlatform();
  if (platform == Platform::kDatabricks) {
    f.recommendations.push_back(
        {"", "attach the cluster to an instance pool with idle instances (or keep a minimum of "
             "workers running)",
         "Databricks starts executors only when its VMs are up; a pool's idle instances skip "
         "the VM start"});
    return;
  }
  switch (input.Manager()) {
    case ClusterManager::kKubernetes:
      f.recommendations.push_back(
          {"spark.kubernetes.executor.podTemplateFile",
           "<a template with priorityClassName: a high-priority class>",
           "pending executor pods wait for a node; a higher pod priority lets the scheduler "
           "place (or preempt for) them first"});
      f.recommendations.push_back(
          {"", "keep node headroom: cluster-autoscaler over-provisioning (low-priority "
               "placeholder pods) or a pre-warmed node pool, and images pre-pulled on the nodes",
           "on Kubernetes the wait is pod scheduling, node scale-up and the image pull"});
      f.recommendations.push_back(
          {"spark.kubernetes.allocation.batch.size", "20",
           "Spark asks for executor pods 5 at a time by default (every "
           "spark.kubernetes.allocation.batch.delay, 1 s); larger batches request them sooner"});
      break;
    case ClusterManager::kStandalone:
      f.recommendations.push_back(
          {"spark.cores.max", "<at most the Workers' free cores>",
           "a standalone Master gives an application executors only from Workers' free cores; "
           "other applications held them (or Workers registered late)"});
      f.recommendations.push_back(
          {"", "start the Workers before submitting, or give this application its own Workers",
           "nothing in the application's settings makes a busy standalone cluster free cores"});
      break;
    case ClusterManager::kLocal:
      // Executors are threads of the driver: the "wait" is the driver's own start-up and
      // whatever the program did before its first task (reading metadata, building inputs).
      f.recommendations.push_back(
          {"", "profile what the driver program does before its first action",
           "in local mode no cluster manager is involved; the time before the first task is "
           "spent in the driver JVM itself"});
      break;
    case ClusterManager::kYarn:
    case ClusterManager::kMesos:
    case ClusterManager::kUnknown:
      f.recommendations.push_back(
          {"spark.yarn.queue", "<a queue with guaranteed capacity>",
           "the wait happens before Spark runs anything; only capacity reserved for this job "
           "(or a less busy queue/node pool) removes it"});
      if (platform == Platform::kEmr) {
        f.recommendations.push_back(
            {"", "raise the managed-scaling minimum (or the core/task fleet's on-demand "
                 "capacity) for this job's schedule",
             "EMR adds nodes only after YARN reports pending containers"});
      } else if (platform == Platform::kDataproc) {
        f.recommendations.push_back(
            {"", "raise the autoscaling policy's minimum primary/secondary workers for this "
                 "job's schedule",
             "Dataproc scales up only after YARN reports pending memory"});
      }
      break;
  }
}

}  // namespace

void ResourceWait(const DiagnosisInput& input, std::vector<Finding>& out) {
  const PhaseBreakdown& p = input.phases;
  const double share = p.Ratio(p.resource_wait_ms);
  if (p.resource_wait_ms < kMinWaitMs || share < kWarningShare) return;
  Finding f;
  f.rule = "resource-wait";
  f.category = Category::kResourceConfiguration;
  f.confidence = {ConfidenceLevel::kHigh,
                  "measured from the application start to the first executor's registration"};
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
  const std::string platform = PlatformName(input.GetPlatform());
  f.explanation = "The application started, then spent " + Millis(p.resource_wait_ms) + " (" +
                  Fixed(100 * share, 0) + "% of its " + Millis(p.wall_ms) +
                  ") before the first executor registered. Nothing in Spark was slow during that "
                  "time: the cluster manager (" + ClusterManagerName(input.Manager()) +
                  (platform.empty() ? std::string() : " on " + platform) +
                  ") had no room (queue full, nodes scaling up, images pulling). Over the whole "
                  "run, tasks also queued " +
                  Millis(p.starved_task_ms) +
                  " (task time) while every slot was busy: demand beyond the " +
                  std::to_string(p.peak_slots) + " slots.";
  AddCapacityAdvice(input, f);
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
