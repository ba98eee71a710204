#include "analyzer/model/failure_causes.h"

#include <cctype>

namespace sparkprof::model {

namespace {
std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}
bool Has(const std::string& text, const char* needle) {
  return text.find(needle) != std::string::npos;
}
bool MentionsMemory(const std::string& lower, bool exit_137_is_memory = true) {
  // Spark's executors exit with 52 (SparkExitCode.OOM) after an OutOfMemoryError; YARN and
  // Kubernetes kill containers that outgrow their limit (137 = SIGKILL, "OOMKilled").
  const bool sigkill = Has(lower, "exit code 137") || Has(lower, "exited with code 137") ||
                       Has(lower, "exit status: 137");
  return Has(lower, "outofmemory") || Has(lower, "memory limit") || Has(lower, "oomkilled") ||
         Has(lower, "physical memory") || Has(lower, "java heap space") ||
         Has(lower, "gc overhead limit") || (exit_137_is_memory && sigkill) ||
         Has(lower, "exit code 52") || Has(lower, "exited with code 52");
}
}  // namespace

const char* FailureCauseName(FailureCause cause) {
  switch (cause) {
    case FailureCause::kNone:
      return "none";
    case FailureCause::kOutOfMemory:
      return "out-of-memory";
    case FailureCause::kFetchFailure:
      return "fetch-failure";
    case FailureCause::kExecutorLost:
      return "executor-lost";
    case FailureCause::kUserCode:
      return "user-code";
  }
  return "none";
}

const char* ClassifyRemovalReason(const std::string& reason_raw, bool exit_137_is_memory) {
  const std::string reason = Lower(reason_raw);
  if (reason.empty() || Has(reason, "dynamic allocation") || Has(reason, "explicit termination") ||
      Has(reason, "killed by driver") || Has(reason, "stopped") || Has(reason, "idle")) {
    return nullptr;
  }
  if (MentionsMemory(reason, exit_137_is_memory)) return "memory";
  if (Has(reason, "worker lost") || Has(reason, "disassociated") || Has(reason, "heartbeat") ||
      Has(reason, "preempt") || Has(reason, "decommission") || Has(reason, "lost worker")) {
    return "node";
  }
  return "other";
}

FailureCause ClassifyTaskFailure(const ApplicationModel& model, const TaskAttempt& task) {
  switch (task.end) {
    case model::TaskEndKind::kSuccess:
    case model::TaskEndKind::kNotEnded:
    case model::TaskEndKind::kTaskKilled:
    case model::TaskEndKind::kResubmitted:
    case model::TaskEndKind::kTaskCommitDenied:
      return FailureCause::kNone;
    case model::TaskEndKind::kFetchFailed:
      return FailureCause::kFetchFailure;
    default:
      break;
  }
  const model::TaskFailure* failure =
      task.failure != model::kNone ? &model.task_failures[task.failure] : nullptr;
  std::string text;
  if (failure != nullptr) text = Lower(failure->exception_class + " " + failure->message_head);
  if (task.end == model::TaskEndKind::kExecutorLostFailure) {
    if (MentionsMemory(text)) return FailureCause::kOutOfMemory;
    const std::string& executor_id =
        failure != nullptr && !failure->lost_executor_id.empty()
            ? failure->lost_executor_id
            : (task.executor != model::kNone ? model.strings.Get(task.executor) : std::string());
    if (const model::Executor* executor = model.FindExecutor(executor_id)) {
      const char* removal = ClassifyRemovalReason(executor->removed_reason);
      if (removal != nullptr && std::string(removal) == "memory") return FailureCause::kOutOfMemory;
    }
    return FailureCause::kExecutorLost;
  }
  if (MentionsMemory(text)) return FailureCause::kOutOfMemory;
  if (Has(text, "fetchfailed")) return FailureCause::kFetchFailure;
  return FailureCause::kUserCode;
}

}  // namespace sparkprof::model
