// The file-name grammar Spark and Databricks use for event logs (spark-facts.md 5.2), and the
// names of files that are never logs (OS and tool droppings). Pure functions, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sparkprof::source {

inline constexpr std::string_view kInProgressSuffix = ".inprogress";
inline constexpr std::string_view kRollingDirectoryPrefix = "eventlog_v2_";
inline constexpr std::string_view kDatabricksCurrentPart = "eventlog";

// Hidden files (".DS_Store", "._x" AppleDouble, ".git"), "__MACOSX" folders and Hadoop ".crc"
// checksum files: skipped silently wherever they appear below the path the user gave.
bool IsJunkName(std::string_view name);

// The folder sparkprof's driver stores an application's outputs in beside its event log
// (`<app id>[_<attempt>].sparkprof`: reports, flame graphs, the profile; spark-plugin's
// EventLogDirOutputs): not an event log, skipped silently as Spark's History Server skips it.
inline constexpr std::string_view kSparkprofOutputsSuffix = ".sparkprof";
bool IsSparkprofOutputsFolder(std::string_view folder_name);

bool HasInProgressSuffix(std::string_view name);

// Drops one trailing Spark codec extension (.lz4 .snappy .zstd .lzf .gz); `name` otherwise.
std::string_view StripCodecExtension(std::string_view name);

// Drops trailing codec extensions and ".zip" in any order (at most four):
// "eventlog-2022-01-14--17-00.zip.gz" -> "eventlog-2022-01-14--17-00".
std::string_view StripArchiveAndCodecExtensions(std::string_view name);

// The name under which discovery searches a zip compressed with a codec (".zip" among the
// extensions): the last component of `path`, its codec extension replaced by ".zip" and
// `codec_extension` -- "dir/x.gz" holding a gzipped zip -> "x.zip.gz".
std::string CompressedArchiveName(std::string_view path, std::string_view codec_extension);

// `events_<index>_<app>[.<codec>][.compact]` inside a rolling directory.
struct RollingEventFileName {
  uint64_t index = 0;
  bool compact = false;
};
std::optional<RollingEventFileName> ParseRollingEventFileName(std::string_view name);

// `appstatus_<app>[.inprogress]`: zero bytes, marks a rolling log and whether it is finished.
bool IsAppStatusName(std::string_view name);

bool HasRollingDirectoryPrefix(std::string_view name);

// Databricks log delivery writes `eventlog` (the part being written) and rotates hourly into
// `eventlog-YYYY-MM-DD--HH-MM[.gz]`. The key orders parts for reading: dated parts by time,
// then the current part.
struct DatabricksPartName {
  bool current = false;
  std::string time_key;  // "YYYY-MM-DD--HH-MM"; empty for the current part
};
std::optional<DatabricksPartName> ParseDatabricksPartName(std::string_view name);

}  // namespace sparkprof::source
