#include "analyzer/model/failure_causes.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>
#include <string_view>

#include "analyzer/model/spark_values.h"

namespace sparkprof::model {

namespace {
std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}
bool Has(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}
// `word` in `lower` not preceded by a letter: "memoryerror" but not "outofmemoryerror".
bool HasWord(std::string_view lower, std::string_view word) {
  for (size_t at = lower.find(word); at != std::string_view::npos; at = lower.find(word, at + 1)) {
    if (at == 0 || !std::isalpha(static_cast<unsigned char>(lower[at - 1]))) return true;
  }
  return false;
}

// "36.1 MiB", "5.6 GB", "1024b" at the start of `text` (binary units, as Spark's
// Utils.bytesToString and Hadoop's TraditionalBinaryPrefix write them); -1 when it is not one.
int64_t SizeAt(std::string_view text) {
  size_t at = 0;
  while (at < text.size() && text[at] == ' ') ++at;
  size_t end = at;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
    ++end;
  }
  double value = 0;
  const auto [rest, error] = std::from_chars(text.data() + at, text.data() + end, value);
  if (error != std::errc() || rest != text.data() + end || !std::isfinite(value) || value < 0) {
    return -1;
  }
  while (end < text.size() && text[end] == ' ') ++end;
  const char unit = end < text.size()
                        ? static_cast<char>(std::tolower(static_cast<unsigned char>(text[end])))
                        : 'b';
  int shift = 0;
  switch (unit) {
    case 'k':
      shift = 10;
      break;
    case 'm':
      shift = 20;
      break;
    case 'g':
      shift = 30;
      break;
    case 't':
      shift = 40;
      break;
    case 'b':
      break;
    default:
      return -1;
  }
  const double bytes = std::ldexp(value, shift);
  return bytes < 9e15 ? static_cast<int64_t>(bytes) : -1;
}

// YARN: "Current usage: 5.6 GB of 5.5 GB physical memory used" -> (used, limit).
void ReadPhysicalMemoryUse(std::string_view text, std::string_view lower,
                           ExhaustionReading& reading) {
  const size_t marker = lower.find("physical memory used");
  if (marker == std::string_view::npos) return;
  const size_t of = lower.rfind(" of ", marker);
  if (of == std::string_view::npos || marker - of > 40) return;
  reading.limit_bytes = SizeAt(text.substr(of + 4, marker - of - 4));
  // The used figure: the number before " of ", after the last ": " or ". " or line start.
  size_t start = of;
  while (start > 0 && of - start < 24 && text[start - 1] != ':' && text[start - 1] != '\n' &&
         !(text[start - 1] == ' ' && start >= 2 && text[start - 2] == '.')) {
    --start;
  }
  reading.used_bytes = SizeAt(text.substr(start, of - start));
}

// "Total size of serialized results of 3 tasks (36.1 MiB) is bigger than
// spark.driver.maxResultSize (32.0 MiB)" -> (tasks, used, limit).
void ReadResultSize(std::string_view text, std::string_view lower, ExhaustionReading& reading) {
  constexpr std::string_view kResultsOf = "serialized results of ";
  if (size_t at = lower.find(kResultsOf); at != std::string_view::npos) {
    at += kResultsOf.size();
    int64_t tasks = 0;
    const auto [rest, error] = std::from_chars(text.data() + at, text.data() + text.size(), tasks);
    if (error == std::errc()) reading.result_tasks = tasks;
    const size_t open = lower.find('(', at);
    if (open != std::string_view::npos) reading.used_bytes = SizeAt(text.substr(open + 1));
  }
  constexpr std::string_view kLimit = "maxresultsize (";
  if (size_t at = lower.find(kLimit); at != std::string_view::npos) {
    reading.limit_bytes = SizeAt(text.substr(at + kLimit.size()));
  }
}
// "Netty direct memory should at least be bigger than 'spark.network.maxRemoteBlockSizeFetchToMem',
// but got 67108864 bytes < 209715200" -> (direct limit, fetch-to-memory size), in bytes as Spark
// writes them (a number, or a size with its unit).
void ReadFetchToMemRefusal(std::string_view text, std::string_view lower,
                           ExhaustionReading& reading) {
  constexpr std::string_view kGot = "but got ";
  const size_t got = lower.find(kGot);
  if (got == std::string_view::npos) return;
  reading.used_bytes = SizeAt(text.substr(got + kGot.size()));
  const size_t less = lower.find(" < ", got);
  if (less != std::string_view::npos && less - got < 64) {
    reading.limit_bytes = SizeAt(text.substr(less + 3));
  }
}
}  // namespace

