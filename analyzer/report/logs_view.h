// The executors' and the driver's own logs in words (`analyze --logs`), one place for the text,
// Markdown and HTML reports (each escapes the strings as its format needs).
#pragma once

#include <string>
#include <vector>

#include "analyzer/executor_logs/executor_logs.h"

namespace sparkprof::report {

// "12 files (3 executors, the driver) read from work/: standalone, kernel; 2 problems".
std::string LogsSummaryText(const executor_logs::ExecutorLogs& logs);
// One line per hit, in time order: "executor 1 at 26/11/29 16:32:22, worker-1/app-1/1/stderr
// line 61: java.lang.OutOfMemoryError: Java heap space (2 times, the last at ...)"; past
// `max_lines`, one line saying how many more (the JSON report has them all).
std::vector<std::string> LogHitLines(const executor_logs::ExecutorLogs& logs, size_t max_lines);

}  // namespace sparkprof::report
