// Turns the files of one folder into an application: the rules that decide which files belong
// together and in which order their events are read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/source/folder.h"
#include "analyzer/source/log_source.h"

namespace sparkprof::source {

// A file that is a whole event log by itself.
ApplicationLog MakeSingleFileLog(const FileEntry& file);

// True when `folder_name` is `eventlog_v2_*`, or when the files carry the rolling names
// (an appstatus_ file next to events_<N>_ files) in a folder someone renamed.
bool IsRollingFolder(const std::string& folder_name, const std::vector<FileEntry>& files);

// Spark's reader order: by index, a `.compact` file after the normal file of the same index,
// and nothing before the last compact file. Warns about gaps and stray files; nullopt when the
// folder holds no event files at all.
std::optional<ApplicationLog> MakeRollingLog(const Folder& folder,
                                             const std::vector<FileEntry>& files,
                                             std::vector<DiscoveryWarning>* warnings);

// Moves the Databricks parts (`eventlog`, `eventlog-YYYY-MM-DD--HH-MM[.gz]`) out of `files`
// and, when there are any, returns them as one application: dated parts by time, then the
// current part.
std::optional<ApplicationLog> TakeDatabricksLog(const Folder& folder,
                                                std::vector<FileEntry>* files);

}  // namespace sparkprof::source
