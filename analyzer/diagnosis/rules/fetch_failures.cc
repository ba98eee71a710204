// fetch-failures: reduce tasks could not fetch map output, so Spark re-ran map stages.
//
// Each FetchFailed task end is classified from its message and from what happened to the executor
// that served the blocks (ExecutorRemoved reasons on the same host):
//   oom          - "OutOfMemoryError" / "Java heap space" in the message
//   killed       - the serving host's executor was removed for memory ("exceeding memory limits",
//                  "OOMKilled", "exit code 137")
//   lost-worker  - "Connection refused", "Failed to connect", "Connection reset", "worker lost",
//                  "disassociated", or any other removal of the serving host's executor
//   timeout      - "timed out" / "timeout" (long GC pauses or an overloaded shuffle server)
//   missing      - "Missing an output location" (map output already gone)
//   other
// Thresholds (ours; analyzer-facts.md notes Dr. Elephant only classifies OOM and YARN kills):
// any fetch failure -> warning (each one re-runs map tasks); >= 10 -> critical.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kCriticalCount = 10;

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}
bool Has(const std::string& text, const char* needle) {
  return text.find(needle) != std::string::npos;
}

std::string Classify(const std::string& message_raw, const std::string& removal_raw) {
  std::string message = Lower(message_raw), removal = Lower(removal_raw);
  if (Has(message, "outofmemory") || Has(message, "java heap space")) return "oom";
  if (Has(removal, "memory limit") || Has(removal, "oomkilled") || Has(removal, "exit code 137"))
    return "killed";
  if (Has(message, "timed out") || Has(message, "timeout")) return "timeout";
  if (Has(message, "missing an output location")) return "missing";
  if (Has(message, "connection refused") || Has(message, "failed to connect") ||
      Has(message, "connection reset") || Has(message, "worker lost") ||
      Has(message, "disassociated") || !removal.empty()) {
    return "lost-worker";
  }
  return "other";
}
}  // namespace

void FetchFailures(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  std::map<std::string, std::string> removal_by_host;
  for (const model::Executor& executor : m.executors) {
    if (executor.removed_time_ms >= 0 && !executor.removed_reason.empty()) {
      removal_by_host[executor.host] = executor.removed_reason;
    }
  }
  std::map<std::string, int64_t> by_class;
  std::set<int32_t> stages;
  std::set<std::string> hosts;
  int64_t count = 0, failed_ms = 0;
  std::string example;
  for (const model::TaskAttempt& task : m.tasks) {
    if (task.end != model::TaskEndKind::kFetchFailed) continue;
    ++count;
    failed_ms += std::max<int64_t>(task.duration_ms(), 0);
    stages.insert(task.stage_id);
    std::string message, host;
    if (task.failure != model::kNone) {
      message = m.task_failures[task.failure].message_head;
      host = m.task_failures[task.failure].fetch_host;
    }
    auto removal = removal_by_host.find(host);
    ++by_class[Classify(message, removal == removal_by_host.end() ? "" : removal->second)];
    if (!host.empty()) hosts.insert(host);
    if (example.empty()) example = message.substr(0, 200);
  }
  if (count == 0) return;
  int64_t failed_stage_attempts = 0;
  for (const auto& [key, stage] : m.stages) {
    if (stage.status == model::StageStatus::kFailed) ++failed_stage_attempts;
  }

  Finding f = NewFinding("fetch-failures");
  f.confidence = {ConfidenceLevel::kHigh,
                  "FetchFailed task ends and the stage attempts they failed, as Spark logged them"};
  f.severity = count >= kCriticalCount ? Severity::kCritical : Severity::kWarning;
  f.stage_ids.assign(stages.begin(), stages.end());
  f.evidence = {
      {"fetch_failures", static_cast<double>(count), "tasks"},
      {"serving_hosts", static_cast<double>(hosts.size()), "count"},
      {"failed_stage_attempts", static_cast<double>(failed_stage_attempts), "count"},
      {"failed_attempt_ms", static_cast<double>(failed_ms), "ms"},
  };
  std::string classes;
  for (const auto& [cls, n] : by_class) {
    f.evidence.push_back({"class_" + cls, static_cast<double>(n), "tasks"});
    classes += (classes.empty() ? "" : ", ") + cls + " x" + std::to_string(n);
  }
  f.title = std::to_string(count) + " shuffle fetch failures (" + classes + ")";
  f.explanation =
      std::to_string(count) + " reduce task attempts could not fetch map output from " +
      std::to_string(hosts.size()) + " host(s) (" + classes + ")" +
      (example.empty() ? std::string(".") : ": \"" + example + "\".") +
      " Each fetch failure makes Spark re-run the map tasks whose output was lost, then "
      "the failed reduce tasks.";
  if (by_class.count("oom") || by_class.count("killed")) {
    int64_t memory_mib = ParseSizeMiB(input.Property("spark.executor.memory", "1g"), 1024);
    int64_t overhead_mib = ParseSizeMiB(input.Property("spark.executor.memoryOverhead", ""),
                                        std::max<int64_t>(384, memory_mib / 10));
    f.recommendations.push_back(
        {"spark.executor.memoryOverhead", std::to_string(overhead_mib + 1024) + "m",
         "the serving executors ran out of memory or were killed for it; "
         "serving shuffle blocks uses off-heap (Netty) memory; +1 GiB over the "
         "current " +
             std::to_string(overhead_mib) + " MiB"});
  }
  if (by_class.count("lost-worker") || by_class.count("killed") || by_class.count("missing")) {
    if (input.Property("spark.shuffle.service.enabled", "false") != "true") {
      f.recommendations.push_back(
          {"spark.shuffle.service.enabled", "true",
           "an external shuffle service keeps map output available when the "
           "executor that wrote it dies, so it is not recomputed"});
    }
    f.recommendations.push_back(
        {"spark.storage.decommission.shuffleBlocks.enabled", "true",
         "with spark.decommission.enabled, migrates shuffle files off executors "
         "that are being removed"});
  }
  if (by_class.count("timeout")) {
    f.recommendations.push_back({"spark.shuffle.io.maxRetries", "10",
                                 "fetches timed out: more retries (default 3) ride out GC pauses "
                                 "on the serving executor"});
    f.recommendations.push_back(
        {"spark.shuffle.io.retryWait", "30s", "longer wait between retries (default 5s)"});
  }
  if (f.recommendations.empty()) {
    f.recommendations.push_back({"",
                                 "read the executor logs of the serving hosts around the failure",
                                 "the fetch error does not match a known cause"});
  }
  f.impact = TaskTimeSaving(
      {failed_ms, input.slots()}, {3 * failed_ms, ConcurrentTasks(input, count)},
      "the failed reduce attempts' time (low, spread over all slots) up to three times "
      "it (high) for the map tasks re-run and the reduce tasks repeated");
  AddCostingItsSaving(std::move(f), out);
}

}  // namespace sparkprof::diagnosis::rules
