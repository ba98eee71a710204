// Reads one log file's text line by line and keeps what log_signals.h finds, with its process,
// line and time. Knows the one layout that holds many processes in one file: YARN's aggregated
// logs as `yarn logs -applicationId ...` prints them ("Container: container_... on host_port",
// "LogAggregationType: ...", "LogType:stderr", "LogLength:", "Log Contents:", the log, "End of
// LogType:stderr"), each container a process of its own.
//
// Bounded (docs/limits.md): bytes and lines read per file, line length; what is past a limit is
// counted and named, never read. Hostile bytes (NULs, no newlines, broken gzip) give counted,
// located problems and the scan goes on with the next file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/executor_logs/log_hits.h"
#include "common/input_stream.h"

namespace sparkprof::executor_logs {

struct ScanLimits {
  uint64_t max_bytes_per_file = uint64_t{256} << 20;  // decoded bytes read of one file
  uint64_t max_lines_per_file = 4'000'000;
  size_t max_line_bytes = 64 << 10;  // a longer line is read up to here, the rest skipped
};

struct ScanCounts {
  uint64_t bytes = 0;
  uint64_t lines = 0;
  uint64_t lines_cut = 0;  // longer than max_line_bytes
  bool stopped_at_limit = false;
};

// Scans `stream` (already decoded) called `display_name`. Its lines belong to `process` (an
// index into `processes`) until a YARN "Container:" header opens a new one; owner lines
// ("Starting executor ID", "Started daemon with process name", the driver's "Running Spark
// version") name the current process when it has no name yet.
ScanCounts ScanLogText(InputStream& stream, const std::string& display_name, size_t process,
                       std::vector<LogProcess>& processes, LogHitTable& hits, LogProblems& problems,
                       const ScanLimits& limits = {});

// The application id a YARN container id belongs to: "container_1700000000000_0001_01_000002"
// or "container_e12_1700000000000_0001_01_000002" -> "application_1700000000000_0001"; "" when
// it is not one.
std::string ApplicationOfContainer(std::string_view container_id);

}  // namespace sparkprof::executor_logs
