#include "analyzer/diagnosis/rules/kill_causes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <utility>

#include "analyzer/diagnosis/rules/skew_assessment.h"
#include "analyzer/eventlog/event_parser.h"
#include "analyzer/executor_logs/executor_logs.h"
#include "analyzer/model/spark_values.h"

namespace sparkprof::diagnosis::rules {

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr double kHeadroom = 1.25;  // 25% above the figure a size is taken from

int64_t RoundUpMiB(double mib, int64_t step = 64) {
  const auto whole = static_cast<int64_t>(std::ceil(std::max(mib, 1.0)));
  return (whole + step - 1) / step * step;
}
int64_t RoundDownMiB(int64_t mib, int64_t step = 64) { return mib / step * step; }
std::string MiBSetting(int64_t mib) { return std::to_string(mib) + "m"; }
std::string MiBText(int64_t mib) { return HumanBytes(mib * kMiB); }

// What the executor's settings give each memory, in MiB (Spark's defaults where unset).
struct ExecutorBudget {
  std::string heap_key;  // spark.executor.memory; spark.driver.memory in local mode
  int64_t heap_mib = 1024;
  int64_t overhead_mib = 384;  // set, or max(384 MiB, factor x heap)
  bool overhead_set = false;
  int64_t off_heap_mib = 0;  // 0 unless spark.memory.offHeap.enabled
  int64_t pyspark_mib = 0;   // 0 unless spark.executor.pyspark.memory is set
  int64_t cores = 1;         // task slots: Python workers, heap shares
};

ExecutorBudget BudgetOf(const DiagnosisInput& input, const model::Executor* executor) {
  ExecutorBudget b;
  b.heap_key = input.TaskHeapKey();
  b.heap_mib = ParseSizeMiB(input.Property(b.heap_key.c_str(), "1g"), 1024);
  const std::string overhead = input.Property("spark.executor.memoryOverhead", "");
  double factor = input.NumberProperty("spark.executor.memoryOverheadFactor", 0.1);
  if (!(factor > 0 && factor < 10)) factor = 0.1;
  b.overhead_set = !overhead.empty();
  b.overhead_mib = b.overhead_set
                       ? ParseSizeMiB(overhead, 384)
                       : std::max<int64_t>(384, static_cast<int64_t>(factor * b.heap_mib));
  if (input.Property("spark.memory.offHeap.enabled", "false") == "true") {
    b.off_heap_mib = ParseSizeMiB(input.Property("spark.memory.offHeap.size", "0"), 0);
  }
  b.pyspark_mib = ParseSizeMiB(input.Property("spark.executor.pyspark.memory", ""), 0);
  int64_t cores = input.IntProperty("spark.executor.cores", 0);
  if (cores <= 0 && executor != nullptr) cores = executor->total_cores;
  b.cores = std::max<int64_t>(cores, 1);
  return b;
}

const StageStats* LastAttempt(const DiagnosisInput& input, int32_t stage_id) {
  const StageStats* found = nullptr;
  for (const StageStats& s : input.stages) {
    if (s.stage_id == stage_id && (found == nullptr || s.attempt >= found->attempt)) found = &s;
  }
  return found;
}

// A collecting aggregate in the plan of a job that ran one of the stages: "collect_list" or
// "collect_set", "" when none. Such an aggregate holds every value of a group as one object.
std::string CollectingAggregate(const DiagnosisInput& input, std::span<const int32_t> stage_ids) {
  const model::ApplicationModel& m = *input.model;
  for (const auto& entry : m.jobs) {
    const auto& job = entry.second;  // not a structured binding: clang 14 cannot capture one
    if (job.sql_execution_id < 0) continue;
    const bool runs_stage = std::any_of(stage_ids.begin(), stage_ids.end(), [&job](int32_t id) {
      return std::find(job.stage_ids.begin(), job.stage_ids.end(), id) != job.stage_ids.end();
    });
    if (!runs_stage) continue;
    for (const SqlPlan& plan : input.plans) {
      if (plan.sql().execution_id != job.sql_execution_id) continue;
      for (const eventlog::PlanNode& node : plan.nodes()) {
        for (const char* function : {"collect_list(", "collect_set("}) {
          if (node.simple_string.find(function) != std::string::npos) {
            return std::string(function, std::strlen(function) - 1);
          }
        }
      }
    }
  }
  return "";
}

bool Skewed(const DiagnosisInput& input, const StageStats& stage) {
  return AssessSkew(stage, input.phases.wall_ms).kind == SkewKind::kData ||
         (stage.median_read_bytes > 0 && stage.max_task_read_bytes > 4 * stage.median_read_bytes);
}

std::string Who(const KillCause& c) {
  if (c.task != nullptr && c.task->end != model::TaskEndKind::kExecutorLostFailure) {
    return "task " + std::to_string(c.task->index) + " of stage " +
           std::to_string(c.task->stage_id);
  }
  if (c.executor != nullptr) return "executor " + c.executor->executor_id;
  if (c.task != nullptr) return "the executor of task " + std::to_string(c.task->index);
  return "the executor";
}

// The JVM's last reading, split: what the container held besides this JVM and its Python
// workers (page cache apart), never below zero.
int64_t OtherProcessesBytes(const profile::MemoryReading& last) {
  const uint64_t known = last.rss_bytes + last.python_rss_bytes + last.container_file_bytes;
  const uint64_t other =
      last.container_usage_bytes > known ? last.container_usage_bytes - known : 0;
  return static_cast<int64_t>(std::min<uint64_t>(other, uint64_t{1} << 62));
}

bool MeasuredLimit(const KillCause& c) {
  return c.memory != nullptr && c.memory->last.container_limit_bytes > 0;
}

// Whether Spark's own words (the removal reason, the task's report of an OutOfMemoryError) name
// the memory, not only an exit code.
bool WordsNameTheMemory(const KillCause& c) {
  if (c.executor != nullptr && !c.executor->out_of_memory_message.empty()) return true;
  std::string lower = c.words;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return lower.find("memory") != std::string::npos || lower.find("space") != std::string::npos ||
         lower.find("oomkilled") != std::string::npos ||
         lower.find("memoryerror") != std::string::npos;
}

// A SIGKILL is the limit when the container has one (the manager's, or the agent read one); the
// lost JVM's own log names what an exit code alone does not.
void Refine(const DiagnosisInput& input, KillCause& c) {
  if (c.executor != nullptr && input.profile != nullptr) {
    c.memory = input.profile->memory_use.Find(c.executor->executor_id);
  }
  if (c.reading.what == model::Exhaustion::kUnknown && c.killed_by_signal() && MeasuredLimit(c)) {
    c.reading.what = model::Exhaustion::kContainerMemory;
  }
  // A task's own exception is exact; the log speaks for a JVM that died.
  const bool jvm_died =
      c.task == nullptr || c.task->end == model::TaskEndKind::kExecutorLostFailure;
  if (input.logs == nullptr || c.executor == nullptr || !jvm_died) return;
  c.log = input.logs->CauseFor(c.executor->executor_id);
  if (c.log == nullptr) return;
  const model::ExhaustionReading from_log =
      executor_logs::ReadingOf(*c.log, c.executor->is_driver());
  c.log_agrees = c.reading.what == from_log.what;
  if (WordsNameTheMemory(c)) return;  // Spark's words stand; the line is quoted beside them
  c.cause_from_log = !c.log_agrees;
  c.log_agrees = true;
  c.reading.what = from_log.what;
  if (from_log.used_bytes > 0) {
    c.reading.used_bytes = from_log.used_bytes;
    c.reading.limit_bytes = from_log.limit_bytes;
  }
  if (c.reading.exit_code < 0) c.reading.exit_code = from_log.exit_code;
}

// " Its log names the cause ...: worker-1/app-1/0/stderr line 61 at 26/11/29 16:32:22: java...".
std::string LogSentence(const KillCause& c) {
  if (c.log == nullptr) return "";
  const executor_logs::LogHit& hit = *c.log;
  std::string text = c.cause_from_log ? " Its log names the cause, where the event log gives only "
                                        "an exit code: "
                     : c.log_agrees   ? " Its log agrees: "
                                      : " Its log also says: ";
  text += hit.file + " line " + std::to_string(hit.line);
  if (!hit.time.empty()) text += " at " + hit.time;
  text += ": " + std::string(executor_logs::TextAfterTime(hit));
  if (hit.count > 1) {
    text += " (" + std::to_string(hit.count) + " times" +
            (hit.last_time.empty() ? std::string() : ", the last at " + hit.last_time) + ")";
  }
  return text + ".";
}

// The innermost cause when Spark recorded one (a Python traceback's "MemoryError", a Java
// "Caused by"), else the exception and its message.
std::string FailureWords(const model::TaskFailure& failure) {
  if (!failure.root_cause.empty()) return failure.root_cause.substr(0, 300);
  const std::string words = failure.exception_class.empty()
                                ? failure.message_head
                                : failure.exception_class + ": " + failure.message_head;
  return words.substr(0, 300);
}

std::string GcShareText(const DiagnosisInput& input, std::span<const int32_t> stage_ids) {
  int64_t gc = 0, run = 0;
  for (int32_t id : stage_ids) {
    if (const StageStats* s = LastAttempt(input, id)) gc += s->gc_ms, run += s->run_time_ms;
  }
  if (run <= 0 || gc <= 0) return "";
  return "; the stage's tasks spent " + Percent(static_cast<double>(gc) / run) +
         " of their run time in GC before it";
}

// "task 2 of stage 0 threw java.lang.OutOfMemoryError: Java heap space", "executor 1 exited
// with code 52 after java.lang.OutOfMemoryError: Java heap space".
std::string WhatHappened(const KillCause& c) {
  if (c.task != nullptr && c.task->end != model::TaskEndKind::kExecutorLostFailure) {
    return Who(c) + " threw " + c.words;
  }
  if (c.reading.exit_code < 0) return Who(c) + ": " + c.words;
  std::string text = Who(c) + " exited with code " + std::to_string(c.reading.exit_code);
  if (c.executor != nullptr && !c.executor->out_of_memory_message.empty()) {
    text += " after java.lang.OutOfMemoryError: " + c.executor->out_of_memory_message;
  } else if (c.reading.exit_code == 52) {
    text += " (Spark's exit code after an OutOfMemoryError)";
  }
  return text;
}

std::string HeapSentence(const DiagnosisInput& input, const KillCause& c,
                         std::span<const int32_t> stage_ids) {
  const ExecutorBudget b = BudgetOf(input, c.executor);
  std::string text = input.LocalMode() ? "Heap exhausted: " : "Executor heap exhausted: ";
  text += WhatHappened(c) + ", with " + MiBText(b.heap_mib) + " of heap (" + b.heap_key + ")";
  if (input.LocalMode()) {
    text += " in the driver's JVM, which runs the tasks in local mode";
  } else if (b.cores > 1) {
    text += " shared by " + std::to_string(b.cores) + " task slots (" +
            MiBText(b.heap_mib / b.cores) + " each)";
  }
  return text + GcShareText(input, stage_ids) + ".";
}

// What the JVM's own accounts (agents that send them) say its resident set held at the reading:
// " (heap 300.0 MiB in use of 512.0 MiB committed, Spark's execution memory 700.0 MiB off the
// heap, direct buffers 8.0 MiB, metaspace 60.0 MiB)"; "" without them.
std::string JvmAccounts(const profile::MemoryReading& last, const ExecutorBudget& b) {
  if (last.heap_committed_bytes == 0) return "";
  auto bytes = [](uint64_t value) { return HumanBytes(static_cast<int64_t>(value)); };
  std::string text = " (heap " + bytes(last.heap_used_bytes) + " in use of " +
                     bytes(last.heap_committed_bytes) + " committed";
  if (last.spark_execution_bytes > 0) {
    text += ", Spark's execution memory " + bytes(last.spark_execution_bytes) +
            (b.off_heap_mib > 0 ? " off the heap" : "");
  }
  return text + ", direct buffers " + bytes(last.direct_buffer_bytes) + ", metaspace " +
         bytes(last.metaspace_used_bytes) + ")";
}

std::string ContainerSentence(const DiagnosisInput& input, const KillCause& c) {
  const ExecutorBudget b = BudgetOf(input, c.executor);
  std::string text = "Container memory limit exceeded: " + Who(c) + " was killed";
  if (c.reading.exit_code >= 0) {
    text += " (exit code " + std::to_string(c.reading.exit_code) +
            (c.killed_by_signal() ? ", SIGKILL" : "") + ")";
  }
  if (c.reading.used_bytes > 0 && c.reading.limit_bytes > 0) {
    text += " with " + HumanBytes(c.reading.used_bytes) + " of its " +
            HumanBytes(c.reading.limit_bytes) + " limit in use";
  } else if (c.reading.used_bytes > 0) {
    text += " by the kernel's OOM killer in its memory cgroup, " +
            HumanBytes(c.reading.used_bytes) + " resident";
  }
  if (MeasuredLimit(c)) {
    const profile::MemoryReading& last = c.memory->last;
    const int64_t limit = static_cast<int64_t>(last.container_limit_bytes);
    const int64_t usage = static_cast<int64_t>(last.container_usage_bytes);
    text += " in a container with a " + HumanBytes(limit) + " memory limit; its last report";
    if (c.executor != nullptr && c.executor->removed_time_ms >= last.time_ms && last.time_ms >= 0) {
      text += ", " + HumanDurationMs(c.executor->removed_time_ms - last.time_ms) + " before,";
    }
    text += " had " + HumanBytes(usage) + " of it in use (" +
            Percent(static_cast<double>(usage) / static_cast<double>(limit)) + "): the JVM " +
            HumanBytes(static_cast<int64_t>(last.rss_bytes)) + " resident with at most " +
            MiBText(b.heap_mib) + " of heap" + JvmAccounts(last, b) + ", its Python workers " +
            HumanBytes(static_cast<int64_t>(last.python_rss_bytes)) + ", other processes " +
            HumanBytes(OtherProcessesBytes(last)) + ", page cache " +
            HumanBytes(static_cast<int64_t>(last.container_file_bytes));
  }
  text += ". Its settings: heap " + MiBText(b.heap_mib);
  if (b.off_heap_mib > 0) text += " + off-heap " + MiBText(b.off_heap_mib);
  if (b.pyspark_mib > 0) text += " + Python " + MiBText(b.pyspark_mib);
  text += ", and Spark allows " + MiBText(b.overhead_mib) + " more for the JVM's native memory (" +
          (b.overhead_set ? std::string("spark.executor.memoryOverhead")
                          : std::string("max(384 MiB, 10% of the heap)")) +
          ").";
  if (ContainerManagerLimitsMemory(input)) {
    text +=
        " Spark sized the container from these, so what grew was outside the heap's limit: "
        "off-heap and direct buffers, Netty, Python workers, native libraries.";
  }
  return text;
}

// What the executor's memory cgroup counted of the kernel's OOM killer while its JVM reported
// (memory.events / memory.oom_control oom_kill; "" when not measured): a worker killed at the
// container's limit leaves the JVM alive to count it; none counted up to a report after the
// failure says the OOM killer did not end it (cgroup v2 counts every OOM killer's kills in the
// cgroup, the host's too; v1 only its own limit's, so v1 says nothing of a kill it did not see).
std::string OomKillSentence(const KillCause& c) {
  if (c.memory == nullptr || !c.memory->last.container_oom_kills_counted) return "";
  const profile::JvmMemory& m = *c.memory;
  const uint64_t kills = m.oom_kills();
  if (kills > 0) {
    std::string text = " The kernel's OOM killer ended " + std::to_string(kills) +
                       " process(es) in executor " + m.executor_id +
                       "'s memory cgroup while it ran (its oom_kill count";
    if (m.first_oom_kill_at_ms >= 0) {
      text += ", the first between " + FormatEpochMs(m.first_oom_kill_before_ms) + " and " +
              FormatEpochMs(m.first_oom_kill_at_ms);
    }
    text += ")";
    if (m.last.container_limit_bytes > 0) {
      text += ", whose limit is " + HumanBytes(static_cast<int64_t>(m.last.container_limit_bytes)) +
              " (at most " + HumanBytes(static_cast<int64_t>(m.max_container_bytes)) + " in use)";
    }
    return text + ": the container's memory, not a crash.";
  }
  const int64_t failed_ms = c.task != nullptr ? c.task->finish_time_ms : -1;
  if (failed_ms < 0 || m.last.time_ms < failed_ms || m.last.cgroup_version != 2) return "";
  return " Executor " + m.executor_id +
         "'s memory cgroup counted no OOM kill up to its report at " +
         FormatEpochMs(m.last.time_ms) +
         ", after the failure: the kernel's OOM killer did not end the worker (a crash in native "
         "code, a signal from elsewhere, or the host's memory outside the container).";
}

std::string PythonSentence(const DiagnosisInput& input, const KillCause& c) {
  const ExecutorBudget b = BudgetOf(input, c.executor);
  std::string text = "Python worker memory exhausted: ";
  if (c.task != nullptr && c.task->end != model::TaskEndKind::kExecutorLostFailure) {
    text += "the Python worker of " + Who(c) + " failed with " + c.words;
  } else {
    text += Who(c) + ": " + c.words;
  }
  if (b.pyspark_mib > 0) {
    text += ", under spark.executor.pyspark.memory=" + MiBSetting(b.pyspark_mib) +
            ", the address-space limit Spark splits among the executor's " +
            std::to_string(b.cores) + " Python worker(s): " + MiBText(b.pyspark_mib / b.cores) +
            " each";
  } else {
    text +=
        ", with no spark.executor.pyspark.memory: nothing but the host or the container "
        "bounded the worker";
  }
  if (c.memory != nullptr && c.memory->max_python_rss_bytes > 0) {
    text += "; the executor's Python workers held at most " +
            HumanBytes(static_cast<int64_t>(c.memory->max_python_rss_bytes)) + " resident";
  }
  return text + "." + OomKillSentence(c);
}

// -XX:MaxDirectMemorySize=<size> in the executors' Java options (the last, as the JVM takes it),
// in MiB; 0 when not set.
int64_t MaxDirectMemoryMiB(const DiagnosisInput& input) {
  // The options are held here: the value found is a view into them.
  const std::string options = input.Property("spark.executor.extraJavaOptions", "");
  const std::optional<std::string_view> value =
      model::LastJavaOptionValue(options, "-XX:MaxDirectMemorySize=");
  return value ? ParseSizeMiB(std::string(*value), 0) : 0;
}

// The executors' direct memory against spark.network.maxRemoteBlockSizeFetchToMem, as their JVM
// and Netty read the settings.
model::FetchToMemCheck ExecutorFetchToMemCheck(const DiagnosisInput& input) {
  const std::string options = input.Property("spark.executor.defaultJavaOptions", "") + " " +
                              input.Property("spark.executor.extraJavaOptions", "");
  const int64_t heap_mib = ParseSizeMiB(input.Property("spark.executor.memory", "1g"), 1024);
  return model::ReadFetchToMemCheck(
      options, input.Property("spark.network.maxRemoteBlockSizeFetchToMem", ""),
      input.Property("spark.shuffle.io.preferDirectBufs", ""), heap_mib * kMiB);
}

// Whether any task ran on an executor (not the driver of local mode). Returns at the first such
// task, so asking it for each lost executor stays cheap on any log.
bool AnyTaskOnAnExecutor(const model::ApplicationModel& m) {
  for (const model::TaskAttempt& task : m.tasks) {
    if (task.executor != model::kNone && m.strings.Get(task.executor) != "driver") return true;
  }
  return false;
}

// An executor that exited with code 1, under settings that fail Spark's start-up check of its
// direct memory, in an application where no executor ran a task (none could have, with these
// settings; if one did, the settings are not what its executors ran with): refused at start-up,
// though no words say so.
void InferStartupRefusal(const DiagnosisInput& input, KillCause& c) {
  if (c.reading.what != model::Exhaustion::kUnknown || c.reading.exit_code != 1 ||
      c.executor == nullptr || c.executor->is_driver() || input.LocalMode()) {
    return;
  }
  const model::FetchToMemCheck check = ExecutorFetchToMemCheck(input);
  if (!check.Fails() || AnyTaskOnAnExecutor(*input.model)) return;
  c.reading.what = model::Exhaustion::kDirectBelowFetchToMem;
  c.reading.used_bytes = check.direct_limit_bytes;
  c.reading.limit_bytes = check.fetch_to_mem_bytes;
  c.inferred_from_settings = true;
}

// Netty's direct limit and the fetch-to-memory size of a refusal: the log's figures, else the
// settings'.
std::pair<int64_t, int64_t> RefusalFigures(const DiagnosisInput& input, const KillCause& c) {
  const model::FetchToMemCheck check = ExecutorFetchToMemCheck(input);
  return {c.reading.used_bytes > 0 ? c.reading.used_bytes : check.direct_limit_bytes,
          c.reading.limit_bytes > 0 ? c.reading.limit_bytes : check.fetch_to_mem_bytes};
}

std::string RefusalSentence(const DiagnosisInput& input, const KillCause& c) {
  const model::FetchToMemCheck check = ExecutorFetchToMemCheck(input);
  const auto [direct, fetch] = RefusalFigures(input, c);
  std::string text = CauseTitle(c.reading.what) + ": " + Who(c) +
                     " exited with code 1 at start-up, before running any task";
  if (c.executors_alike > 1) {
    text += " (" + std::to_string(c.executors_alike) + " executors were refused so)";
  }
  text += ": its JVM gives Netty " + (direct > 0 ? HumanBytes(direct) : std::string("less")) +
          " of direct memory (" +
          (check.direct_limit_option.empty()
               ? std::string("no direct-memory option: the heap's maximum")
               : check.direct_limit_option + " in the executors' Java options") +
          "), less than spark.network.maxRemoteBlockSizeFetchToMem" +
          (fetch > 0 ? " (" + HumanBytes(fetch) + ")" : std::string()) +
          (input.Property("spark.network.maxRemoteBlockSizeFetchToMem", "").empty()
               ? ", Spark's default,"
               : "") +
          " and Spark's executor refuses to start below it: a remote block up to that size is "
          "fetched into direct memory whole.";
  if (c.inferred_from_settings) {
    text +=
        " The event log gives only the exit code: this cause is inferred from the settings, "
        "which fail Spark's check (the executor's own log says \"Netty direct memory should at "
        "least be bigger than 'spark.network.maxRemoteBlockSizeFetchToMem'\": read it with "
        "--logs).";
  }
  return text;
}

// What all of a result stage's tasks would have sent the driver: the mean of those received.
int64_t AllResultsBytes(const KillCause& c) {
  if (c.reading.used_bytes <= 0 || c.reading.result_tasks <= 0 || c.stage_tasks <= 0) return -1;
  return static_cast<int64_t>(std::min(
      static_cast<double>(c.reading.used_bytes) / static_cast<double>(c.reading.result_tasks) *
          static_cast<double>(std::max(c.stage_tasks, c.reading.result_tasks)),
      1e15));
}

std::string DriverResultsSentence(const DiagnosisInput& input, const KillCause& c) {
  const int64_t all = AllResultsBytes(c);
  const std::string limit = input.Property("spark.driver.maxResultSize", "1g");
  const int64_t limit_bytes = model::ParseSizeBytes(limit, 1);
  std::string text =
      "Driver heap exhausted: the driver failed while getting the tasks' results "
      "(" +
      c.words + "): the " + std::to_string(c.reading.result_tasks) +
      " result(s) it had received came to " + HumanBytes(c.reading.used_bytes) +
      " serialized, about " + HumanBytes(all) + " for all " + std::to_string(c.stage_tasks) +
      " tasks, and a collect holds them and the rows decoded from them at once "
      "(about twice that) in a " +
      HumanBytes(c.reading.limit_bytes) + " heap (spark.driver.memory)";
  if (limit_bytes == 0) {
    text +=
        "; spark.driver.maxResultSize=0 set no limit that would have stopped the collect "
        "first";
  } else if (limit_bytes > 0 && limit_bytes >= all) {
    text += "; spark.driver.maxResultSize (" + HumanBytes(limit_bytes) +
            ") is above the results, so it did not stop the collect first";
  }
  if (!c.inferred_from_settings) return text + ".";
  return text +
         ". The cause is inferred from these sizes: the event log does not carry the "
         "driver's OutOfMemoryError (its log does: read it with --logs).";
}

int64_t EstimatedResultBytes(const DiagnosisInput& input, const KillCause& c,
                             std::span<const int32_t> stage_ids) {
  int64_t tasks = 0;
  for (int32_t id : stage_ids) {
    if (const StageStats* s = LastAttempt(input, id))
      tasks = std::max<int64_t>(tasks, s->num_tasks);
  }
  if (c.reading.used_bytes <= 0) return -1;
  if (c.reading.result_tasks <= 0 || tasks <= c.reading.result_tasks) return c.reading.used_bytes;
  // In double, capped: a hostile message's figures may be near the size parser's limit.
  return static_cast<int64_t>(std::min(static_cast<double>(c.reading.used_bytes) /
                                           static_cast<double>(c.reading.result_tasks) *
                                           static_cast<double>(tasks),
                                       1e15));
}

std::string ResultSizeSentence(const DiagnosisInput& input, const KillCause& c,
                               std::span<const int32_t> stage_ids) {
  std::string text = "Driver result size over spark.driver.maxResultSize: ";
  if (c.reading.used_bytes > 0 && c.reading.limit_bytes > 0) {
    text += "the serialized results of " +
            (c.reading.result_tasks > 0 ? std::to_string(c.reading.result_tasks) + " task(s)"
                                        : std::string("the first tasks")) +
            " came to " + HumanBytes(c.reading.used_bytes) + ", over the " +
            HumanBytes(c.reading.limit_bytes) + " limit";
    const int64_t estimated = EstimatedResultBytes(input, c, stage_ids);
    if (estimated > c.reading.used_bytes) {
      text += "; all of the stage's tasks would have sent about " + HumanBytes(estimated);
    }
  } else {
    text += c.words;
  }
  return text + ". The driver receives every task's result of a collect() and holds them all.";
}

std::string DiskSentence(const DiagnosisInput& input, const KillCause& c,
                         std::span<const int32_t> stage_ids) {
  std::string text = "Local disk full: " + WhatHappened(c);
  int64_t shuffle = 0, spill = 0;
  for (int32_t id : stage_ids) {
    if (const StageStats* s = LastAttempt(input, id)) {
      shuffle += s->shuffle_write_bytes;
      spill += s->disk_spill_bytes;
    }
  }
  if (shuffle + spill > 0) {
    text += "; the stage wrote " + HumanBytes(shuffle) + " of shuffle output and spilled " +
            HumanBytes(spill) + " to local disk";
  }
  return text + ".";
}

void HeapFix(const DiagnosisInput& input, const KillCause& c, std::span<const int32_t> stage_ids,
             Finding& f) {
  const ExecutorBudget b = BudgetOf(input, c.executor);
  const std::string collecting = CollectingAggregate(input, stage_ids);
  const StageStats* skewed = nullptr;
  bool reads_shuffle = false, reads_files = false;
  for (int32_t id : stage_ids) {
    const StageStats* s = LastAttempt(input, id);
    if (s == nullptr) continue;
    if (skewed == nullptr && Skewed(input, *s)) skewed = s;
    reads_shuffle = reads_shuffle || s->shuffle_read_bytes > 0;
    reads_files = reads_files || s->input_bytes > 0;
  }
  if (!collecting.empty()) {
    f.explanation += " The failed job's plan has " + collecting +
                     ", which holds each group's values in one task: no partition count splits "
                     "a group.";
    f.recommendations.push_back(
        {"",
         "aggregate what is needed instead of " + collecting +
             " of whole groups (count, sum, max, approx_percentile, or the first N values), or "
             "salt the key and combine the partial results",
         collecting + " in the failed job's plan holds every value of a group as one object in "
                      "one task's heap: more partitions split rows, never a group, so they do "
                      "not make the largest group fit"});
  }
  if (skewed != nullptr) {
    f.explanation += " Stage " + std::to_string(skewed->stage_id) +
                     " is data-skewed: the task holding the oversized partition ran out of heap. "
                     "Fix the skew rather than raising memory for every executor.";
    f.recommendations.push_back(
        {reads_shuffle ? "spark.sql.adaptive.skewJoin.enabled" : "",
         reads_shuffle ? "true"
                       : "split the hot key (salting) or rewrite the input as evenly sized files",
         "stage " + std::to_string(skewed->stage_id) + "'s largest task read " +
             HumanBytes(skewed->max_task_read_bytes) + " against a median of " +
             HumanBytes(skewed->median_read_bytes) +
             ": the oversized partition is the one that does not fit"});
  } else if (collecting.empty() && reads_shuffle) {
    int64_t current = input.IntProperty("spark.sql.shuffle.partitions", 200);
    if (current <= 0) current = 200;
    f.recommendations.push_back({"spark.sql.shuffle.partitions", std::to_string(current * 2),
                                 "twice the current " + std::to_string(current) +
                                     " halves the rows each task holds (for RDD code, pass "
                                     "more partitions to the shuffle)"});
    if (input.AqeCoalesces()) {
      f.recommendations.push_back(
          {"spark.sql.adaptive.advisoryPartitionSizeInBytes", "32m",
           "AQE is on and merges partitions back up to this size (64 MiB by default); half of it "
           "keeps the smaller partitions"});
    }
  } else if (collecting.empty() && reads_files) {
    const int64_t split =
        ParseSizeMiB(input.Property("spark.sql.files.maxPartitionBytes", "128m"), 128);
    f.recommendations.push_back({"spark.sql.files.maxPartitionBytes",
                                 MiBSetting(std::max<int64_t>(split / 2, 1)),
                                 "the failing stage reads files, not a shuffle: half the " +
                                     MiBText(split) + " split halves the rows each task holds"});
  } else if (collecting.empty()) {
    f.recommendations.push_back(
        {"",
         "split the stage's input into more partitions (numPartitions of spark.range or "
         "parallelize, or repartition before the step that holds the rows)",
         "the failing stage reads neither a shuffle nor files: its partition count is the "
         "code's, and no setting divides it"});
  }
  if (skewed != nullptr) return;  // more heap everywhere for one partition's sake
  f.recommendations.push_back(
      {b.heap_key, MiBSetting(b.heap_mib + b.heap_mib / 2),
       "50% more than the " + MiBText(b.heap_mib) +
           " heap this run had, if the work cannot be divided: the error says only that a task "
           "needed more than its share" +
           (input.LocalMode() ? std::string(" (local mode: the tasks run in the driver's JVM)")
                              : std::string())});
}

// A container that is not Spark's, killed by the kernel's OOM killer as its log says, with no
// reading of its limit: the JVM's resident set when killed is at most the limit (less what the
// other processes held), so the settings must fit in it.
void KernelKillFix(const KillCause& c, const ExecutorBudget& b, Finding& f) {
  if (c.reading.used_bytes <= 0 || c.reading.limit_bytes > 0) return;
  const int64_t resident_mib = c.reading.used_bytes / kMiB;
  const int64_t needed = b.heap_mib + b.off_heap_mib + b.pyspark_mib + b.overhead_mib;
  if (needed <= resident_mib) return;
  const std::string sum = "heap " + MiBText(b.heap_mib) +
                          (b.off_heap_mib > 0 ? " + off-heap " + MiBText(b.off_heap_mib) : "") +
                          (b.pyspark_mib > 0 ? " + Python " + MiBText(b.pyspark_mib) : "") +
                          " + Spark's " + MiBText(b.overhead_mib) + " native allowance";
  const std::string why = "the kernel killed the JVM at " + MiBText(resident_mib) +
                          " resident: about what its container's limit left it; the settings ask "
                          "for " +
                          sum + " = " + MiBText(needed);
  const int64_t room = resident_mib - b.heap_mib - b.pyspark_mib - b.overhead_mib;
  if (b.off_heap_mib > 0) {
    if (room >= 256) {
      f.recommendations.push_back({"spark.memory.offHeap.size", MiBSetting(RoundDownMiB(room)),
                                   "what is left of it for the off-heap pool: " + why});
    } else {
      f.recommendations.push_back(
          {"spark.memory.offHeap.enabled", "false",
           "no room is left for an off-heap pool: " + why +
               " (Spark's execution memory then lives in the heap, which spills when full)"});
    }
  }
  f.recommendations.push_back({"",
                               "a container memory limit of at least " +
                                   MiBText(RoundUpMiB(kHeadroom * needed)) +
                                   " to keep these settings",
                               why + "; 25% headroom above that"});
}

void ContainerFix(const DiagnosisInput& input, const KillCause& c, Finding& f) {
  const ExecutorBudget b = BudgetOf(input, c.executor);
  const int64_t budgets = b.heap_mib + b.off_heap_mib + b.pyspark_mib;
  const int64_t python_mib =
      c.memory != nullptr ? static_cast<int64_t>(c.memory->max_python_rss_bytes / kMiB) : 0;
  if (ContainerManagerLimitsMemory(input)) {
    // Spark's container: heap + overhead + off-heap + pyspark memory. The kill proves the part
    // outside the heap and the budgets outgrew the overhead.
    int64_t measured = -1;
    std::string source;
    if (c.memory != nullptr && c.memory->max_rss_bytes > 0) {
      measured =
          static_cast<int64_t>((c.memory->max_rss_bytes + c.memory->max_python_rss_bytes) / kMiB) -
          budgets;
      source = "the agent measured " + MiBText(std::max<int64_t>(measured, 0)) +
               " outside the heap and budgets at the peak (resident set + Python workers)";
    } else if (c.reading.used_bytes > 0) {
      measured = c.reading.used_bytes / kMiB - budgets;
      source = "the " + MiBText(std::max<int64_t>(measured, 0)) +
               " outside the heap and budgets the container held when killed (" +
               HumanBytes(c.reading.used_bytes) + " in all)";
    }
    const int64_t base = std::max(b.overhead_mib, measured);
    f.recommendations.push_back(
        {"spark.executor.memoryOverhead", MiBSetting(RoundUpMiB(kHeadroom * base)),
         "25% headroom above the larger of the current " + MiBText(b.overhead_mib) +
             " overhead, which the kill proves too small" +
             (source.empty() ? std::string(" (no reading measured the process)")
                             : ", and " + source) +
             "; the container grows by the same. A floor: the kill stopped the growth at the "
             "limit, so what the task would have taken is not known; if the next run dies "
             "too, size it from what the task holds outside the heap"});
    if (b.pyspark_mib == 0 && python_mib > 0 && 2 * python_mib >= std::max<int64_t>(measured, 1)) {
      f.recommendations.push_back(
          {"spark.executor.pyspark.memory", MiBSetting(RoundUpMiB(kHeadroom * python_mib)),
           "the Python workers held up to " + MiBText(python_mib) +
               ", most of what grew outside the heap: their own budget in the container, 25% "
               "above it, bounds them"});
    }
    return;
  }
  if (!MeasuredLimit(c)) {
    KernelKillFix(c, b, f);
    return;
  }
  // A container that is not Spark's (a standalone Worker in a cgroup): the settings, Spark's
  // allowance for the JVM's native memory and the other processes it held must fit its limit.
  const profile::MemoryReading& last = c.memory->last;
  const int64_t limit_mib = static_cast<int64_t>(last.container_limit_bytes / kMiB);
  const int64_t others_mib = OtherProcessesBytes(last) / kMiB;
  const int64_t needed = budgets + b.overhead_mib + others_mib;
  const int64_t room = limit_mib - others_mib - b.overhead_mib - b.pyspark_mib;  // for heap + off
  const std::string sum =
      MiBText(b.heap_mib) + " heap" +
      (b.off_heap_mib > 0 ? " + " + MiBText(b.off_heap_mib) + " off-heap" : "") +
      (b.pyspark_mib > 0 ? " + " + MiBText(b.pyspark_mib) + " Python" : "") + " + " +
      MiBText(b.overhead_mib) + " native allowance + " + MiBText(others_mib) + " other processes";
  if (needed > limit_mib && b.off_heap_mib > 0) {
    const int64_t off_heap = RoundDownMiB(room - b.heap_mib);
    f.recommendations.push_back(
        off_heap >= 64
            ? Recommendation{"spark.memory.offHeap.size", MiBSetting(off_heap),
                             "what the " + MiBText(limit_mib) + " limit leaves after " +
                                 MiBText(b.heap_mib) + " of heap, Spark's " +
                                 MiBText(b.overhead_mib) +
                                 " allowance for the JVM's native memory and the " +
                                 MiBText(others_mib) + " the container's other processes held"}
            : Recommendation{"spark.memory.offHeap.enabled", "false",
                             "the " + MiBText(limit_mib) +
                                 " limit leaves no room for an "
                                 "off-heap pool after " +
                                 MiBText(b.heap_mib) + " of heap, Spark's " +
                                 MiBText(b.overhead_mib) +
                                 " allowance for the JVM's native memory and the " +
                                 MiBText(others_mib) + " the container's other processes held"});
  } else if (needed > limit_mib && room >= 256) {
    f.recommendations.push_back(
        {b.heap_key, MiBSetting(RoundDownMiB(room)),
         "what the " + MiBText(limit_mib) + " limit leaves after Spark's " +
             MiBText(b.overhead_mib) + " allowance for the JVM's native memory and the " +
             MiBText(others_mib) + " the container's other processes held"});
  }
  const int64_t measured_peak =
      static_cast<int64_t>((c.memory->max_rss_bytes + c.memory->max_python_rss_bytes) / kMiB) +
      others_mib;
  f.recommendations.push_back(
      {"",
       "a container memory limit of at least " +
           MiBText(RoundUpMiB(kHeadroom * std::max(needed, measured_peak))) +
           " to keep these settings",
       needed > limit_mib
           ? "the settings need " + sum + " = " + MiBText(needed) + ", more than the " +
                 MiBText(limit_mib) + " limit; 25% headroom above that"
           : "the processes grew past what the settings allow (" + sum + " = " + MiBText(needed) +
                 "): 25% above the larger of that and the " + MiBText(measured_peak) +
                 " measured"});
}

void PythonFix(const DiagnosisInput& input, const KillCause& c, Finding& f) {
  const ExecutorBudget b = BudgetOf(input, c.executor);
  const int64_t python_mib =
      c.memory != nullptr ? static_cast<int64_t>(c.memory->max_python_rss_bytes / kMiB) : 0;
  const bool container = ContainerManagerLimitsMemory(input);
  const std::string grows =
      container ? "; Spark adds it to the container it asks for" : std::string();
  if (b.pyspark_mib > 0) {
    f.recommendations.push_back(
        {"spark.executor.pyspark.memory", MiBSetting(2 * b.pyspark_mib),
         "twice the " + MiBText(b.pyspark_mib) + " (" + MiBText(b.pyspark_mib / b.cores) +
             " per Python worker) the UDF ran out of: the MemoryError says only that it needed "
             "more than its share" +
             grows});
  } else if (python_mib > 0) {
    f.recommendations.push_back(
        {"spark.executor.pyspark.memory", MiBSetting(RoundUpMiB(kHeadroom * python_mib)),
         "25% above the " + MiBText(python_mib) +
             " the Python workers were measured to hold: a limit of their own" + grows});
  }
  // A container that is not Spark's (a standalone Worker in a cgroup) whose OOM killer ended the
  // workers: pyspark.memory bounds a worker but grows nothing, so the container must hold the
  // JVM and its workers -- at least what they held when the worker was killed, which wanted more.
  if (!container && c.memory != nullptr && c.memory->oom_kills() > 0 &&
      c.memory->last.container_limit_bytes > 0) {
    const int64_t held_mib =
        static_cast<int64_t>((c.memory->max_rss_bytes + c.memory->max_python_rss_bytes) / kMiB);
    const int64_t limit_mib = static_cast<int64_t>(c.memory->last.container_limit_bytes / kMiB);
    f.recommendations.push_back(
        {"",
         "raise the memory limit of the container the executor runs in (now " + MiBText(limit_mib) +
             ") to at least " + MiBText(RoundUpMiB(kHeadroom * std::max(held_mib, limit_mib))) +
             ", or run fewer Python workers in it",
         "its JVM and Python workers held " + MiBText(held_mib) +
             " at their peaks and the kernel killed a worker that wanted more; "
             "spark.executor.pyspark.memory alone would turn the kill into a MemoryError"});
  }
  f.recommendations.push_back(
      {"",
       "make the Python function hold less at once (process rows or Arrow batches as they "
       "come, no whole documents, groups or lookup tables per call)",
       "the memory a UDF holds for one call or one batch is what its worker must fit, whatever "
       "the partition count"});
}

// Whether a JVM option is one Spark adds to spark.executor.extraJavaOptions itself, logged merged
// into the property: org.apache.spark.launcher.JavaModuleOptions.defaultModuleOptions() of 3.5
// and 4.x (read from their spark-launcher jars) and the IPv6 default. A user sets the rest.
bool AddedBySpark(std::string_view option) {
  static constexpr std::string_view kExact[] = {
      "-XX:+IgnoreUnrecognizedVMOptions",
      "-Djdk.reflect.useDirectMethodHandle=false",
      "-Dio.netty.tryReflectionSetAccessible=true",
      "-Dio.netty.allocator.type=pooled",
      "-Dio.netty.handler.ssl.defaultEndpointVerificationAlgorithm=NONE",
      "--add-modules=jdk.incubator.vector",
      "--sun-misc-unsafe-memory-access=allow",
      "--enable-native-access=ALL-UNNAMED",
      "-Djava.net.preferIPv6Addresses=false",
  };
  return option.starts_with("--add-opens=") ||
         std::find(std::begin(kExact), std::end(kExact), option) != std::end(kExact);
}

// The user's own executor Java options (Spark's additions left out) without the direct-memory
// limits, each followed by a space: the start of a value that sets a new limit.
std::string UserJavaOptionsWithoutDirectLimit(const DiagnosisInput& input) {
  std::string options;
  const std::string logged = input.Property("spark.executor.extraJavaOptions", "");
  for (std::string_view option : model::SplitJavaOptions(logged)) {
    if (!AddedBySpark(option) && !option.starts_with("-XX:MaxDirectMemorySize=") &&
        !option.starts_with("-Dio.netty.maxDirectMemory=")) {
      options += std::string(option) + " ";
    }
  }
  return options;
}

void DirectFix(const DiagnosisInput& input, const KillCause& c, std::span<const int32_t> stage_ids,
               Finding& f) {
  const ExecutorBudget b = BudgetOf(input, c.executor);
  const int64_t current = MaxDirectMemoryMiB(input);
  const int64_t limit = current > 0 ? current : b.heap_mib;
  // The user's own options, the direct-memory limit replaced.
  std::string options = UserJavaOptionsWithoutDirectLimit(input);
  options += std::string("-XX:MaxDirectMemorySize=") + MiBSetting(2 * limit);
  f.recommendations.push_back(
      {"spark.executor.extraJavaOptions", options,
       "twice the " + MiBText(limit) + " direct-buffer limit" +
           (current > 0 ? std::string() : std::string(" (the JVM's default: the heap's maximum)")) +
           (ContainerManagerLimitsMemory(input)
                ? "; raise spark.executor.memoryOverhead by the same, since direct buffers live "
                  "outside the heap"
                : std::string())});
  for (int32_t id : stage_ids) {
    const StageStats* s = LastAttempt(input, id);
    if (s == nullptr || s->shuffle_read_bytes <= 0) continue;
    const int64_t in_flight =
        ParseSizeMiB(input.Property("spark.reducer.maxSizeInFlight", "48m"), 48);
    f.recommendations.push_back(
        {"spark.reducer.maxSizeInFlight", MiBSetting(std::max<int64_t>(in_flight / 2, 1)),
         "the stage fetches a shuffle, whose blocks land in direct buffers: half the " +
             MiBText(in_flight) + " fetched at once per task"});
    break;
  }
}

void RefusalFix(const DiagnosisInput& input, const KillCause& c, Finding& f) {
  const auto [direct, fetch] = RefusalFigures(input, c);
  if (fetch > 0) {
    const int64_t fetch_mib = (fetch + kMiB - 1) / kMiB;
    const int64_t raised = RoundUpMiB(kHeadroom * static_cast<double>(fetch_mib));
    f.recommendations.push_back(
        {"spark.executor.extraJavaOptions",
         UserJavaOptionsWithoutDirectLimit(input) + "-XX:MaxDirectMemorySize=" + MiBSetting(raised),
         "Spark's executor starts only when Netty's direct memory is at least "
         "spark.network.maxRemoteBlockSizeFetchToMem (" +
             HumanBytes(fetch) +
             "): 25% above it, rounded up to 64 MiB, leaves Netty's own buffers room beside one "
             "block fetched whole" +
             (ContainerManagerLimitsMemory(input)
                  ? "; raise spark.executor.memoryOverhead by the increase, since direct "
                    "buffers live outside the heap"
                  : std::string())});
  }
  const int64_t in_flight_mib =
      ParseSizeMiB(input.Property("spark.reducer.maxSizeInFlight", "48m"), 48);
  const int64_t lowered_mib = direct / kMiB - in_flight_mib;
  if (direct > 0 && lowered_mib >= 1) {
    f.recommendations.push_back(
        {"spark.network.maxRemoteBlockSizeFetchToMem", MiBSetting(lowered_mib),
         "or keep the " + HumanBytes(direct) +
             " direct-memory limit and fetch remote blocks above this size to disk: the limit "
             "less the " +
             MiBText(in_flight_mib) +
             " a task fetches at once (spark.reducer.maxSizeInFlight), which share it"});
  }
}

void DriverResultsFix(const DiagnosisInput& input, const KillCause& c, Finding& f) {
  const int64_t all = AllResultsBytes(c);
  const int64_t all_mib = (all + kMiB - 1) / kMiB;
  const int64_t driver_mib = c.reading.limit_bytes / kMiB;
  f.recommendations.push_back(
      {"",
       "do not collect() this much to the driver: write the result out (df.write), aggregate "
       "it on the executors, or take only what is needed (limit, take, toLocalIterator)",
       "the driver holds every task's result at once: about " + HumanBytes(all) +
           " serialized here, and the rows decoded from them beside"});
  f.recommendations.push_back(
      {"spark.driver.memory", MiBSetting(RoundUpMiB(driver_mib + 2 * all_mib)),
       "the " + MiBText(driver_mib) + " it had plus twice the " + MiBText(all_mib) +
           " of results, if the collect must stay: the serialized "
           "results and the rows decoded from them are held at once"});
  const int64_t limit_bytes =
      model::ParseSizeBytes(input.Property("spark.driver.maxResultSize", "1g"), 1);
  if (limit_bytes == 0 || limit_bytes >= all) {
    f.recommendations.push_back(
        {"spark.driver.maxResultSize", MiBSetting(RoundUpMiB(kHeadroom * all_mib)),
         "25% above these results: a larger collect then fails at once with Spark's own message "
         "naming its size, instead of exhausting the driver's heap" +
             std::string(limit_bytes == 0 ? " (0 sets no limit)" : "")});
  }
}

void ResultSizeFix(const DiagnosisInput& input, const KillCause& c,
                   std::span<const int32_t> stage_ids, Finding& f) {
  const int64_t estimated = EstimatedResultBytes(input, c, stage_ids);
  f.recommendations.push_back(
      {"",
       "do not collect() this much to the driver: write the result out (df.write), aggregate "
       "it on the executors, or take only what is needed (limit, take, toLocalIterator)",
       "the driver holds every task's serialized result at once" +
           (estimated > 0 ? ": about " + HumanBytes(estimated) + " here" : std::string())});
  if (estimated <= 0) return;
  const int64_t estimated_mib = (estimated + kMiB - 1) / kMiB;
  f.recommendations.push_back(
      {"spark.driver.maxResultSize", MiBSetting(RoundUpMiB(kHeadroom * estimated_mib)),
       "25% above the " + HumanBytes(estimated) +
           " all tasks' results would come to (the limit was passed after " +
           (c.reading.result_tasks > 0 ? std::to_string(c.reading.result_tasks) + " task(s)"
                                       : std::string("the first tasks")) +
           "), if the collect must stay"});
  const int64_t driver_mib = ParseSizeMiB(input.Property("spark.driver.memory", "1g"), 1024);
  f.recommendations.push_back({"spark.driver.memory",
                               MiBSetting(RoundUpMiB(driver_mib + 2 * estimated_mib)),
                               "the " + MiBText(driver_mib) +
                                   " it had plus twice the results: the serialized results "
                                   "and the rows decoded from them are held at once"});
}

}  // namespace

