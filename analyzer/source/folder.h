// One way to walk directories on disk and directories inside zip archives, so the layout rules
// (rolling, Databricks, single files) are written once for both.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/source/log_source.h"
#include "analyzer/source/zip_archive.h"
#include "common/input_stream.h"

namespace sparkprof::source {

using StreamOpener = std::function<Result<std::unique_ptr<InputStream>>()>;

struct FileEntry {
  std::string name;          // last path component
  std::string display_name;  // "dir/name" or "logs.zip!dir/name"
  uint64_t size_bytes = 0;
  uint64_t declared_bytes = 0;  // an archive entry's declared uncompressed size; 0 if unknown
  std::string disk_path;        // empty for an archive entry
  std::string disk_file;        // the file on disk holding the bytes (see LogPart::disk_file)
  std::string archive;          // the archive chain holding the entry; empty on disk
  // Independent stream for a LogPart: may be called after discovery has finished.
  StreamOpener open;
  // Cheaper stream for looking inside during discovery (shares the open archive); valid only
  // while the Folder that listed the entry is alive.
  StreamOpener open_during_scan;
};

class Folder;

struct FolderListing {
  std::vector<FileEntry> files;                  // junk names removed, sorted by name
  std::vector<std::unique_ptr<Folder>> folders;  // junk names removed, sorted by name
};

class Folder {
 public:
  virtual ~Folder() = default;
  virtual const std::string& name() const = 0;
  virtual const std::string& display_name() const = 0;
  // The path on disk, or empty inside an archive; lets the walker detect symlink loops.
  virtual const std::string& disk_path() const = 0;
  // Problems with single children (unreadable, broken links) become warnings.
  virtual FolderListing List(std::vector<DiscoveryWarning>* warnings) const = 0;
};

FileEntry MakeDiskFileEntry(const std::string& path, const std::string& display_name,
                            uint64_t size_bytes);

std::unique_ptr<Folder> MakeDiskFolder(const std::string& path, const std::string& display_name);

// The root of an opened archive. Entries deeper than `limits.max_directory_depth`, or past
// `limits.max_archive_entries`, are skipped with a warning.
std::unique_ptr<Folder> MakeArchiveRootFolder(std::shared_ptr<ZipArchive> archive,
                                              const DiscoveryLimits& limits,
                                              std::vector<DiscoveryWarning>* warnings);

}  // namespace sparkprof::source
