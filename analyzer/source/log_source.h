// Finds the event logs behind a path a user gives: a file, a rolling eventlog_v2_ directory,
// a Databricks delivery folder, a History Server zip, a directory of many applications, or
// archives nested inside archives. Groups the parts of one application in reading order.
//
// Discovery only finds, groups and opens raw bytes: it never decompresses a part's codec and
// never parses JSON, so a file that is not an event log surfaces later as a reader error.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/input_stream.h"

namespace sparkprof::source {

struct DiscoveryWarning {
  std::string path;
  std::string message;
};

// One physical piece of an event log: a file, or a zip entry.
struct LogPart {
  // What error messages and the report call it: a path, or "archive.zip!dir/events_1_x.zstd".
  std::string display_name;
  // Raw (still compressed) bytes of the part; callable more than once, and each stream it
  // returns is independent of the others (a zip entry reopens its archive), so parts of
  // different applications may be read on different threads.
  std::function<Result<std::unique_ptr<InputStream>>()> open;
  uint64_t size_bytes = 0;  // on disk / in the archive (compressed), 0 if unknown
  // The file on disk that holds the bytes: the part itself, or the (outermost) zip holding
  // it; empty when the bytes did not come from a disk. Lets a command refuse to write its
  // report over its own input.
  std::string disk_file;
};

// All parts of one application attempt, in the order their events must be read.
struct ApplicationLog {
  // The rolling directory name ("eventlog_v2_local-1623876083964"), the Databricks folder
  // name, or the file name of a single-file log.
  std::string name;
  std::vector<LogPart> parts;
  // What the file layout says: ".inprogress" suffix, or "appstatus_*.inprogress" in a rolling
  // directory. Whether ApplicationEnd was seen is decided by the reader, not here.
  bool in_progress_by_name = false;
  // "single", "rolling" or "databricks" -- for the report's input section.
  std::string layout;
  // The chain of archives the parts were found in ("logs.zip", "outer.zip!inner.zip"),
  // empty when they are plain files.
  std::string archive;
  // What discovery left out around this log, for its report's input section (stderr has them
  // all): the warnings below the folder holding its parts, and those under no log's folder.
  // At most kMaxWarningsPerLog; warnings_left_out counts the rest.
  static constexpr size_t kMaxWarningsPerLog = 50;
  std::vector<DiscoveryWarning> warnings;
  uint64_t warnings_left_out = 0;
};

struct DiscoveryResult {
  // Sorted by name, then by the first part's display name, so output is deterministic.
  std::vector<ApplicationLog> applications;
  std::vector<DiscoveryWarning> warnings;  // skipped entries, unreadable archives, ...
};

// Every default is in docs/limits.md.
struct DiscoveryLimits {
  // libzip must seek, so a zip inside a zip is copied to an unlinked temporary file in TMPDIR
  // (held in memory only where no such file can be made): each one up to this size, and all of
  // them together (they stay until the report is written) up to the total. A larger nested zip
  // is skipped with a warning naming it; everything else is still analysed.
  uint64_t max_nested_archive_bytes = 256ull << 20;
  uint64_t max_nested_archive_total_bytes = 512ull << 20;
  int max_archive_depth = 4;  // outer.zip!inner.zip counts as 2
  // Directory levels below the given path (and below each archive's root) that are searched;
  // guards against pathological trees and absurdly deep zip entry names.
  int max_directory_depth = 32;
  // Entries of one archive looked at; the rest are skipped with a warning.
  uint64_t max_archive_entries = 1'000'000;
};

// NotFound when `path` does not exist; otherwise a (possibly empty) result with warnings.
Result<DiscoveryResult> Discover(const std::string& path, const DiscoveryLimits& limits = {});

class Folder;
struct FileEntry;

// The same search below a folder, or from a file, that the caller lists and opens itself (the
// Python package walks object stores and downloads through these; see folder.h).
DiscoveryResult DiscoverFolder(const Folder& folder, const DiscoveryLimits& limits = {});
DiscoveryResult DiscoverFile(const FileEntry& file, const DiscoveryLimits& limits = {});

// Treats `bytes` as a zip archive called `display_name` (for input that did not come from a
// file, and for fuzzing). Not a zip, or a corrupt one, gives an empty result with a warning.
DiscoveryResult DiscoverArchiveBytes(const std::string& display_name, std::string bytes,
                                     const DiscoveryLimits& limits = {});

}  // namespace sparkprof::source