const char* FailureCauseName(FailureCause cause) {
  switch (cause) {
    case FailureCause::kNone:
      return "none";
    case FailureCause::kOutOfMemory:
      return "out-of-memory";
    case FailureCause::kDiskFull:
      return "disk-full";
    case FailureCause::kFetchFailure:
      return "fetch-failure";
    case FailureCause::kExecutorLost:
      return "executor-lost";
    case FailureCause::kUserCode:
      return "user-code";
  }
  return "none";
}

namespace {
// Every Exhaustion, in enum order: its name and its words.
struct ExhaustionText {
  Exhaustion what;
  const char* name;
  const char* words;
};
constexpr ExhaustionText kExhaustionTexts[] = {
    {Exhaustion::kUnknown, "unknown", "cause unknown"},
    {Exhaustion::kExecutorHeap, "executor-heap", "executor heap exhausted"},
    {Exhaustion::kContainerMemory, "container-memory", "container memory limit exceeded"},
    {Exhaustion::kPythonMemory, "python-memory", "Python worker memory exhausted"},
    {Exhaustion::kDirectMemory, "direct-memory", "direct buffer memory exhausted"},
    {Exhaustion::kDirectBelowFetchToMem, "direct-below-fetch-to-mem",
     "executor refused to start: Netty direct memory below "
     "spark.network.maxRemoteBlockSizeFetchToMem"},
    {Exhaustion::kDriverResultSize, "driver-result-size",
     "driver result size over spark.driver.maxResultSize"},
    {Exhaustion::kDriverHeap, "driver-heap", "driver heap exhausted"},
    {Exhaustion::kDiskFull, "disk-full", "local disk full"},
};
constexpr bool InEnumOrder() {
  for (size_t i = 0; i < std::size(kExhaustionTexts); ++i) {
    if (static_cast<size_t>(kExhaustionTexts[i].what) != i) return false;
  }
  return std::size(kExhaustionTexts) == static_cast<size_t>(Exhaustion::kDiskFull) + 1;
}
static_assert(InEnumOrder(), "kExhaustionTexts has one row per Exhaustion, in enum order");
const ExhaustionText& TextOf(Exhaustion what) {
  const auto index = static_cast<size_t>(what);
  return kExhaustionTexts[index < std::size(kExhaustionTexts) ? index : 0];
}
}  // namespace

const char* ExhaustionName(Exhaustion what) { return TextOf(what).name; }
const char* ExhaustionWords(Exhaustion what) { return TextOf(what).words; }

bool IsMemory(Exhaustion what) {
  return what != Exhaustion::kUnknown && what != Exhaustion::kDiskFull;
}

int ExitCodeIn(std::string_view text) {
  const std::string lower = Lower(text);
  for (std::string_view marker : {"exited with code ", "exit code is ", "exit code ",
                                  "exit status: ", "exited with exit code "}) {
    const size_t at = lower.find(marker);
    if (at == std::string::npos) continue;
    const char* begin = lower.data() + at + marker.size();
    int code = -1;
    const auto [rest, error] = std::from_chars(begin, lower.data() + lower.size(), code);
    if (error == std::errc() && code >= 0 && code < 256) return code;
  }
  return -1;
}

ExhaustionReading ReadExhaustion(std::string_view text, bool exit_137_is_memory, bool driver_side) {
  ExhaustionReading reading;
  const std::string lower = Lower(text);
  reading.exit_code = ExitCodeIn(text);
  if (Has(lower, "maxresultsize") &&
      (Has(lower, "serialized results") || Has(lower, "broadcasted table"))) {
    reading.what = Exhaustion::kDriverResultSize;
    ReadResultSize(text, lower, reading);
  } else if (Has(lower, "no space left on device")) {
    reading.what = Exhaustion::kDiskFull;
  } else if (Has(lower, "netty direct memory should at least be bigger than")) {
    reading.what = Exhaustion::kDirectBelowFetchToMem;
    ReadFetchToMemRefusal(text, lower, reading);
  } else if (Has(lower, "direct buffer memory") || Has(lower, "outofdirectmemoryerror")) {
    reading.what = Exhaustion::kDirectMemory;
  } else if (HasWord(lower, "memoryerror") || Has(lower, "python worker exited unexpectedly")) {
    reading.what = Exhaustion::kPythonMemory;
  } else if (Has(lower, "memory limit") || Has(lower, "oomkilled") ||
             Has(lower, "physical memory")) {
    reading.what = Exhaustion::kContainerMemory;
    ReadPhysicalMemoryUse(text, lower, reading);
  } else if (Has(lower, "outofmemory") || Has(lower, "java heap space") ||
             Has(lower, "gc overhead limit") || Has(lower, "not enough memory to build")) {
    reading.what = driver_side ? Exhaustion::kDriverHeap : Exhaustion::kExecutorHeap;
  } else if (reading.exit_code == 52) {  // SparkExitCode.OOM: an executor's OutOfMemoryError
    reading.what = Exhaustion::kExecutorHeap;
  } else if (reading.exit_code == 137 && exit_137_is_memory) {
    reading.what = Exhaustion::kContainerMemory;
  }
  return reading;
}

