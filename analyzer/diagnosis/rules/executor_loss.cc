// executor-loss: executors that went away during the run for reasons other than a normal release.
//
// Each lost executor's cause comes first, with its numbers (rules/kill_causes.h: the executor's
// heap, its container's memory limit -- a SIGKILL of an executor whose container has a limit,
// the cluster manager's or one the agent read --, Python workers, direct buffers, a full disk),
// and the fix sized from them. Removal reasons are also counted as
//   memory  - any memory cause above (analyzer/model/failure_causes.h);
//   node    - "worker lost", "disassociated", "heartbeat", "preempt", "decommission"
//             (spot/preemptible nodes, network partitions);
//   other   - any other reason (a SIGKILL with no container limit: the host or an operator).
//   Benign (not counted): dynamic allocation releases, "explicit termination request", "killed by
//   driver", executors removed at the application end, or after the last task ended with no task
//   failing with them (shutdown, release) unless killed for memory.
// Thresholds (ours): any lost executor -> warning; >= 3 or >= 10% of executors -> critical.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/kill_causes.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/model/failure_causes.h"

namespace sparkprof::diagnosis::rules {

namespace {

// With the agents' memory readings (profile.memory_use): what each lost executor last reported --
// its container against its limit, its resident set, its Python workers -- so a reader sees which
// part grew before the loss (issue 29).
// described_already: the executor whose readings the cause sentence already gave (not repeated).
void AddMemoryBeforeLoss(const DiagnosisInput& input,
                         const std::vector<const model::Executor*>& lost_executors,
                         const model::Executor* described_already, Finding& f) {
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
    if (executor != described_already && described < 3) f.explanation += text;
    ++described;
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
  std::vector<KillCause> causes;  // of lost_executors, in order
  const bool container_limits = ContainerManagerLimitsMemory(input);
  for (const model::Executor& executor : m.executors) {
    if (executor.is_driver()) continue;
    ++executors;
    if (executor.removed_time_ms < 0) continue;
    // Removal at the very end is the shutdown, whatever it says.
    if (m.complete && m.end_time_ms >= 0 && executor.removed_time_ms >= m.end_time_ms) continue;
    const char* reason_class =
        model::ClassifyRemovalReason(executor.removed_reason, container_limits);
    if (reason_class == nullptr) continue;
    KillCause cause = ExecutorKillCause(input, executor);
    const std::string cls = model::IsMemory(cause.reading.what) ? "memory" : reason_class;
    // After the last task, with no task failing with it: a shutdown, unless it was killed for
    // memory (a sign even when it cost nothing this time).
    if (last_task_end_ms >= 0 && executor.removed_time_ms >= last_task_end_ms &&
        lost_failures_by_executor.count(executor.executor_id) == 0 && cls != "memory") {
      continue;
    }
    ++lost;
    ++by_class[cls];
    lost_executors.push_back(&executor);
    causes.push_back(std::move(cause));
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
  // The cause the finding leads with: the most frequent known one, told by the executor whose
  // readings show it best (the fullest container at its last report; else the first).
  std::map<model::Exhaustion, int64_t> by_cause;
  for (const KillCause& cause : causes) ++by_cause[cause.reading.what];
  const auto rank = [&](const KillCause& c) {
    return std::make_tuple(c.reading.what != model::Exhaustion::kUnknown, by_cause[c.reading.what],
                           MeasuredLimitShare(c));
  };
  const KillCause* lead = causes.empty() ? nullptr : &causes.front();
  for (const KillCause& cause : causes) {
    if (rank(cause) > rank(*lead)) lead = &cause;
  }
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
  const bool known = lead != nullptr && lead->reading.what != model::Exhaustion::kUnknown;
  f.title = std::to_string(lost) + " executor(s) lost during the run";
  if (known) {
    f.title = CauseTitle(lead->reading.what) + ": " + std::to_string(by_cause[lead->reading.what]) +
              " of " + std::to_string(lost) + " lost executor(s)";
  }
  const std::string lead_sentence =
      lead != nullptr ? CauseSentence(input, *lead, f.stage_ids) : std::string();
  f.explanation = lead_sentence.empty() ? "" : lead_sentence + " ";
  const std::string example =
      lead != nullptr ? lead->executor->removed_reason.substr(0, 200) : std::string();
  f.explanation +=
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
  const bool lead_readings_told =
      known && lead->reading.what == model::Exhaustion::kContainerMemory;
  AddMemoryBeforeLoss(input, lost_executors, lead_readings_told ? lead->executor : nullptr, f);
  if (lead != nullptr) AddCauseEvidence(input, *lead, f);
  if (!known || !AddCauseFix(input, *lead, f.stage_ids, f)) {
    if (by_class["node"] > 0) {
      f.recommendations.push_back({"spark.decommission.enabled", "true",
                                   "on preemptible/spot nodes, lets executors hand over work "
                                   "when a node is reclaimed"});
      f.recommendations.push_back(
          {"spark.storage.decommission.shuffleBlocks.enabled", "true",
           "migrates shuffle files off a leaving node so they are not recomputed"});
    }
  }
  if (f.recommendations.empty()) {
    const bool sigkill = lead != nullptr && lead->killed_by_signal();
    f.recommendations.push_back(
        {"",
         sigkill ? "find what sent SIGKILL (exit code 137): the host's kernel OOM killer (dmesg, "
                   "the Worker's log) or an operator"
                 : "read the executor logs for the removal reason quoted above",
         sigkill ? "no container memory limit is known around the executor, and a standalone "
                   "Worker does not kill its executors for memory; something on the host did"
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
