// What the executor and driver logs said, as the reader found it: each telling line (a hit) with
// the process it came from, where and when. Shared by the scanner, the reader of Kubernetes pod
// states and the join with the event log's executors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analyzer/executor_logs/log_signals.h"

namespace sparkprof::executor_logs {

// One process whose log was read: an executor, the driver, or one not yet known (a YARN
// container before its "Starting executor ID" line). Hits point at their process by index, so
// a process named after its first hits still owns them.
struct LogProcess {
  std::string executor_id;  // "driver" for the driver; "" while unknown
  std::string app_id;       // from the path, the container id or the pod's labels; "" unknown
  std::string container;    // YARN container id or Kubernetes pod name; "" otherwise
  int64_t pid = -1;         // "Started daemon with process name: <pid>@host"
};

struct LogHit {
  LogSignal signal = LogSignal::kExitCode;
  size_t process = 0;    // index into ExecutorLogs::processes
  std::string file;      // display name ("work/app-1/3/stderr", "yarn.log (container_.., stderr)")
  uint64_t line = 0;     // 1-based line number in the (decoded) file
  std::string time;      // the log4j time as written; "" when the line's block had none
  int64_t time_ms = -1;  // that time read as UTC (log_signals.h ReadLogTime), -1 when none
  std::string text;      // the line, cut at kMaxHitTextBytes, control bytes replaced
  int exit_code = -1;
  int64_t pid = -1;             // a kernel kill's victim
  bool memory_cgroup = false;   // a kernel kill in a memory cgroup
  int64_t resident_bytes = -1;  // a kernel kill's victim's resident set, -1 when not said
  uint64_t count = 1;           // the same signal and text again in the same process
  std::string last_time;        // the last repeat's time
  int64_t last_time_ms = -1;
};

inline constexpr size_t kMaxHitTextBytes = 300;

// The hits kept: one per process, signal and text (repeats counted), at most `max_hits`.
class LogHitTable {
 public:
  explicit LogHitTable(size_t max_hits) : max_hits_(max_hits) {}
  void Add(LogHit hit);
  std::vector<LogHit>& hits() { return hits_; }
  uint64_t left_out() const { return left_out_; }

 private:
  size_t max_hits_;
  std::vector<LogHit> hits_;
  std::map<std::tuple<size_t, LogSignal, std::string>, size_t> index_;
  uint64_t left_out_ = 0;
};

// Problems met while reading, each naming its file and line or byte offset: the first
// kMaxKept kept for the report, all counted.
struct LogProblems {
  static constexpr size_t kMaxKept = 50;
  std::vector<std::string> messages;
  uint64_t count = 0;
  void Add(std::string message) {
    ++count;
    if (messages.size() < kMaxKept) messages.push_back(std::move(message));
  }
};

// The hit's text without the time it starts with ("[Sun Nov 29 16:34:21 2026] Memory cgroup
// ..." -> "Memory cgroup ..."), for sentences that say the time already.
std::string_view TextAfterTime(const LogHit& hit);

// `text` cut at `max_bytes` (at a UTF-8 boundary), control bytes but tab as '?'.
std::string CleanText(std::string_view text, size_t max_bytes = kMaxHitTextBytes);

}  // namespace sparkprof::executor_logs
