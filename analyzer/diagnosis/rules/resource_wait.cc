// resource-wait: the application waited for executors before any task could run.
//
// Thresholds: no existing tool measures this (analyzer-facts.md, section d.2), so the thresholds
// are ours: resource wait >= 10 s AND >= 5% of wall time is reported. Below 10 s it is normal
// JVM and container start-up. Severity follows the expected saving (severity.h).
// Evidence: the phase breakdown's resource_wait (start until the first slot), the backlog after
// it (wall time with tasks pending and no slot free, the most tasks queued at once), and when
// the log has executor request times (Spark 3.1+, YARN/Kubernetes/dynamic allocation), the
// first executor's start-up (request -> registration) apart from the time before its request.
// What the wait was depends on who starts the executors:
//   * local[N]: none; tasks run in the driver JVM, the wait is the driver's own start-up.
//   * local-cluster[N,C,M] and a standalone cluster whose executors all ran on one host: the
//     executors are JVMs started on that host, no queue: start-up latency (JVM launch, class
//     loading, registration), slower on a busy host.
//   * YARN, Kubernetes, standalone on several hosts: start-up or waiting for capacity; the
//     request times tell them apart when logged, else the words say the log cannot.
#include <algorithm>

#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {

constexpr int64_t kMinWaitMs = 10'000;
constexpr double kWarningShare = 0.05;

// What reserves or brings capacity sooner depends on who hands out the containers.
void AddCapacityAdvice(const DiagnosisInput& input, Finding& f) {
  const Platform platform = input.GetPlatform();
  if (platform == Platform::kDatabricks) {
    f.recommendations.push_back(
        {"",
         "attach the cluster to an instance pool with idle instances (or keep a minimum of "
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
          {"",
           "keep node headroom: cluster-autoscaler over-provisioning (low-priority "
           "placeholder pods) or a pre-warmed node pool, and images pre-pulled on the nodes",
           "on Kubernetes the wait is pod scheduling, node scale-up and the image pull"});
      f.recommendations.push_back(
          {"spark.kubernetes.allocation.batch.size", "20",
           "Spark asks for executor pods 5 at a time by default (every "
           "spark.kubernetes.allocation.batch.delay, 1 s); larger batches request them sooner"});
      break;
    case ClusterManager::kStandalone:
      if (!input.SingleExecutorHost().empty()) {
        f.recommendations.push_back(
            {"",
             "start fewer, larger executors (spark.executor.cores) or keep other work off "
             "the host while they start",
             "the Workers start one JVM per executor on the same host; each loads Spark's "
             "classes before it registers, slower when the host's CPUs are busy"});
        break;
      }
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
    case ClusterManager::kLocalCluster:
      f.recommendations.push_back(
          {"",
           "run with fewer executor JVMs (or local[N], whose tasks run in the driver with no "
           "executor to start), or keep other work off the host while they start",
           "local-cluster starts a Worker and an executor JVM per executor on this host; each "
           "loads Spark's classes before it registers, which takes longer on a busy host"});
      break;
    case ClusterManager::kYarn:
    case ClusterManager::kMesos:
    case ClusterManager::kUnknown:
      f.recommendations.push_back(
          {"spark.yarn.queue", "<a queue with guaranteed capacity>",
           input.Manager() == ClusterManager::kYarn
               ? "the wait happens before Spark runs anything; only capacity reserved for this "
                 "job (or a less busy queue) removes it"
               : "the wait happens before Spark runs anything; only capacity reserved for this "
                 "job (or a less busy queue/node pool) removes it"});
      if (platform == Platform::kEmr) {
        f.recommendations.push_back(
            {"",
             "raise the managed-scaling minimum (or the core/task fleet's on-demand "
             "capacity) for this job's schedule",
             "EMR adds nodes only after YARN reports pending containers"});
      } else if (platform == Platform::kDataproc) {
        f.recommendations.push_back(
            {"",
             "raise the autoscaling policy's minimum primary/secondary workers for this "
             "job's schedule",
             "Dataproc scales up only after YARN reports pending memory"});
      }
      break;
  }
}

// What the cluster manager starts an executor in, and what "no room" means there: a YARN
// NodeManager's container, a Kubernetes pod (images to pull), else either.
const char* ExecutorVessel(ClusterManager manager) {
  switch (manager) {
    case ClusterManager::kYarn:
      return "the container";
    case ClusterManager::kKubernetes:
      return "the pod";
    default:
      return "the container or pod";
  }
}

const char* NoRoomReasons(ClusterManager manager) {
  switch (manager) {
    case ClusterManager::kYarn:
      return "queue at its capacity, no NodeManager with the memory and vcores free, nodes "
             "scaling up";
    case ClusterManager::kKubernetes:
      return "no node with the CPU and memory free, nodes scaling up, images pulling";
    default:
      return "queue full, nodes scaling up, images pulling";
  }
}

// The first executor to register, with its request time when the log has one.
struct FirstExecutor {
  int64_t added_ms = -1;
  int64_t requested_ms = -1;
};

FirstExecutor FirstRegistered(const model::ApplicationModel& m) {
  FirstExecutor first;
  for (const model::Executor& executor : m.executors) {
    if (executor.is_driver() || executor.total_cores <= 0 || executor.added_time_ms < 0) continue;
    if (first.added_ms >= 0 && executor.added_time_ms >= first.added_ms) continue;
    first.added_ms = executor.added_time_ms;
    first.requested_ms = executor.request_time_ms >= 0 && executor.request_time_ms <= first.added_ms
                             ? executor.request_time_ms
                             : -1;
  }
  return first;
}

// What the wait was, in words that fit how this run got its executors (see the header).
std::string WhatTheWaitWas(const DiagnosisInput& input, const FirstExecutor& first,
                           int64_t start_ms) {
  const ClusterManager manager = input.Manager();
  const std::string platform = PlatformName(input.GetPlatform());
  const std::string host = input.SingleExecutorHost();
  if (first.requested_ms >= 0) {
    const int64_t before_request = std::max<int64_t>(first.requested_ms - start_ms, 0);
    const int64_t startup = first.added_ms - first.requested_ms;
    return "The first executor was requested " + HumanDurationMs(before_request) +
           " after the start and registered " + HumanDurationMs(startup) +
           " after its request (the log's request and registration times). " +
           (startup >= before_request
                ? "Most of the wait was executor start-up: from the request to the registration "
                  "the cluster manager (" +
                      std::string(ClusterManagerName(manager)) +
                      (platform.empty() ? std::string() : " on " + platform) +
                      ") found room, started " + ExecutorVessel(manager) + " and its JVM."
                : std::string("Most of the wait came before the driver asked for an executor: "
                              "the driver's own start-up, or dynamic allocation waiting for a "
                              "backlog of tasks."));
  }
  switch (manager) {
    case ClusterManager::kLocal:
      return "In local mode no cluster manager is involved and no executor starts: the tasks "
             "run as threads of the driver, so the time before the first task is the driver "
             "JVM's own start-up and what the program did before its first action.";
    case ClusterManager::kLocalCluster:
      return "In local-cluster mode Spark starts a Worker and an executor JVM per executor on "
             "this host; no cluster manager queues them, so the wait was executor start-up "
             "(JVM launch, class loading, registration), longer when the host's CPUs are busy.";
    case ClusterManager::kStandalone:
      if (!host.empty()) {
        return "The standalone Workers ran every executor on one host (" + host +
               "): the executors are JVMs the Workers start there, so the wait was most likely "
               "executor start-up (JVM launch, class loading, registration), longer when the "
               "host's CPUs are busy; the log has no executor request times to show whether "
               "other applications held the Workers' cores first.";
      }
      break;
    default:
      break;
  }
  return "Nothing in Spark was slow during that time: the cluster manager (" +
         std::string(ClusterManagerName(manager)) +
         (platform.empty() ? std::string() : " on " + platform) + ") had no room (" +
         NoRoomReasons(manager) +
         ") or was slow to start the executors; the log has no executor request times, so "
         "waiting for capacity and start-up cannot be told apart.";
}

}  // namespace

