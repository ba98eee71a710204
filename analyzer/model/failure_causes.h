// Why a task or an executor failed, from what Spark logged: the task end reason, the exception
// class, message and root cause, and the executor's removal reason. Shared by the rules
// job-failures (which must give the fix for the cause), task-failures and executor-loss, and the
// live driver's executor metrics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analyzer/model/application_model.h"

namespace sparkprof::model {

enum class FailureCause {
  kNone,         // not a failure of the work (killed speculation loser, commit denied, resubmitted)
  kOutOfMemory,  // a memory ran out (see Exhaustion for which): OutOfMemoryError, a container
                 // killed for memory, exit code 52/137, a Python MemoryError
  kDiskFull,     // "No space left on device" on a local disk
  kFetchFailure,  // shuffle output could not be fetched (its executor or node went away)
  kExecutorLost,  // the executor died or was removed for another reason
  kUserCode,      // an exception thrown by the application's code or its data
};
const char* FailureCauseName(FailureCause cause);  // "out-of-memory", "fetch-failure", ...

// A job ended because its job group was cancelled, not because its work failed: Spark's
// DAGScheduler writes "Job 26 cancelled part of cancelled job group <group>" (SparkContext
// .cancelJobGroup; a streaming query's stop() cancels its run id's group), or, where the
// cancellation gives its reason (Spark 4's StreamExecution.stop), "Job 26 cancelled Query <name>
// [id = <id>, runId = <run id>] was stopped"; either maybe as an error with its class and state
// ("[SPARK_JOB_CANCELLED] Job 2 cancelled ... SQLSTATE: XXKDA", Spark 4.2's event log).
bool IsJobGroupCancellation(std::string_view job_failure_message);

// A streaming batch's job that its query's stop cancelled: the job group (the run id) of a run
// that terminated without an error was cancelled.
bool CancelledByQueryStop(const StreamingModel& streaming, const Job& job);
// A streaming batch's SQL execution that ended with an error because its query stopped: its
// description names a run (Spark describes a batch "<name>\nid = <id>\nrunId = <run id>\nbatch =
// <n>") that terminated without an error, and it ended after the run's last progress.
bool InterruptedByQueryStop(const StreamingModel& streaming, const SqlExecution& sql);

// What ran out when a task failed, an executor was lost or a job was aborted (issue 29), as
// Spark's words name it:
//   executor heap       java.lang.OutOfMemoryError "Java heap space" / "GC overhead limit
//                       exceeded" in a task, or an executor that exited with code 52 (Spark's
//                       exit code after any OutOfMemoryError: the heap unless its tasks said
//                       otherwise);
//   container memory    the cluster manager killed the container for exceeding its memory
//                       limit (YARN's "... beyond the 'PHYSICAL' memory limit", Kubernetes'
//                       OOMKilled) or it exited with 137 (SIGKILL) where a container limit
//                       exists (exit_137_is_memory);
//   Python memory       a MemoryError raised in a Python worker, or a Python worker that exited
//                       without an exception (a process killed by signal, in practice the
//                       kernel's OOM killer choosing the largest process);
//   direct memory       java.lang.OutOfMemoryError "Direct buffer memory", Netty's
//                       OutOfDirectMemoryError (both bounded by the JVM's
//                       -XX:MaxDirectMemorySize, by default the heap's maximum);
//   direct memory below the fetch-to-memory size
//                       an executor that refused to start: Spark's CoarseGrainedExecutorBackend
//                       (3.5 and 4.x, onStart) exits with code 1 when Netty's direct memory
//                       limit (PlatformDependent.maxDirectMemory: -Dio.netty.maxDirectMemory, or
//                       -XX:MaxDirectMemorySize, or the heap's maximum) is below
//                       spark.network.maxRemoteBlockSizeFetchToMem while Netty prefers direct
//                       buffers: "Netty direct memory should at least be bigger than
//                       'spark.network.maxRemoteBlockSizeFetchToMem', but got N bytes < M";
//   driver result size  "Total size of serialized results ... is bigger than
//                       spark.driver.maxResultSize";
//   driver heap         an OutOfMemoryError or "Not enough memory to build and broadcast" on the
//                       driver (a job or query failing without a task failing for it);
//   disk full           "No space left on device".
enum class Exhaustion : uint8_t {
  kUnknown,
  kExecutorHeap,
  kContainerMemory,
  kPythonMemory,
  kDirectMemory,
  kDirectBelowFetchToMem,
  kDriverResultSize,
  kDriverHeap,
  kDiskFull,
};
// "executor-heap", "container-memory", "python-memory", "direct-memory",
// "direct-below-fetch-to-mem", "driver-result-size", "driver-heap", "disk-full", "unknown".
const char* ExhaustionName(Exhaustion what);
// The cause in words a report leads with: "executor heap exhausted", "container memory limit
// exceeded", "Python worker memory exhausted", ...
const char* ExhaustionWords(Exhaustion what);
bool IsMemory(Exhaustion what);  // every kind but disk full and unknown

// What Spark's words say of an exhaustion, with the figures they carry.
struct ExhaustionReading {
  Exhaustion what = Exhaustion::kUnknown;
  int exit_code = -1;  // the executor's exit code ("exited with code 52", "Exit status: 137")
  // YARN's "X of Y physical memory used": the container's use and limit when it was killed; the
  // maxResultSize message: the serialized results counted so far and the limit; the start-up
  // refusal: Netty's direct memory limit and spark.network.maxRemoteBlockSizeFetchToMem.
  int64_t used_bytes = -1;
  int64_t limit_bytes = -1;
  int64_t result_tasks = -1;  // maxResultSize: how many tasks' results were counted
};

// The exit code an executor's loss or removal reason names, -1 when none: "Command exited with
// code 52" (standalone), "Exit status: 137" (YARN), "exit code 137" (Kubernetes).
int ExitCodeIn(std::string_view text);
// One text of Spark's: a removal or loss reason, a task's exception (class, message and root
// cause joined), a job's or a stage's failure message. exit_137_is_memory: on YARN and
// Kubernetes a SIGKILL is the container's memory limit; on a standalone or local cluster nothing
// enforces one, so 137 there stays unknown (the host's OOM killer or an operator), unless the
// words name memory. driver_side: the text comes from the driver (a job or query that failed
// without a task failing for it): an OutOfMemoryError there is the driver's heap.
ExhaustionReading ReadExhaustion(std::string_view text, bool exit_137_is_memory,
                                 bool driver_side = false);

// A failed task attempt's: its exception, or for ExecutorLostFailure its executor's removal.
ExhaustionReading TaskExhaustion(const ApplicationModel& model, const TaskAttempt& task,
                                 bool exit_137_is_memory);
// A lost executor's: its removal reason, refined by the OutOfMemoryError its own tasks reported
// before it exited with 52 (direct buffers rather than the heap).
ExhaustionReading ExecutorExhaustion(const Executor& executor, bool exit_137_is_memory);

// Spark's executor start-up check of Netty's direct memory (Exhaustion::kDirectBelowFetchToMem),
// read from the executors' settings as the JVM and Netty read them:
//   Netty's limit   -Dio.netty.maxDirectMemory=<bytes> when above 0, else the JVM's:
//                   -XX:MaxDirectMemorySize=<size>, else the heap's maximum (at most -Xmx,
//                   spark.executor.memory); the last of a repeated option wins, as in the JVM;
//   the check runs  when Netty prefers direct buffers: spark.shuffle.io.preferDirectBufs (default
//                   true) and no -Dio.netty.noPreferDirect=true;
//   the size        spark.network.maxRemoteBlockSizeFetchToMem (bytes; default 200m in 3.5 and
//                   4.x).
// The check fails when the limit is below the size: with no direct-memory option the heap's
// maximum is at most the heap, so a size at or above the heap fails too.
struct FetchToMemCheck {
  bool checked = false;             // Netty prefers direct buffers: Spark runs the check
  int64_t direct_limit_bytes = -1;  // Netty's limit, -1 when not known
  std::string direct_limit_option;  // "-XX:MaxDirectMemorySize=64m", ""; the heap's maximum
  int64_t fetch_to_mem_bytes = -1;
  bool Fails() const {
    if (!checked || direct_limit_bytes <= 0 || fetch_to_mem_bytes <= 0) return false;
    return direct_limit_option.empty() ? fetch_to_mem_bytes >= direct_limit_bytes
                                       : direct_limit_bytes < fetch_to_mem_bytes;
  }
};
// java_options: spark.executor.defaultJavaOptions then spark.executor.extraJavaOptions, as the
// executor's command line has them; fetch_to_mem and prefer_direct_bufs: the settings as written
// ("" when unset); heap_bytes: spark.executor.memory.
FetchToMemCheck ReadFetchToMemCheck(std::string_view java_options, const std::string& fetch_to_mem,
                                    const std::string& prefer_direct_bufs, int64_t heap_bytes);

// Executor removal reasons: "memory", "node" (worker/node lost, preempted, decommissioned),
// "other", or nullptr for a normal release (dynamic allocation, explicit termination, idle,
// stopped). Memory is any memory Exhaustion of the reason (ReadExhaustion, same
// exit_137_is_memory).
const char* ClassifyRemovalReason(const std::string& reason, bool exit_137_is_memory = true);

// The cause of one failed attempt; executor removal reasons in the model refine
// ExecutorLostFailure (an executor killed for memory is an out-of-memory failure).
FailureCause ClassifyTaskFailure(const ApplicationModel& model, const TaskAttempt& task);

}  // namespace sparkprof::model