double MeasuredLimitShare(const KillCause& c) {
  if (!MeasuredLimit(c)) return -1;
  return static_cast<double>(c.memory->last.container_usage_bytes) /
         static_cast<double>(c.memory->last.container_limit_bytes);
}

bool ContainerManagerLimitsMemory(const DiagnosisInput& input) {
  const ClusterManager manager = input.Manager();
  return manager != ClusterManager::kStandalone && manager != ClusterManager::kLocal &&
         manager != ClusterManager::kLocalCluster;
}

KillCause ExecutorKillCause(const DiagnosisInput& input, const model::Executor& executor) {
  KillCause c;
  c.executor = &executor;
  c.reading = model::ExecutorExhaustion(executor, ContainerManagerLimitsMemory(input));
  c.words = eventlog::FirstLine(executor.removed_reason, 200);
  Refine(input, c);
  InferStartupRefusal(input, c);
  return c;
}

KillCause RefusedStartCause(const DiagnosisInput& input) {
  KillCause first;
  int64_t refused = 0;
  for (const model::Executor& executor : input.model->executors) {
    if (executor.is_driver() || executor.removed_time_ms < 0 ||
        model::ExitCodeIn(executor.removed_reason) != 1) {
      continue;
    }
    KillCause c = ExecutorKillCause(input, executor);
    if (c.reading.what != model::Exhaustion::kDirectBelowFetchToMem) continue;
    if (refused++ == 0) first = std::move(c);
  }
  first.executors_alike = refused;
  return first;
}