void ResourceWait(const DiagnosisInput& input, std::vector<Finding>& out) {
  const PhaseBreakdown& p = input.phases;
  const double share = p.Ratio(p.resource_wait_ms);
  if (p.resource_wait_ms < kMinWaitMs || share < kWarningShare) return;
  const model::ApplicationModel& m = *input.model;
  const FirstExecutor first = FirstRegistered(m);
  Finding f = NewFinding("resource-wait");
  f.confidence = {ConfidenceLevel::kHigh,
                  "measured from the application start to the first executor's registration"};
  f.severity = Severity::kCritical;  // capped by the expected saving (severity.h)
  const bool local = input.Manager() == ClusterManager::kLocal;
  f.title =
      "Waited " + HumanDurationMs(p.resource_wait_ms) +
      (local ? " before the first task could run" : " for executors before any task could run");
  f.evidence = {
      {"resource_wait_ms", static_cast<double>(p.resource_wait_ms), "ms"},
      {"resource_wait_share", share, "ratio"},
      {"wall_ms", static_cast<double>(p.wall_ms), "ms"},
      {"peak_slots", static_cast<double>(p.peak_slots), "cores"},
      {"backlog_wall_ms", static_cast<double>(p.slot_starved_wall_ms), "ms"},
      {"peak_queued_tasks", static_cast<double>(p.peak_queued_tasks), "tasks"},
  };
  if (first.requested_ms >= 0) {
    f.evidence.push_back({"first_executor_startup_ms",
                          static_cast<double>(first.added_ms - first.requested_ms), "ms"});
    f.evidence.push_back(
        {"first_executor_request_offset_ms",
         static_cast<double>(std::max<int64_t>(first.requested_ms - m.start_time_ms, 0)), "ms"});
  }
  f.explanation = "The application started, then spent " + HumanDurationMs(p.resource_wait_ms) +
                  " (" + Fixed(100 * share, 0) + "% of its " + HumanDurationMs(p.wall_ms) +
                  ") before " +
                  (local ? std::string("its first task ran. ")
                         : std::string("the first executor registered. ")) +
                  WhatTheWaitWas(input, first, m.start_time_ms);
  if (p.slot_starved_wall_ms > 0) {
    f.explanation += " Later, tasks waited for a free slot during " +
                     HumanDurationMs(p.slot_starved_wall_ms) + " (" +
                     Fixed(100 * p.Ratio(p.slot_starved_wall_ms), 0) + "% of the run), at most " +
                     std::to_string(p.peak_queued_tasks) + " of them at once: demand beyond the " +
                     std::to_string(p.peak_slots) + " slots.";
  }
  AddCapacityAdvice(input, f);
  const std::string memory = input.Property("spark.executor.memory", "1g");
  if (!local && ParseSizeMiB(memory, 1024) >= 16 * 1024) {
    f.recommendations.push_back({"spark.executor.memory", memory + " -> smaller executors",
                                 "containers of " + memory +
                                     " find room later than small ones on a "
                                     "busy cluster"});
  }
  f.impact.time_saved_ms_low = 0;
  f.impact.time_saved_ms_high = p.resource_wait_ms;
  f.impact.method =
      "up to the whole wait if executors were ready at submission (capacity reserved, "
      "executors already started); none if they come as late next time (the wait is outside "
      "the application's tasks); no cores were held while waiting";
  f.cost_ms = p.resource_wait_ms;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
