// Why an executor died or a job failed for want of memory or disk (issue 29), told the same way
// by the three failure rules (job-failures, task-failures, executor-loss): the cause first, with
// the numbers that show it, and the fix sized from those numbers.
//
// The cause is what Spark's words name (model::ReadExhaustion: exit codes, exception messages
// and root causes, removal reasons, analyzer/model/failure_causes.h), refined by the lost JVM's
// last memory readings where the agent measured it: a SIGKILL (exit code 137) of a JVM whose
// container has a memory limit is that limit -- the kernel's OOM killer sends SIGKILL when a
// memory cgroup cannot reclaim below its limit -- even where no cluster manager enforces one
// (a standalone Worker run in a container); without a limit it stays unknown (the host's OOM
// killer or an operator). Then by the lost JVM's own log (sparkprof analyze --logs,
// analyzer/executor_logs): where Spark's words name no memory -- an exit code alone ("Command
// exited with code 137", or 52, which Spark uses after any OutOfMemoryError) -- the log's
// OutOfMemoryError, Python MemoryError, container or kernel kill names it, and the finding says
// which file, line and time showed it. Spark's own words, when they name a memory, are kept.
//
// The fix follows from how each memory is bounded (first principles, no fitted thresholds):
//  * executor heap: a task's working set outgrew its share of the heap. More partitions split
//    rows, never a group: with a collecting aggregate (collect_list, collect_set) in the failed
//    stage's plan one group's values are one object in one task -- aggregate what is needed or
//    salt the key; a stage whose largest task read far more than its median (data skew, as
//    skew_assessment.h judges it, or >= 4x the median read) -- split the hot partition; else
//    smaller partitions of what the stage reads (shuffle or files, or the code's own partition
//    count); then 50% more heap, since nothing measured how much more the task needed. The
//    heap is the executors' (spark.executor.memory), the driver's only in local mode.
//  * container memory: Spark sizes a YARN or Kubernetes container as heap + memoryOverhead
//    (max(384 MiB, spark.executor.memoryOverheadFactor 10% of the heap) unless set) + off-heap
//    (when enabled) + spark.executor.pyspark.memory (when set); the overhead is its documented
//    allowance for the JVM's native memory. A kill proves the process outgrew it: the overhead
//    becomes 25% (the headroom, stated) above the larger of the current overhead and what the
//    agent measured outside those budgets (peak resident set + Python workers - heap - off-heap -
//    pyspark memory). Where the container is not Spark's (a standalone Worker in a cgroup), the
//    same sum plus the other processes the container held must fit its limit: the off-heap pool
//    (or else the heap) shrinks to what is left, or the limit grows to the sum.
//  * Python memory: spark.executor.pyspark.memory is split evenly among the executor's Python
//    workers (one per task slot) as their address-space limit; a MemoryError under it says the
//    UDF needs more than its share and nothing more: the setting doubles, or the UDF holds less.
//    Without the setting, a worker killed by the OOM killer gets a limit sized 25% above the
//    measured Python peak.
//  * direct memory: -XX:MaxDirectMemorySize (by default the heap's maximum) bounds NIO buffers:
//    twice it, and fewer shuffle bytes in flight when the stage fetches a shuffle.
//  * direct memory below the fetch-to-memory size: Spark's executor (CoarseGrainedExecutorBackend,
//    3.5 and 4.x) refuses to start, exit code 1 after registering and before any task, when
//    Netty's direct memory is below spark.network.maxRemoteBlockSizeFetchToMem (a remote block up
//    to that size is fetched into memory whole). Its log says so; where no log was read, an
//    executor that exited with code 1 in an application where no executor ran a task, under
//    settings that fail the same check (model::ReadFetchToMemCheck), is given this cause as
//    inferred (lower confidence). The fix:
//    -XX:MaxDirectMemorySize 25% above the fetch-to-memory size (Netty's pools share the memory
//    with the block), or that size lowered to the direct limit less what a task fetches at once
//    (spark.reducer.maxSizeInFlight), when that leaves any.
//  * driver result size: the limit was passed by `result_tasks` of the stage's tasks, so all of
//    them would send about used / result_tasks x tasks: collect less, or maxResultSize 25% above
//    that estimate and driver memory grown by twice it (serialized results and the rows decoded
//    from them are held at once).
//  * driver heap: 50% more driver memory, and less gathered on the driver. A job that failed
//    while the driver got its tasks' results (Spark's "Exception while getting task result", a
//    task ending TaskResultLost: the driver could not fetch or read a result) is the driver's heap
//    when its results could not fit: all the stage's tasks would send about (results received /
//    tasks received) x tasks, and a collect holds the serialized results and the rows decoded
//    from them at once, twice that, which is at least the driver's heap (spark.driver.memory;
//    said as inferred, with the figures). Any other cause of such a failure (a class mismatch
//    between driver and executors also says "unread block data") leaves the results small. The
//    fix: less gathered on the driver, else the driver memory it had plus twice the results (as
//    for the result size), and spark.driver.maxResultSize where it set no limit below the heap.
//  * disk full: the stage's shuffle and spill bytes must fit spark.local.dir.
#pragma once