ExhaustionReading ExecutorExhaustion(const Executor& executor, bool exit_137_is_memory) {
  ExhaustionReading reading = ReadExhaustion(executor.removed_reason, exit_137_is_memory);
  // Exit code 52 follows any OutOfMemoryError: the one its tasks reported says which memory.
  if (reading.what == Exhaustion::kExecutorHeap && !executor.out_of_memory_message.empty()) {
    const Exhaustion what = ReadExhaustion(executor.out_of_memory_message, exit_137_is_memory).what;
    if (what == Exhaustion::kDirectMemory) reading.what = what;
  }
  return reading;
}

ExhaustionReading TaskExhaustion(const ApplicationModel& model, const TaskAttempt& task,
                                 bool exit_137_is_memory) {
  const TaskFailure* failure = task.failure != kNone ? &model.task_failures[task.failure] : nullptr;
  ExhaustionReading reading;
  if (failure != nullptr) {
    reading = ReadExhaustion(
        failure->exception_class + ": " + failure->message_head + "\n" + failure->root_cause,
        exit_137_is_memory);
  }
  // A lost executor's words: an exit code alone (52 reads as the heap) is refined by what the
  // executor itself reported, as ExecutorExhaustion does.
  const bool exit_code_only = reading.what == Exhaustion::kExecutorHeap &&
                              reading.exit_code == 52 && failure != nullptr &&
                              Lower(failure->message_head).find("outofmemory") == std::string::npos;
  if (task.end != TaskEndKind::kExecutorLostFailure ||
      (reading.what != Exhaustion::kUnknown && !exit_code_only)) {
    return reading;
  }
  const std::string& executor_id =
      failure != nullptr && !failure->lost_executor_id.empty()
          ? failure->lost_executor_id
          : (task.executor != kNone ? model.strings.Get(task.executor) : std::string());
  if (const Executor* executor = model.FindExecutor(executor_id)) {
    ExhaustionReading removal = ExecutorExhaustion(*executor, exit_137_is_memory);
    if (exit_code_only) {
      if (removal.what == Exhaustion::kDirectMemory) reading.what = removal.what;
      return reading;
    }
    if (removal.what != Exhaustion::kUnknown || removal.exit_code >= 0) return removal;
  }
  return reading;
}

FetchToMemCheck ReadFetchToMemCheck(std::string_view java_options, const std::string& fetch_to_mem,
                                    const std::string& prefer_direct_bufs, int64_t heap_bytes) {
  FetchToMemCheck check;
  constexpr std::string_view kJvm = "-XX:MaxDirectMemorySize=";
  constexpr std::string_view kNetty = "-Dio.netty.maxDirectMemory=";
  const std::optional<std::string_view> jvm = LastJavaOptionValue(java_options, kJvm);
  const std::optional<std::string_view> netty = LastJavaOptionValue(java_options, kNetty);
  const std::optional<std::string_view> no_prefer_direct =
      LastJavaOptionValue(java_options, "-Dio.netty.noPreferDirect=");
  const int64_t jvm_limit = jvm ? ParseSizeBytes(std::string(*jvm), 1) : -1;
  const int64_t netty_limit = netty ? ParseSizeBytes(std::string(*netty), 1) : -1;
  const std::string jvm_limit_option = jvm ? std::string(kJvm) + std::string(*jvm) : "";
  const std::string netty_limit_option = netty ? std::string(kNetty) + std::string(*netty) : "";
  check.checked = Lower(prefer_direct_bufs) != "false" &&
                  !(no_prefer_direct && Lower(*no_prefer_direct) == "true");
  if (netty_limit > 0) {
    check.direct_limit_bytes = netty_limit;
    check.direct_limit_option = netty_limit_option;
  } else if (jvm_limit > 0) {
    check.direct_limit_bytes = jvm_limit;
    check.direct_limit_option = jvm_limit_option;
  } else if (jvm_limit < 0 && !jvm_limit_option.empty()) {
    check.direct_limit_bytes = -1;  // an option the JVM would refuse: not known
  } else {
    check.direct_limit_bytes = heap_bytes > 0 ? heap_bytes : -1;
  }
  constexpr int64_t kDefaultFetchToMem = int64_t{200} << 20;
  check.fetch_to_mem_bytes =
      fetch_to_mem.empty() ? kDefaultFetchToMem : ParseSizeBytes(fetch_to_mem, 1);
  return check;
}