KillCause DriverResultsCause(const DiagnosisInput& input, const model::StageAttempt& stage,
                             const std::string& message) {
  const model::ApplicationModel& m = *input.model;
  bool result_lost = message.find("Exception while getting task result") != std::string::npos;
  int64_t received_bytes = 0, received_tasks = 0;
  for (const auto& [key, attempt] : m.stages) {
    if (attempt.stage_id != stage.stage_id) continue;
    auto [begin, end] = m.TasksOf(attempt);
    for (const uint32_t* it = begin; it != end; ++it) {
      const model::TaskAttempt& task = m.tasks[*it];
      if (task.end == model::TaskEndKind::kTaskResultLost) result_lost = true;
      if (task.end != model::TaskEndKind::kSuccess) continue;
      received_bytes += std::max<int64_t>(task.metrics.result_size_bytes, 0);
      ++received_tasks;
    }
  }
  KillCause c;
  if (!result_lost || received_tasks == 0 || received_bytes <= 0) return c;
  c.reading.used_bytes = received_bytes;
  c.reading.result_tasks = received_tasks;
  c.stage_tasks = std::max<int64_t>(stage.num_tasks, received_tasks);
  const int64_t driver_mib = ParseSizeMiB(input.Property("spark.driver.memory", "1g"), 1024);
  c.reading.limit_bytes = driver_mib * kMiB;
  constexpr std::string_view kAborted = "Job aborted due to stage failure: ";
  const std::string_view text = message.rfind(kAborted, 0) == 0
                                    ? std::string_view(message).substr(kAborted.size())
                                    : std::string_view(message);
  c.words = eventlog::FirstLine(text.empty() ? "a result was lost" : text, 200);
  // The driver's own log (--logs) says its heap ran out: its words stand.
  if (input.logs != nullptr) {
    const executor_logs::LogHit* hit = input.logs->CauseFor("driver");
    if (hit != nullptr &&
        executor_logs::ReadingOf(*hit, /*driver=*/true).what == model::Exhaustion::kDriverHeap) {
      c.reading.what = model::Exhaustion::kDriverHeap;
      c.log = hit;
      c.log_agrees = true;
      return c;
    }
  }
  // Serialized results and the rows decoded from them, held at once.
  if (2.0 * static_cast<double>(AllResultsBytes(c)) >= static_cast<double>(c.reading.limit_bytes)) {
    c.reading.what = model::Exhaustion::kDriverHeap;
    c.inferred_from_settings = true;
  }
  return c;
}

