#include "analyzer/executor_logs/log_signals.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "analyzer/model/failure_causes.h"
#include "common/civil_time.h"

namespace sparkprof::executor_logs {

namespace {

struct SignalText {
  const char* name;
  const char* what;
};
constexpr SignalText kSignalTexts[] = {
#define SPARKPROF_LOG_SIGNAL_TEXT(id, name, what) {name, what},
    SPARKPROF_LOG_SIGNALS(SPARKPROF_LOG_SIGNAL_TEXT)
#undef SPARKPROF_LOG_SIGNAL_TEXT
};

bool Has(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

// The decimal number at `at` in `text`, -1 when there is none.
int64_t NumberAt(std::string_view text, size_t at) {
  if (at >= text.size()) return -1;
  int64_t value = -1;
  const auto [end, error] = std::from_chars(text.data() + at, text.data() + text.size(), value);
  return error == std::errc() && value >= 0 ? value : -1;
}

std::string_view TrimLeft(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  return text;
}

std::optional<SignalMatch> OutOfMemory(std::string_view line) {
  const bool java = Has(line, "OutOfMemoryError") || Has(line, "OutOfDirectMemoryError");
  if (!java) return std::nullopt;
  if (Has(line, "OutOfDirectMemoryError") || Has(line, "Direct buffer memory")) {
    return SignalMatch{LogSignal::kDirectBufferMemory};
  }
  if (Has(line, "Java heap space")) return SignalMatch{LogSignal::kHeapSpace};
  if (Has(line, "GC overhead limit exceeded")) return SignalMatch{LogSignal::kGcOverhead};
  if (Has(line, "Metaspace") || Has(line, "Compressed class space")) {
    return SignalMatch{LogSignal::kMetaspace};
  }
  if (Has(line, "native thread")) return SignalMatch{LogSignal::kNativeThread};
  // "-XX:OnOutOfMemoryError" in a command line is not one.
  if (Has(line, "OnOutOfMemoryError") || Has(line, "ExitOnOutOfMemoryError")) return std::nullopt;
  return SignalMatch{LogSignal::kOtherOutOfMemory};
}

// "Killed process 20473 (java)", as the kernel writes it after choosing a victim.
std::optional<SignalMatch> KernelKill(std::string_view line) {
  constexpr std::string_view kKilled = "Killed process ";
  const size_t at = line.find(kKilled);
  if (at == std::string_view::npos) return std::nullopt;
  if (!Has(line, "out of memory") && !Has(line, "Out of memory")) return std::nullopt;
  SignalMatch match{LogSignal::kKernelOomKill};
  match.pid = NumberAt(line, at + kKilled.size());
  match.memory_cgroup = Has(line, "Memory cgroup out of memory");
  match.exit_code = 137;
  int64_t resident_kib = -1;
  for (std::string_view key : {"anon-rss:", "file-rss:", "shmem-rss:"}) {
    const size_t at = line.find(key);
    const int64_t kib = at == std::string_view::npos ? -1 : NumberAt(line, at + key.size());
    if (kib >= 0 && kib < (int64_t{1} << 40))
      resident_kib = std::max<int64_t>(resident_kib, 0) + kib;
  }
  if (resident_kib >= 0) match.resident_bytes = resident_kib * 1024;
  return match;
}

}  // namespace

const char* LogSignalName(LogSignal signal) {
  const auto index = static_cast<size_t>(signal);
  return index < std::size(kSignalTexts) ? kSignalTexts[index].name : "unknown";
}
const char* LogSignalWhat(LogSignal signal) {
  const auto index = static_cast<size_t>(signal);
  return index < std::size(kSignalTexts) ? kSignalTexts[index].what : "unknown";
}

// A line that reports another process's failure: the driver's "Lost task 2.0 in stage 0.0 (TID
// 4) (host executor 2): java.lang.OutOfMemoryError", a job's abort message quoted in an executor's
// "trying to kill task ... reason: Stage cancelled: ... most recent failure: ...". What it quotes
// happened elsewhere (that executor's own log says it), so it is no signal of this process.
bool QuotesAnotherProcess(std::string_view line) {
  return Has(line, "Lost task ") || Has(line, "most recent failure") || Has(line, "Job aborted") ||
         Has(line, "TaskSetManager:");
}

std::optional<SignalMatch> MatchSignal(std::string_view line) {
  if (QuotesAnotherProcess(line)) return std::nullopt;
  // CoarseGrainedExecutorBackend's start-up check (3.5, 4.x): "Executor self-exiting due to :
  // Unable to create executor due to Netty direct memory should at least be bigger than
  // 'spark.network.maxRemoteBlockSizeFetchToMem', but got 67108864 bytes < 209715200", then the
  // SparkException's own line with the same words.
  if (Has(line, "Netty direct memory should at least be bigger than")) {
    SignalMatch match{LogSignal::kDirectBelowFetchToMem};
    match.exit_code = 1;  // exitExecutor(1, ...)
    return match;
  }
  if (auto oom = OutOfMemory(line)) return oom;
  if (auto kill = KernelKill(line)) return kill;
  if (Has(line, "No space left on device")) return SignalMatch{LogSignal::kDiskFull};
  if (Has(line, "Python worker exited unexpectedly")) {
    return SignalMatch{LogSignal::kPythonWorkerCrashed};
  }
  // A traceback's last line: "MemoryError" alone or with a message; never "OutOfMemoryError".
  const std::string_view trimmed = TrimLeft(line);
  if (trimmed.rfind("MemoryError", 0) == 0 &&
      (trimmed.size() == 11 || trimmed[11] == ':' || trimmed[11] == ' ' || trimmed[11] == '\r')) {
    return SignalMatch{LogSignal::kPythonMemoryError};
  }
  if (Has(line, "beyond the 'PHYSICAL' memory limit") ||
      Has(line, "beyond physical memory limits") ||
      (Has(line, "Container killed") && Has(line, "memory limit"))) {
    SignalMatch match{LogSignal::kContainerMemoryKill};
    match.exit_code = model::ExitCodeIn(line);
    return match;
  }
  if (Has(line, "RECEIVED SIGNAL TERM")) return SignalMatch{LogSignal::kSigterm};
  if (Has(line, "FetchFailedException") || Has(line, "FetchFailed(")) {
    return SignalMatch{LogSignal::kFetchFailed};
  }
  // Exit codes as the Worker, YARN's NodeManager and the scheduler backends write them.
  if (Has(line, "exited with code") || Has(line, "Exit code is") || Has(line, "Exit status:") ||
      Has(line, "exitCode") || Has(line, "exited with exit code")) {
    const int code = model::ExitCodeIn(line);
    if (code > 0) {
      SignalMatch match{LogSignal::kExitCode};
      match.exit_code = code;
      return match;
    }
  }
  return std::nullopt;
}

OwnerMarks ReadOwnerMarks(std::string_view line) {
  OwnerMarks marks;
  constexpr std::string_view kStarting = "Starting executor ID ";
  if (size_t at = line.find(kStarting); at != std::string_view::npos) {
    at += kStarting.size();
    size_t end = at;
    while (end < line.size() && end - at < 64 && line[end] != ' ' && line[end] != '\t' &&
           line[end] != '\r') {
      ++end;
    }
    marks.executor_id = std::string(line.substr(at, end - at));
  }
  constexpr std::string_view kDaemon = "Started daemon with process name: ";
  if (size_t at = line.find(kDaemon); at != std::string_view::npos) {
    marks.pid = NumberAt(line, at + kDaemon.size());
  }
  marks.driver = Has(line, "SparkContext: Running Spark version");
  return marks;
}

namespace {

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

}  // namespace

LogTime ReadLogTime(std::string_view line) {
  LogTime time;
  // Spark's default: "26/11/29 16:30:20 ERROR Executor: ..."
  if (line.size() >= 17 && line[2] == '/' && line[5] == '/' && line[8] == ' ' && line[11] == ':' &&
      line[14] == ':') {
    const int64_t epoch = CivilEpochMs(2000 + DecimalDigits(line, 0, 2), DecimalDigits(line, 3, 2),
                                       DecimalDigits(line, 6, 2), DecimalDigits(line, 9, 2),
                                       DecimalDigits(line, 12, 2), DecimalDigits(line, 15, 2), 0);
    if (epoch >= 0 && DecimalDigits(line, 0, 2) >= 0) {
      time.text = std::string(line.substr(0, 17));
      time.epoch_ms = epoch;
      return time;
    }
  }
  // ISO, at the start or as a JSON line's "ts" (Spark 4's structured logging).
  std::string_view iso = line;
  if (!line.empty() && line.front() == '{') {
    constexpr std::string_view kTs = "\"ts\":\"";
    const size_t at = line.find(kTs);
    if (at == std::string_view::npos) return time;
    iso = line.substr(at + kTs.size());
  }
  if (const int64_t epoch = ParseIsoTime(iso); epoch >= 0) {
    size_t end = 19;
    while (end < iso.size() && end < 32 && iso[end] != ' ' && iso[end] != '"' && iso[end] != '\t') {
      ++end;
    }
    time.text = std::string(iso.substr(0, end));
    time.epoch_ms = epoch;
    return time;
  }
  // dmesg -T: "[Sun Nov 29 16:30:20 2026] ..."
  if (line.size() >= 26 && line[0] == '[' && line[4] == ' ') {
    const std::string_view month_name = line.substr(5, 3);
    for (size_t m = 0; m < kMonths.size(); ++m) {
      if (kMonths[m] != month_name) continue;
      const size_t day_at = line[9] == ' ' ? 10 : 9;
      const int day = DecimalDigits(line, day_at, line[9] == ' ' ? 1 : 2);
      const size_t clock = day_at + (line[9] == ' ' ? 2 : 3);
      const int64_t epoch =
          CivilEpochMs(DecimalDigits(line, clock + 9, 4), static_cast<int>(m) + 1, day,
                       DecimalDigits(line, clock, 2), DecimalDigits(line, clock + 3, 2),
                       DecimalDigits(line, clock + 6, 2), 0);
      const size_t close = line.find(']');
      if (epoch >= 0 && close != std::string_view::npos && close < 32) {
        time.text = std::string(line.substr(1, close - 1));
        time.epoch_ms = epoch;
      }
      break;
    }
  }
  return time;
}

}  // namespace sparkprof::executor_logs