const char* ClassifyRemovalReason(const std::string& reason_raw, bool exit_137_is_memory) {
  const std::string reason = Lower(reason_raw);
  if (reason.empty() || Has(reason, "dynamic allocation") || Has(reason, "explicit termination") ||
      Has(reason, "killed by driver") || Has(reason, "stopped") || Has(reason, "idle")) {
    return nullptr;
  }
  if (IsMemory(ReadExhaustion(reason_raw, exit_137_is_memory).what)) return "memory";
  if (Has(reason, "worker lost") || Has(reason, "disassociated") || Has(reason, "heartbeat") ||
      Has(reason, "preempt") || Has(reason, "decommission") || Has(reason, "lost worker")) {
    return "node";
  }
  return "other";
}

FailureCause ClassifyTaskFailure(const ApplicationModel& model, const TaskAttempt& task) {
  switch (task.end) {
    case TaskEndKind::kSuccess:
    case TaskEndKind::kNotEnded:
    case TaskEndKind::kTaskKilled:
    case TaskEndKind::kResubmitted:
    case TaskEndKind::kTaskCommitDenied:
      return FailureCause::kNone;
    case TaskEndKind::kFetchFailed:
      return FailureCause::kFetchFailure;
    default:
      break;
  }
  const Exhaustion what = TaskExhaustion(model, task, /*exit_137_is_memory=*/true).what;
  if (IsMemory(what)) return FailureCause::kOutOfMemory;
  if (what == Exhaustion::kDiskFull) return FailureCause::kDiskFull;
  if (task.end == TaskEndKind::kExecutorLostFailure) return FailureCause::kExecutorLost;
  const TaskFailure* failure = task.failure != kNone ? &model.task_failures[task.failure] : nullptr;
  if (failure != nullptr &&
      Has(Lower(failure->exception_class + " " + failure->message_head), "fetchfailed")) {
    return FailureCause::kFetchFailure;
  }
  return FailureCause::kUserCode;
}

bool IsJobGroupCancellation(std::string_view job_failure_message) {
  // Spark 3.4+ wraps it as an error: "[SPARK_JOB_CANCELLED] Job 2 cancelled ... SQLSTATE: XXKDA".
  if (job_failure_message.starts_with("[")) {
    const size_t close = job_failure_message.find("] ");
    if (close != std::string_view::npos) job_failure_message.remove_prefix(close + 2);
  }
  if (const size_t state = job_failure_message.rfind(" SQLSTATE: ");
      state != std::string_view::npos) {
    job_failure_message = job_failure_message.substr(0, state);
  }
  if (!job_failure_message.starts_with("Job ")) return false;
  if (job_failure_message.find(" cancelled part of cancelled job group ") !=
      std::string_view::npos) {
    return true;
  }
  return job_failure_message.find(" cancelled Query ") != std::string_view::npos &&
         job_failure_message.find(", runId = ") != std::string_view::npos &&
         job_failure_message.ends_with("] was stopped");
}

bool CancelledByQueryStop(const StreamingModel& streaming, const Job& job) {
  if (job.result != "JobFailed" || !IsJobGroupCancellation(job.failure_message_head)) return false;
  const StreamingQueryRun* run = streaming.FindRun(job.job_group);
  return run != nullptr && run->terminated && run->exception_head.empty();
}

bool InterruptedByQueryStop(const StreamingModel& streaming, const SqlExecution& sql) {
  constexpr std::string_view kRunId = "\nrunId = ";
  const std::string_view description = sql.description;
  const size_t at = description.find(kRunId);
  if (at == std::string_view::npos) return false;
  std::string_view run_id = description.substr(at + kRunId.size());
  run_id = run_id.substr(0, run_id.find('\n'));
  const StreamingQueryRun* run = streaming.FindRun(run_id);
  return run != nullptr && run->terminated && run->exception_head.empty() &&
         sql.end_time_ms >= run->last_progress_time_ms;
}

}  // namespace sparkprof::model