#include <span>
#include <string>

#include "analyzer/diagnosis/diagnosis_input.h"
#include "analyzer/diagnosis/finding.h"
#include "analyzer/model/failure_causes.h"

namespace sparkprof::executor_logs {
struct LogHit;  // analyzer/executor_logs/log_hits.h
}  // namespace sparkprof::executor_logs

namespace sparkprof::diagnosis::rules {

struct KillCause {
  model::ExhaustionReading reading;            // reading.what: the cause, refined by the readings
  std::string words;                           // Spark's words that show it (bounded)
  const model::Executor* executor = nullptr;   // the lost executor, when one is named
  const profile::JvmMemory* memory = nullptr;  // that JVM's memory readings, when measured
  const model::TaskAttempt* task = nullptr;    // the failed attempt, when one is named
  const executor_logs::LogHit* log = nullptr;  // the lost JVM's log line that shows the cause
  bool cause_from_log = false;                 // reading.what came from that line
  bool log_agrees = false;                     // that line names the cause Spark's words name
  // The cause read from the settings, not from words: an executor's start-up refusal whose exit
  // code alone is in the event log. Said so, with lower confidence.
  bool inferred_from_settings = false;
  int64_t executors_alike = 0;  // RefusedStartCause: how many executors were refused so
  // DriverResultsCause: the result stage's task count (reading.used_bytes and result_tasks: the
  // results received and their tasks; limit_bytes: the driver's heap).
  int64_t stage_tasks = -1;
  bool killed_by_signal() const { return reading.exit_code == 137; }
};

// The lost JVM's container use over its limit at its last reading; -1 when not measured.
double MeasuredLimitShare(const KillCause& cause);

// On YARN and Kubernetes a SIGKILL of an executor is its container's memory limit.
bool ContainerManagerLimitsMemory(const DiagnosisInput& input);

KillCause ExecutorKillCause(const DiagnosisInput& input, const model::Executor& executor);
KillCause TaskKillCause(const DiagnosisInput& input, const model::TaskAttempt& task);
// A job's or a query's message with no failed task to read (maxResultSize aborts kill the
// tasks); driver_side: an out-of-memory there is the driver's.
KillCause MessageKillCause(const DiagnosisInput& input, const std::string& message,
                           bool driver_side);

// A job that ran no task because its executors refused to start (Exhaustion::
// kDirectBelowFetchToMem): the first executor refused so, with executors_alike counting them; an
// unknown cause when none was.
KillCause RefusedStartCause(const DiagnosisInput& input);

// A job that failed while the driver got the results of `stage` (its failure message, or a task
// that ended TaskResultLost): the driver's heap when the results could not fit in it, else an
// unknown cause.
KillCause DriverResultsCause(const DiagnosisInput& input, const model::StageAttempt& stage,
                             const std::string& message);

// The cause as a title starts: "Executor heap exhausted", "Container memory limit exceeded".
std::string CauseTitle(model::Exhaustion what);
// The sentence a finding leads with: "Executor heap exhausted: ..." with the numbers.
// stage_ids: the stages the failure happened in (GC share, what they read and wrote).
std::string CauseSentence(const DiagnosisInput& input, const KillCause& cause,
                          std::span<const int32_t> stage_ids);
// Evidence with the figures of the cause (exit code, limit, use, heap, results).
void AddCauseEvidence(const DiagnosisInput& input, const KillCause& cause, Finding& f);
// The fix for the cause, sized from the figures; appended to f.recommendations. Returns false
// (and adds nothing) for an unknown cause, whose fix the caller knows.
bool AddCauseFix(const DiagnosisInput& input, const KillCause& cause,
                 std::span<const int32_t> stage_ids, Finding& f);

}  // namespace sparkprof::diagnosis::rules