KillCause TaskKillCause(const DiagnosisInput& input, const model::TaskAttempt& task) {
  const model::ApplicationModel& m = *input.model;
  KillCause c;
  c.task = &task;
  c.reading = model::TaskExhaustion(m, task, ContainerManagerLimitsMemory(input));
  const model::TaskFailure* failure =
      task.failure != model::kNone ? &m.task_failures[task.failure] : nullptr;
  if (failure != nullptr) c.words = FailureWords(*failure);
  std::string executor_id = task.executor != model::kNone ? m.strings.Get(task.executor) : "";
  if (task.end == model::TaskEndKind::kExecutorLostFailure && failure != nullptr &&
      !failure->lost_executor_id.empty()) {
    executor_id = failure->lost_executor_id;
  }
  c.executor = m.FindExecutor(executor_id);
  if (task.end == model::TaskEndKind::kExecutorLostFailure && c.executor != nullptr &&
      !c.executor->removed_reason.empty()) {
    c.words = eventlog::FirstLine(c.executor->removed_reason, 200);
  }
  Refine(input, c);
  return c;
}

KillCause MessageKillCause(const DiagnosisInput& input, const std::string& message,
                           bool driver_side) {
  KillCause c;
  c.reading = model::ReadExhaustion(message, ContainerManagerLimitsMemory(input), driver_side);
  constexpr std::string_view kAborted = "Job aborted due to stage failure: ";
  const std::string_view text = message.rfind(kAborted, 0) == 0
                                    ? std::string_view(message).substr(kAborted.size())
                                    : std::string_view(message);
  c.words = eventlog::FirstLine(text, 300);
  return c;
}

