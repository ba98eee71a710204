// Finds the event logs behind a path a user gives: a file, a rolling eventlog_v2_ directory,
// a Databricks delivery folder, a History Server zip, a directory of many applications, or
// archives nested inside archives. Groups the parts of one application in reading order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/input_stream.h"

namespace sparkprof::source {

// One physical piece of an event log: a file, or a zip entry.
struct LogPart {
  // What error messages and the report call it: a path, or "archive.zip!dir/events_1_x.zstd".
  std::string display_name;
  // Raw (still compressed) bytes of the part; callable more than once.
  std::function<Result<std::unique_ptr<InputStream>>()> open;
  uint64_t size_bytes = 0;  // on disk / in the archive (compressed), 0 if unknown
};

// All parts of one application attempt, in the order their events must be read.
struct ApplicationLog {
  std::string name;  // e.g. "eventlog_v2_local-1623876083964" or the file name
  std::vector<LogPart> parts;
  // What the file layout says: ".inprogress" suffix, or "appstatus_*.inprogress" in a rolling
  // directory. Whether ApplicationEnd was seen is decided by the reader, not here.
  bool in_progress_by_name = false;
  // "single", "rolling", "databricks", "zip" -- for the report's input section.
  std::string layout;
};

struct DiscoveryWarning {
  std::string path;
  std::string message;
};

struct DiscoveryResult {
  std::vector<ApplicationLog> applications;
  std::vector<DiscoveryWarning> warnings;  // skipped entries, unreadable archives, ...
};

struct DiscoveryLimits {
  uint64_t max_nested_archive_bytes = 2ull << 30;  // a nested zip is held in memory up to this
  int max_archive_depth = 4;
};

// NotFound when `path` does not exist; otherwise a (possibly empty) result with warnings.
Result<DiscoveryResult> Discover(const std::string& path, const DiscoveryLimits& limits = {});

}  // namespace sparkprof::source
