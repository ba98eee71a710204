#include "analyzer/executor_logs/log_scanner.h"

#include <cctype>
#include <utility>

namespace sparkprof::executor_logs {

namespace {

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.rfind(prefix, 0) == 0;
}

std::string_view Word(std::string_view text) {
  size_t end = 0;
  while (end < text.size() && end < 128 && text[end] != ' ' && text[end] != '\t' &&
         text[end] != '\r') {
    ++end;
  }
  return text.substr(0, end);
}

class Scanner {
 public:
  Scanner(const std::string& display_name, size_t process, std::vector<LogProcess>& processes,
          LogHitTable& hits)
      : display_name_(display_name), process_(process), processes_(processes), hits_(hits) {}

  void Line(std::string_view line, uint64_t number) {
    if (Header(line)) return;
    const OwnerMarks marks = ReadOwnerMarks(line);
    LogProcess& process = processes_[process_];
    if (process.executor_id.empty()) {
      if (!marks.executor_id.empty()) {
        process.executor_id = CleanText(marks.executor_id, 64);
      } else if (marks.driver) {
        process.executor_id = "driver";
      }
    }
    if (marks.pid >= 0 && process.pid < 0) process.pid = marks.pid;
    LogTime time = ReadLogTime(line);
    if (time.epoch_ms >= 0) time_ = std::move(time);
    const std::optional<SignalMatch> match = MatchSignal(line);
    if (!match) return;
    LogHit hit;
    hit.signal = match->signal;
    hit.process = process_;
    hit.file = section_.empty() ? display_name_ : display_name_ + " (" + section_ + ")";
    hit.line = number;
    hit.time = time_.text;
    hit.time_ms = time_.epoch_ms;
    hit.text = CleanText(line);
    hit.exit_code = match->exit_code;
    hit.pid = match->pid;
    hit.memory_cgroup = match->memory_cgroup;
    hit.resident_bytes = match->resident_bytes;
    hits_.Add(std::move(hit));
  }

 private:
  // YARN's aggregated-log headers; true when the line was one.
  bool Header(std::string_view line) {
    constexpr std::string_view kContainer = "Container: ";
    if (StartsWith(line, kContainer) && StartsWith(line.substr(kContainer.size()), "container_")) {
      LogProcess process;
      process.container = CleanText(Word(line.substr(kContainer.size())), 128);
      process.app_id = ApplicationOfContainer(process.container);
      processes_.push_back(std::move(process));
      process_ = processes_.size() - 1;
      section_ = processes_[process_].container;
      time_ = {};
      return true;
    }
    if (processes_[process_].container.empty()) return false;
    constexpr std::string_view kLogType = "LogType:";
    if (StartsWith(line, kLogType)) {
      section_ =
          processes_[process_].container + ", " + CleanText(Word(line.substr(kLogType.size())), 64);
      return true;
    }
    if (StartsWith(line, "End of LogType:")) {
      section_ = processes_[process_].container;
      return true;
    }
    return StartsWith(line, "LogAggregationType:") || StartsWith(line, "LogLength:") ||
           StartsWith(line, "LogLastModifiedTime:") || StartsWith(line, "Log Upload Time:") ||
           StartsWith(line, "Log Contents:");
  }

  const std::string& display_name_;
  size_t process_;
  std::vector<LogProcess>& processes_;
  LogHitTable& hits_;
  std::string section_;  // "container_..., stderr" inside a YARN aggregated log
  LogTime time_;         // the last time a line started with: the block's
};

}  // namespace

std::string ApplicationOfContainer(std::string_view id) {
  constexpr std::string_view kPrefix = "container_";
  if (!StartsWith(id, kPrefix)) return "";
  id.remove_prefix(kPrefix.size());
  if (StartsWith(id, "e")) {  // the epoch: container_e12_...
    const size_t cut = id.find('_');
    if (cut == std::string_view::npos) return "";
    id.remove_prefix(cut + 1);
  }
  const size_t first = id.find('_');
  if (first == std::string_view::npos) return "";
  const size_t second = id.find('_', first + 1);
  if (second == std::string_view::npos) return "";
  const std::string_view cluster = id.substr(0, first);
  const std::string_view number = id.substr(first + 1, second - first - 1);
  for (std::string_view part : {cluster, number}) {
    if (part.empty() || part.size() > 20) return "";
    for (char c : part) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return "";
    }
  }
  return "application_" + std::string(cluster) + "_" + std::string(number);
}

ScanCounts ScanLogText(InputStream& stream, const std::string& display_name, size_t process,
                       std::vector<LogProcess>& processes, LogHitTable& hits, LogProblems& problems,
                       const ScanLimits& limits) {
  ScanCounts counts;
  Scanner scanner(display_name, process, processes, hits);
  std::string line;
  bool cutting = false;  // past max_line_bytes: skipping to the line's end
  uint64_t line_number = 0;
  char buffer[64 << 10];
  while (true) {
    if (counts.bytes >= limits.max_bytes_per_file) {
      counts.stopped_at_limit = true;
      problems.Add(display_name + ": only the first " + std::to_string(limits.max_bytes_per_file) +
                   " bytes read (the limit per log file, docs/limits.md)");
      return counts;
    }
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>(sizeof(buffer), limits.max_bytes_per_file - counts.bytes));
    Result<size_t> got = stream.Read(buffer, want);
    if (!got.ok()) {
      problems.Add(display_name + ": " + got.status().message() + " (after " +
                   std::to_string(counts.bytes) + " decoded bytes, line " +
                   std::to_string(line_number + 1) + "); the rest of the file is not read");
      break;
    }
    if (*got == 0) break;
    counts.bytes += *got;
    std::string_view chunk(buffer, *got);
    while (!chunk.empty()) {
      const size_t end = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, end);
      if (!cutting) {
        const size_t room = limits.max_line_bytes - line.size();
        line.append(piece.substr(0, room));
        if (piece.size() > room) {
          cutting = true;
          ++counts.lines_cut;
        }
      }
      if (end == std::string_view::npos) break;
      chunk.remove_prefix(end + 1);
      ++line_number;
      if (line_number > limits.max_lines_per_file) {
        counts.stopped_at_limit = true;
        problems.Add(display_name + ": only the first " +
                     std::to_string(limits.max_lines_per_file) +
                     " lines read (the limit per log file, docs/limits.md)");
        counts.lines = limits.max_lines_per_file;
        return counts;
      }
      scanner.Line(line, line_number);
      line.clear();
      cutting = false;
    }
  }
  if (!line.empty()) scanner.Line(line, ++line_number);
  counts.lines = line_number;
  if (counts.lines_cut > 0) {
    problems.Add(display_name + ": " + std::to_string(counts.lines_cut) + " line(s) longer than " +
                 std::to_string(limits.max_line_bytes) + " bytes read only up to there");
  }
  return counts;
}

}  // namespace sparkprof::executor_logs