std::string CauseTitle(model::Exhaustion what) {
  std::string words = model::ExhaustionWords(what);
  words[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(words[0])));
  return words;
}

namespace {
std::string CauseSentenceOfSpark(const DiagnosisInput& input, const KillCause& c,
                                 std::span<const int32_t> stage_ids) {
  switch (c.reading.what) {
    case model::Exhaustion::kExecutorHeap:
      return HeapSentence(input, c, stage_ids);
    case model::Exhaustion::kContainerMemory:
      return ContainerSentence(input, c);
    case model::Exhaustion::kPythonMemory:
      return PythonSentence(input, c);
    case model::Exhaustion::kDirectMemory: {
      const int64_t limit = MaxDirectMemoryMiB(input);
      return "Direct buffer memory exhausted: " + WhatHappened(c) +
             "; the JVM's direct buffers are bounded by -XX:MaxDirectMemorySize, " +
             (limit > 0 ? MiBText(limit) + " here"
                        : "by default its heap's maximum (" +
                              MiBText(BudgetOf(input, c.executor).heap_mib) + ")") +
             ".";
    }
    case model::Exhaustion::kDirectBelowFetchToMem:
      return RefusalSentence(input, c);
    case model::Exhaustion::kDriverResultSize:
      return ResultSizeSentence(input, c, stage_ids);
    case model::Exhaustion::kDriverHeap:
      if (c.stage_tasks > 0) return DriverResultsSentence(input, c);
      return "Driver heap exhausted: " + c.words +
             ", with spark.driver.memory=" + input.Property("spark.driver.memory", "1g") + ".";
    case model::Exhaustion::kDiskFull:
      return DiskSentence(input, c, stage_ids);
    case model::Exhaustion::kUnknown:
      break;
  }
  if (c.killed_by_signal()) {
    return "Killed by SIGKILL (exit code 137), cause unknown: " + Who(c) +
           (c.memory != nullptr ? " reported no container memory limit"
                                : " ran where no container limit is known") +
           ", so the sender was the host's kernel OOM killer (dmesg) or an operator.";
  }
  return "";
}
}  // namespace

