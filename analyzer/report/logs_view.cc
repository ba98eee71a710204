#include "analyzer/report/logs_view.h"

#include <set>

namespace sparkprof::report {

namespace {
std::string Plural(uint64_t count, const char* one, const char* many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}
}  // namespace

std::string LogsSummaryText(const executor_logs::ExecutorLogs& logs) {
  std::set<std::string> executors;
  bool driver = false;
  for (const executor_logs::LogProcess& process : logs.processes) {
    if (process.executor_id == "driver") {
      driver = true;
    } else if (!process.executor_id.empty()) {
      executors.insert(process.executor_id);
    }
  }
  std::string text = Plural(logs.files_read, "file", "files") + " read from " + logs.source;
  text += " (" + Plural(executors.size(), "executor", "executors") +
          (driver ? ", the driver" : "") + ")";
  if (!logs.layouts.empty()) {
    text += ": ";
    for (size_t i = 0; i < logs.layouts.size(); ++i) text += (i ? ", " : "") + logs.layouts[i];
  }
  if (logs.files_not_logs > 0) {
    text += "; " + Plural(logs.files_not_logs, "file", "files") + " not logs by name";
  }
  if (logs.files_left_out > 0) {
    text += "; " + Plural(logs.files_left_out, "file", "files") + " past the limits, not read";
  }
  if (logs.other_application_hits > 0) {
    text += "; " + Plural(logs.other_application_hits, "finding", "findings") +
            " of other applications left out";
  }
  if (logs.problems.count > 0) text += "; " + Plural(logs.problems.count, "problem", "problems");
  return text;
}

std::vector<std::string> LogHitLines(const executor_logs::ExecutorLogs& logs, size_t max_lines) {
  std::vector<std::string> lines;
  for (const executor_logs::LogHit& hit : logs.hits) {
    if (lines.size() >= max_lines) break;
    const std::string& executor = logs.ExecutorOf(hit);
    const executor_logs::LogProcess& process = logs.processes[hit.process];
    std::string line = executor == "driver"         ? "the driver"
                       : !executor.empty()          ? "executor " + executor
                       : !process.container.empty() ? process.container + " (executor unknown)"
                                                    : std::string("a process of unknown executor");
    if (!hit.time.empty()) line += " at " + hit.time;
    line += ", " + hit.file + " line " + std::to_string(hit.line) + ": " +
            std::string(executor_logs::TextAfterTime(hit));
    if (hit.count > 1) {
      line += " (" + std::to_string(hit.count) + " times" +
              (hit.last_time.empty() ? std::string() : ", the last at " + hit.last_time) + ")";
    }
    lines.push_back(std::move(line));
  }
  const uint64_t more = logs.hits.size() - lines.size() + logs.hits_left_out;
  if (more > 0) {
    lines.push_back(std::to_string(more) + " more (the JSON report lists " +
                    std::to_string(logs.hits.size()) + ")");
  }
  return lines;
}

}  // namespace sparkprof::report
