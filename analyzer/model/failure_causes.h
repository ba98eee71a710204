// Why a task or an executor failed, from what Spark logged: the task end reason, the exception
// class and message, and the executor's removal reason. Shared by the rules job-failures (which
// must give the fix for the cause) and executor-loss, and the live driver's executor metrics.
#pragma once

#include <string>

#include "analyzer/model/application_model.h"

namespace sparkprof::model {

enum class FailureCause {
  kNone,         // not a failure of the work (killed speculation loser, commit denied, resubmitted)
  kOutOfMemory,  // java.lang.OutOfMemoryError, a container killed for memory, exit code 52/137
  kFetchFailure,  // shuffle output could not be fetched (its executor or node went away)
  kExecutorLost,  // the executor died or was removed for another reason
  kUserCode,      // an exception thrown by the application's code or its data
};
const char* FailureCauseName(FailureCause cause);  // "out-of-memory", "fetch-failure", ...

// Executor removal reasons: "memory", "node" (worker/node lost, preempted, decommissioned),
// "other", or nullptr for a normal release (dynamic allocation, explicit termination, idle,
// stopped). Exit code 137 is SIGKILL: the kernel's or the container manager's OOM killer in
// practice, but also a kill by hand, so callers say so.
// exit_137_is_memory: on YARN and Kubernetes a SIGKILL is the container's memory limit; on a
// standalone or local cluster nothing enforces one, so 137 there is "other" (the host's OOM
// killer or an operator), unless the reason names memory.
const char* ClassifyRemovalReason(const std::string& reason, bool exit_137_is_memory = true);

// The cause of one failed attempt; executor removal reasons in the model refine
// ExecutorLostFailure (an executor killed for memory is an out-of-memory failure).
FailureCause ClassifyTaskFailure(const ApplicationModel& model, const TaskAttempt& task);

}  // namespace sparkprof::model