std::string CauseSentence(const DiagnosisInput& input, const KillCause& c,
                          std::span<const int32_t> stage_ids) {
  std::string sentence = CauseSentenceOfSpark(input, c, stage_ids);
  if (!sentence.empty()) sentence += LogSentence(c);
  return sentence;
}

void AddCauseEvidence(const DiagnosisInput& input, const KillCause& c, Finding& f) {
  auto add = [&f](const char* name, double value, const char* unit) {
    f.evidence.push_back({name, value, unit});
  };
  if (c.reading.exit_code >= 0) add("exit_code", c.reading.exit_code, "count");
  if (c.log != nullptr) {
    add("log_line", static_cast<double>(c.log->line), "count");
    add("log_line_repeats", static_cast<double>(c.log->count), "count");
  }
  const ExecutorBudget b = BudgetOf(input, c.executor);
  switch (c.reading.what) {
    case model::Exhaustion::kExecutorHeap:
    case model::Exhaustion::kDirectMemory:
      add("heap_bytes", static_cast<double>(b.heap_mib * kMiB), "bytes");
      add("task_slots", static_cast<double>(b.cores), "count");
      break;
    case model::Exhaustion::kContainerMemory:
      add("heap_bytes", static_cast<double>(b.heap_mib * kMiB), "bytes");
      add("off_heap_bytes", static_cast<double>(b.off_heap_mib * kMiB), "bytes");
      add("memory_overhead_bytes", static_cast<double>(b.overhead_mib * kMiB), "bytes");
      if (c.reading.limit_bytes > 0) {
        add("container_limit_bytes", static_cast<double>(c.reading.limit_bytes), "bytes");
        add("container_used_bytes", static_cast<double>(c.reading.used_bytes), "bytes");
      } else if (MeasuredLimit(c)) {
        const profile::MemoryReading& last = c.memory->last;
        add("container_limit_bytes", static_cast<double>(last.container_limit_bytes), "bytes");
        add("container_used_bytes", static_cast<double>(last.container_usage_bytes), "bytes");
        add("jvm_rss_max_bytes", static_cast<double>(c.memory->max_rss_bytes), "bytes");
        add("python_rss_max_bytes", static_cast<double>(c.memory->max_python_rss_bytes), "bytes");
        add("other_processes_bytes", static_cast<double>(OtherProcessesBytes(last)), "bytes");
      }
      break;
    case model::Exhaustion::kPythonMemory:
      add("pyspark_memory_bytes", static_cast<double>(b.pyspark_mib * kMiB), "bytes");
      add("python_workers", static_cast<double>(b.cores), "count");
      if (c.memory != nullptr) {
        add("python_rss_max_bytes", static_cast<double>(c.memory->max_python_rss_bytes), "bytes");
        if (c.memory->last.container_oom_kills_counted) {
          add("container_oom_kills", static_cast<double>(c.memory->oom_kills()), "count");
        }
      }
      break;
    case model::Exhaustion::kDirectBelowFetchToMem: {
      const auto [direct, fetch] = RefusalFigures(input, c);
      add("direct_memory_limit_bytes", static_cast<double>(direct), "bytes");
      add("fetch_to_mem_bytes", static_cast<double>(fetch), "bytes");
      if (c.executors_alike > 0) {
        add("refused_executors", static_cast<double>(c.executors_alike), "count");
      }
      break;
    }
    case model::Exhaustion::kDriverHeap:
      if (c.stage_tasks > 0) {
        add("result_bytes_received", static_cast<double>(c.reading.used_bytes), "bytes");
        add("result_tasks_received", static_cast<double>(c.reading.result_tasks), "tasks");
        add("result_stage_tasks", static_cast<double>(c.stage_tasks), "tasks");
        add("result_bytes_estimated", static_cast<double>(AllResultsBytes(c)), "bytes");
        add("driver_heap_bytes", static_cast<double>(c.reading.limit_bytes), "bytes");
      }
      break;
    case model::Exhaustion::kDriverResultSize:
      add("result_bytes", static_cast<double>(c.reading.used_bytes), "bytes");
      add("result_limit_bytes", static_cast<double>(c.reading.limit_bytes), "bytes");
      add("result_tasks", static_cast<double>(c.reading.result_tasks), "tasks");
      break;
    default:
      break;
  }
}

