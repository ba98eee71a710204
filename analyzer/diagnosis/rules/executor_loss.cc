// executor-loss: executors that went away during the run for reasons other than a normal release.
//
// Classification of ExecutorRemoved reasons (and tasks ended with ExecutorLostFailure):
//   memory  - "exceeding ... memory limits", "OOMKilled", "exit code 137", exit code 52 (Spark's
//             OOM exit), "OutOfMemory": the container outgrew its memory (heap + overhead);
//             Dr. Elephant advises +1 GB overhead. (analyzer/model/failure_causes.h)
//   node    - "worker lost", "disassociated", "heartbeat", "preempt", "decommission"
//             (spot/preemptible nodes, network partitions).
//   other   - any other reason.
//   Benign (not counted): dynamic allocation releases, "explicit termination request", "killed by
//   driver", executors removed at the application end, or after the last task ended with no task
//   failing with them (shutdown, release) unless killed for memory.
// Thresholds (ours): any lost executor -> warning; >= 3 or >= 10% of executors -> critical.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/model/failure_causes.h"

namespace sparkprof::diagnosis::rules {

namespace {

// With the agents' memory readings (profile.memory_use): what each lost executor last reported --
// its container against its limit, its resident set, its Python workers -- so a reader sees which
// part grew before the loss (issue 29).
void AddMemoryBeforeLoss(const DiagnosisInput& input,
                         const std::vector<const model::Executor*>& lost_executors, Finding& f) {
  if (input.profile == nullptr || input.profile->memory_use.empty()) return;
  double max_share = -1;
  uint64_t max_python = 0;
  int described = 0;
  for (const model::Executor* executor : lost_executors) {
    const profile::JvmMemory* jvm = input.profile->memory_use.Find(executor->executor_id);
    if (jvm == nullptr) continue;
    const profile::MemoryReading& last = jvm->last;
    max_python = std::max(max_python, jvm->max_python_rss_bytes);
    std::string text = " Executor " + executor->executor_id + "'s last memory report";
    if (executor->removed_time_ms >= 0 && last.time_ms >= 0 &&
        executor->removed_time_ms >= last.time_ms) {
      text +=
          " (" + HumanDurationMs(executor->removed_time_ms - last.time_ms) + " before its removal)";
    }
    text += ":";
    if (last.container_limit_bytes > 0) {
      const double share = static_cast<double>(last.container_usage_bytes) /
                           static_cast<double>(last.container_limit_bytes);
      max_share = std::max(max_share, share);
      text += " its container at " + HumanBytes(static_cast<int64_t>(last.container_usage_bytes)) +
              " of its " + HumanBytes(static_cast<int64_t>(last.container_limit_bytes)) +
              " limit (" + Percent(share) + "; " +
              HumanBytes(static_cast<int64_t>(last.container_file_bytes)) + " of it page cache),";
    }
    text += " the JVM's resident set " + HumanBytes(static_cast<int64_t>(last.rss_bytes)) +
            " (at most " + HumanBytes(static_cast<int64_t>(jvm->max_rss_bytes)) + " in the run)";
    if (last.python_processes > 0 || jvm->max_python_rss_bytes > 0) {
      text += ", its Python workers " + HumanBytes(static_cast<int64_t>(last.python_rss_bytes)) +
              " in " + std::to_string(last.python_processes) + " processes (at most " +
              HumanBytes(static_cast<int64_t>(jvm->max_python_rss_bytes)) + ")";
    }
    text += ".";
    if (described++ < 3) f.explanation += text;
  }
  if (described == 0) return;
  f.evidence.push_back(
      {"lost_executors_with_memory_reports", static_cast<double>(described), "count"});
  if (max_share >= 0) {
    f.evidence.push_back({"lost_executor_container_usage_share_max", max_share, "ratio"});
  }
  f.evidence.push_back(
      {"lost_executor_python_rss_max_bytes", static_cast<double>(max_python), "bytes"});
}

}  // namespace

void ExecutorLoss(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  std::map<std::string, int64_t> by_class;
  std::string example;
  // An executor removed after the last task ended, with no task failing with it, cost nothing:
  // the shutdown or a dynamic-allocation release, whatever the reason says.
  int64_t last_task_end_ms = -1;
  std::map<std::string, int64_t> lost_failures_by_executor;
  for (const model::TaskAttempt& task : m.tasks) {
    if (task.ended()) last_task_end_ms = std::max(last_task_end_ms, task.finish_time_ms);
    if (task.end == model::TaskEndKind::kExecutorLostFailure && task.executor != model::kNone) {
      ++lost_failures_by_executor[m.strings.Get(task.executor)];
    }
  }
  int64_t executors = 0, lost = 0;
  std::vector<const model::Executor*> lost_executors;
  const ClusterManager manager = input.Manager();
  const bool container_limits = manager != ClusterManager::kStandalone &&
                                manager != ClusterManager::kLocal &&
                                manager != ClusterManager::kLocalCluster;
  for (const model::Executor& executor : m.executors) {
    if (executor.is_driver()) continue;
    ++executors;
    if (executor.removed_time_ms < 0) continue;
    // Removal at the very end is the shutdown, whatever it says.
    if (m.complete && m.end_time_ms >= 0 && executor.removed_time_ms >= m.end_time_ms) continue;
    const char* cls = model::ClassifyRemovalReason(executor.removed_reason, container_limits);
    if (cls == nullptr) continue;
    // After the last task, with no task failing with it: a shutdown, unless it was killed for
    // memory (a sign even when it cost nothing this time).
    if (last_task_end_ms >= 0 && executor.removed_time_ms >= last_task_end_ms &&
        lost_failures_by_executor.count(executor.executor_id) == 0 &&
        std::string(cls) != "memory") {
      continue;
    }
    ++lost;
    ++by_class[cls];
    if (example.empty()) example = executor.removed_reason.substr(0, 200);
    lost_executors.push_back(&executor);
  }
  int64_t lost_tasks = 0, lost_task_ms = 0, resubmitted = 0;
  std::set<int32_t> stages;  // where tasks failed with the executors or had to be recomputed
  for (const model::TaskAttempt& task : m.tasks) {
    if (task.end == model::TaskEndKind::kExecutorLostFailure) {
      ++lost_tasks;
      lost_task_ms += std::max<int64_t>(task.duration_ms(), 0);
      stages.insert(task.stage_id);
    }
    if (task.resubmitted) {
      stages.insert(task.stage_id);
      ++resubmitted;
    }
  }
  if (lost == 0 && lost_tasks == 0) return;
  Finding f = NewFinding("executor-loss");
  f.confidence = {ConfidenceLevel::kHigh,
                  "ExecutorRemoved events and the tasks that failed with ExecutorLostFailure, as "
                  "Spark logged them"};
  f.severity = (lost >= 3 || (executors > 0 && lost * 10 >= executors)) ? Severity::kCritical
                                                                        : Severity::kWarning;
  f.stage_ids.assign(stages.begin(), stages.end());
  f.evidence = {
      {"executors_lost", static_cast<double>(lost), "count"},
      {"executors", static_cast<double>(executors), "count"},
      {"lost_to_memory", static_cast<double>(by_class["memory"]), "count"},
      {"lost_to_node_failure", static_cast<double>(by_class["node"]), "count"},
      {"lost_other", static_cast<double>(by_class["other"]), "count"},
      {"tasks_failed_with_executor", static_cast<double>(lost_tasks), "tasks"},
      {"task_ms_lost", static_cast<double>(lost_task_ms), "ms"},
      {"resubmitted_tasks", static_cast<double>(resubmitted), "tasks"},
  };
  f.title = std::to_string(lost) + " executor(s) lost during the run";
  f.explanation =
      std::to_string(lost) + " of " + std::to_string(executors) +
      " executors were removed before the application ended (" +
      std::to_string(by_class["memory"]) + " for memory, " + std::to_string(by_class["node"]) +
      " node loss, " + std::to_string(by_class["other"]) + " other)" +
      (example.empty() ? std::string(".") : ", e.g. \"" + example + "\".") +
      (lost_tasks > 0 ? " " + std::to_string(lost_tasks) +
                            " running task attempts failed with "
                            "them and their shuffle output had to be recomputed."
                      : std::string(" No running task failed with them, but their cached "
                                    "and shuffle data had to be recomputed if needed again."));
  AddMemoryBeforeLoss(input, lost_executors, f);
  if (by_class["memory"] > 0 && !container_limits) {
    // Standalone/local: no container limit; an executor exiting for memory ran out of heap
    // (exit code 52) or was killed by the host's kernel.
    int64_t memory_mib = ParseSizeMiB(input.Property("spark.executor.memory", "1g"), 1024);
    f.recommendations.push_back(
        {"spark.executor.memory", std::to_string(memory_mib + memory_mib / 2) + "m",
         std::string(manager == ClusterManager::kLocalCluster
                         ? "in local-cluster mode the executors are JVMs on this host and"
                         : "on a standalone cluster") +
             " nothing but the heap limits an executor: it ran out of heap (exit code 52) or the "
             "host ran out of memory; 50% more heap, or fewer executors per host"});
  } else if (by_class["memory"] > 0) {
    int64_t memory_mib = ParseSizeMiB(input.Property("spark.executor.memory", "1g"), 1024);
    int64_t overhead_mib = ParseSizeMiB(input.Property("spark.executor.memoryOverhead", ""),
                                        std::max<int64_t>(384, memory_mib / 10));
    f.explanation +=
        " A container killed for memory grew beyond heap + overhead: off-heap buffers, "
        "Netty, Python workers or native libraries, not the Java heap.";
    f.recommendations.push_back(
        {"spark.executor.memoryOverhead", std::to_string(overhead_mib + 1024) + "m",
         "the current overhead is " + std::to_string(overhead_mib) + " MiB (max(384 MiB, 10% of " +
             std::to_string(memory_mib) +
             " MiB) unless set); +1 GiB is Dr. Elephant's step for containers "
             "killed by the cluster manager"});
  }
  if (by_class["node"] > 0) {
    f.recommendations.push_back({"spark.decommission.enabled", "true",
                                 "on preemptible/spot nodes, lets executors hand over work when a "
                                 "node is reclaimed"});
    f.recommendations.push_back(
        {"spark.storage.decommission.shuffleBlocks.enabled", "true",
         "migrates shuffle files off a leaving node so they are not recomputed"});
  }
  if (f.recommendations.empty()) {
    const bool sigkill = example.find("137") != std::string::npos;
    f.recommendations.push_back(
        {"",
         sigkill ? "find what sent SIGKILL (exit code 137): the host's kernel OOM killer (dmesg, "
                   "the Worker's log) or an operator"
                 : "read the executor logs for the removal reason quoted above",
         sigkill ? "a standalone Worker does not kill its executors for memory; something on the "
                   "host did"
                 : "the reason does not match a known pattern"});
  }
  if (resubmitted > 0 && !container_limits) {
    f.recommendations.push_back(
        {"spark.shuffle.service.enabled", "true",
         std::to_string(resubmitted) +
             " finished map tasks had to run again because their "
             "output died with the executor; the Workers' external shuffle service keeps it"});
  }
  f.impact = TaskTimeSaving(
      {lost_task_ms, input.slots()}, {2 * lost_task_ms, ConcurrentTasks(input, lost_tasks)},
      "the lost task attempts' time (low, spread over all slots) up to twice it for the "
      "recomputed shuffle output (high); the executor start-up time is not counted");
  AddCostingItsSaving(std::move(f), out);
}

}  // namespace sparkprof::diagnosis::rules