bool AddCauseFix(const DiagnosisInput& input, const KillCause& c,
                 std::span<const int32_t> stage_ids, Finding& f) {
  switch (c.reading.what) {
    case model::Exhaustion::kExecutorHeap:
      HeapFix(input, c, stage_ids, f);
      return true;
    case model::Exhaustion::kContainerMemory:
      ContainerFix(input, c, f);
      return true;
    case model::Exhaustion::kPythonMemory:
      PythonFix(input, c, f);
      return true;
    case model::Exhaustion::kDirectMemory:
      DirectFix(input, c, stage_ids, f);
      return true;
    case model::Exhaustion::kDirectBelowFetchToMem:
      RefusalFix(input, c, f);
      return true;
    case model::Exhaustion::kDriverResultSize:
      ResultSizeFix(input, c, stage_ids, f);
      return true;
    case model::Exhaustion::kDriverHeap: {
      if (c.stage_tasks > 0) {
        DriverResultsFix(input, c, f);
        return true;
      }
      const int64_t driver_mib = ParseSizeMiB(input.Property("spark.driver.memory", "1g"), 1024);
      f.recommendations.push_back(
          {"", "gather less on the driver (collect, toPandas, broadcast of a large table)",
           "the driver's heap holds what is collected or broadcast"});
      f.recommendations.push_back(
          {"spark.driver.memory", MiBSetting(driver_mib + driver_mib / 2),
           "50% more than the " + MiBText(driver_mib) +
               " it had, if that much must reach the driver: the error says only that it "
               "needed more"});
      return true;
    }
    case model::Exhaustion::kDiskFull:
      f.recommendations.push_back(
          {"spark.local.dir", "directories on volumes with more free space",
           "shuffle files and spills go to spark.local.dir (SPARK_LOCAL_DIRS on standalone, the "
           "NodeManager's local dirs on YARN, emptyDir volumes on Kubernetes); fewer bytes there "
           "(less spill: smaller partitions) also helps"});
      return true;
    case model::Exhaustion::kUnknown:
      break;
  }
  return false;
}

}  // namespace sparkprof::diagnosis::rules
