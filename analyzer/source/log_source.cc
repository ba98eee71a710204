#include "analyzer/source/log_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "analyzer/codec/codec.h"
#include "analyzer/source/folder.h"
#include "analyzer/source/log_layouts.h"
#include "analyzer/source/log_names.h"
#include "analyzer/source/zip_archive.h"
#include "common/errno_text.h"

namespace sparkprof::source {
namespace {

namespace fs = std::filesystem;

// A zip's signature; the codecs' magic bytes need up to codec::kSniffBytes.
constexpr size_t kSniffBytes = 4;

// An unlinked temporary file: gone from the directory at once, alive while its descriptor is.
class TemporaryFile {
 public:
  explicit TemporaryFile(int fd) : fd_(fd) {}
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() { ::close(fd_); }
  int fd() const { return fd_; }
  // Opening this path gives an open file description of its own (its own offset), so every
  // libzip handle on the copy is independent.
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

std::shared_ptr<TemporaryFile> MakeTemporaryFile() {
  std::error_code error;
  fs::path directory = fs::temp_directory_path(error);
  if (error) return nullptr;
  std::string name = (directory / "sparkprof-nested-XXXXXX").string();
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return nullptr;  // no room, no permission, no descriptors left: memory instead
  ::unlink(name.c_str());
  auto file = std::make_shared<TemporaryFile>(fd);
  int probe = ::open(file->path().c_str(), O_RDONLY | O_CLOEXEC);
  if (probe < 0) return nullptr;  // no /proc
  ::close(probe);
  return file;
}

// The whole of a nested archive where libzip can seek in it: in an unlinked temporary file (a
// zip of zips held in memory until the report was written took a 7 MB zip to 7.7 GB), in memory
// where no such file can be made. TooLarge past `limit` bytes; reads rather than trusting a
// declared size: a zip entry can claim anything.
Result<ArchiveSource> CopyNestedArchive(InputStream& stream, uint64_t limit, uint64_t* size) {
  std::shared_ptr<TemporaryFile> file = MakeTemporaryFile();
  std::string bytes;
  std::string buffer(64 * 1024, '\0');
  *size = 0;
  while (true) {
    SPARKPROF_ASSIGN_OR_RETURN(size_t got, stream.Read(buffer.data(), buffer.size()));
    if (got == 0) break;
    if (got > limit - *size) {
      return TooLarge("larger than the limit of " + std::to_string(limit) + " bytes");
    }
    *size += got;
    if (file == nullptr) {
      bytes.append(buffer.data(), got);
      continue;
    }
    for (size_t written = 0; written < got;) {
      ssize_t n = ::write(file->fd(), buffer.data() + written, got - written);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return IoError(std::string("cannot write its temporary copy: ") + ErrnoText(errno));
      }
      written += static_cast<size_t>(n);
    }
  }
  ArchiveSource source;
  if (file != nullptr) {
    source.path = file->path();
    source.keep_alive = std::move(file);
  } else {
    source.bytes = std::make_shared<const std::string>(std::move(bytes));
  }
  return source;
}

// "x.zip.gz", "x.gz.zip.zstd": ".zip" among the extensions, not last (a last ".zip" is a plain
// zip, found by its signature).
bool NamesACompressedArchive(std::string_view name) {
  std::string_view stem = StripArchiveAndCodecExtensions(name);
  std::string_view extensions = name.substr(stem.size());
  size_t zip = extensions.find(".zip");
  return zip != std::string_view::npos && zip + 4 < extensions.size();
}

class Walker {
 public:
  explicit Walker(const DiscoveryLimits& limits) : limits_(limits) {}

  void WalkFolder(const Folder& folder, int directory_depth) {
    if (!folder.disk_path().empty() && !FirstVisit(folder.disk_path(), folder.display_name())) {
      return;
    }
    FolderListing listing = folder.List(&result_.warnings);
    if (IsRollingFolder(folder.name(), listing.files)) {
      if (std::optional<ApplicationLog> log =
              MakeRollingLog(folder, listing.files, &result_.warnings)) {
        result_.applications.push_back(std::move(*log));
      }
      for (const auto& child : listing.folders) {
        Warn(child->display_name(), "ignored: a folder inside a rolling event-log directory");
      }
      return;
    }
    for (FileEntry& file : listing.files) UnwrapArchivedPart(file);
    if (std::optional<ApplicationLog> log = TakeDatabricksLog(folder, &listing.files)) {
      result_.applications.push_back(std::move(*log));
      // Databricks' delivery folder holds the log's parts only: anything else beside them (a
      // pricing file) is named, not read as a log; an archive named as a part that holds more
      // than its part is searched like any zip.
      std::vector<FileEntry> archives;
      for (FileEntry& file : listing.files) {
        if (ParseDatabricksPartName(StripArchiveAndCodecExtensions(file.name))) {
          archives.push_back(std::move(file));
          continue;
        }
        Warn(file.display_name,
             "ignored: not a part (eventlog, eventlog-YYYY-MM-DD--HH-MM"
             "[.codec]) of the Databricks event log around it");
      }
      listing.files = std::move(archives);
    }
    for (const FileEntry& file : listing.files) {
      // A status file without its rolling directory has no events to read.
      if (IsAppStatusName(file.name)) continue;
      WalkFile(file);
    }
    for (const auto& child : listing.folders) {
      if (IsSparkprofOutputsFolder(child->name())) continue;  // sparkprof's, beside the log
      if (directory_depth + 1 > limits_.max_directory_depth) {
        Warn(child->display_name(), "skipped: more than " +
                                        std::to_string(limits_.max_directory_depth) +
                                        " directory levels below the starting point");
        continue;
      }
      WalkFolder(*child, directory_depth + 1);
    }
  }

  // A file is either a zip (searched like a folder), a zip compressed with one of the logs'
  // codecs (Databricks delivers a rolled part as eventlog-<time>.zip.gz: searched the same way),
  // or a candidate event log.
  void WalkFile(const FileEntry& file) {
    if (!file.disk_path.empty() && !FirstVisit(file.disk_path, file.display_name)) return;
    Result<OpenedArchive> archive = OpenArchiveFile(file);
    if (!archive.ok()) {
      Warn(file.display_name, archive.status().message());
      return;
    }
    if (archive->depth == 0) {
      result_.applications.push_back(MakeSingleFileLog(file));
      return;
    }
    WalkArchive(archive->source, archive->depth);
  }

  // A Databricks part delivered inside a (compressed) zip -- eventlog-2022-01-14--17-00.zip.gz
  // holding eventlog-2022-01-14--17-00 -- is a part of the folder's log like the others: the
  // archive's one file takes its place, found again under the archive's name. False (with the
  // file left as it is) when the file is not an archive or holds something else.
  bool UnwrapArchivedPart(FileEntry& file) {
    if (!ParseDatabricksPartName(StripArchiveAndCodecExtensions(file.name))) return false;
    if (ParseDatabricksPartName(file.name)) return false;  // a part as it is
    Result<OpenedArchive> archive = OpenArchiveFile(file);
    if (!archive.ok() || archive->depth == 0) return false;  // WalkFile says why, or reads it
    Result<std::shared_ptr<ZipArchive>> zip = ZipArchive::Open(archive->source);
    if (!zip.ok()) return false;
    std::vector<DiscoveryWarning> listing_warnings;
    std::unique_ptr<Folder> root = MakeArchiveRootFolder(*zip, limits_, &listing_warnings);
    FolderListing listing = root->List(&listing_warnings);
    if (listing.files.size() != 1 || !listing.folders.empty() || !listing_warnings.empty()) {
      return false;
    }
    FileEntry inner = std::move(listing.files.front());
    // The part's time comes from the archive's name when its one file is not named as a part.
    if (!ParseDatabricksPartName(inner.name)) {
      inner.name = std::string(StripArchiveAndCodecExtensions(file.name));
    }
    inner.disk_file = file.disk_file;
    inner.open_during_scan = inner.open;  // the listing's folder ends here
    file = std::move(inner);
    return true;
  }

 private:
  struct OpenedArchive {
    int depth = 0;  // 0: not an archive
    ArchiveSource source;
  };

  // Whether `file` is a zip, or a zip compressed with a log codec, and the archive ready for
  // libzip (a copy where libzip cannot seek in it: inside another archive, or compressed).
  // An error is the warning's text.
  Result<OpenedArchive> OpenArchiveFile(const FileEntry& file) {
    Result<std::unique_ptr<InputStream>> stream = file.open_during_scan();
    if (!stream.ok())
      return Status(stream.status().code(), "skipped: " + stream.status().message());
    Result<std::string> head = ReadHead(**stream, kSniffBytes);
    if (!head.ok()) return Status(head.status().code(), "skipped: " + head.status().message());
    OpenedArchive opened;
    std::unique_ptr<InputStream> archive_bytes;
    std::string what = "zip";
    if (StartsWithZipSignature(*head)) {
      if (!file.disk_path.empty()) {
        opened.source.path = file.disk_path;
      } else {
        archive_bytes = MakePrefixedInputStream(std::move(*head), std::move(*stream));
      }
    } else {
      // Only a name that says so ("x.zip.gz", "x.zip.zstd") is looked into: reading into every
      // compressed log would cost a read per file where discovery costs a listing today
      // (collectors over object stores list unchanged folders again and again).
      if (!NamesACompressedArchive(file.name)) return opened;
      // The codecs' magic needs more than the zip signature's bytes: the rest from the same stream.
      Result<std::string> more = ReadHead(**stream, codec::kSniffBytes - head->size());
      if (!more.ok()) return opened;
      std::string raw_head = std::move(*head) + *more;
      codec::Format format = codec::DetectFormat(raw_head, "");
      if (format == codec::Format::kPlain || format == codec::Format::kZip ||
          format == codec::Format::kUnknownBinary) {
        return opened;
      }
      // The decoded start says whether the codec holds a zip; a log is read later, as a log.
      Result<std::unique_ptr<InputStream>> decoded = codec::MakeDecoder(
          format, MakePrefixedInputStream(std::move(raw_head), std::move(*stream)));
      if (!decoded.ok()) return opened;
      Result<std::string> decoded_head = ReadHead(**decoded, kSniffBytes);
      if (!decoded_head.ok() || !StartsWithZipSignature(*decoded_head)) return opened;
      archive_bytes = MakePrefixedInputStream(std::move(*decoded_head), std::move(*decoded));
      what = std::string("zip compressed with ") + codec::FormatName(format);
    }
    opened.depth = file.archive.empty() ? 1 : archive_depth_ + 1;
    if (opened.depth > limits_.max_archive_depth) {
      return TooLarge("skipped: archives nested more than " +
                      std::to_string(limits_.max_archive_depth) + " deep");
    }
    opened.source.display_name = file.display_name;
    opened.source.disk_file = file.disk_file;
    if (archive_bytes == nullptr) return opened;
    // libzip needs to seek, which a stream out of an outer archive or a decoder cannot.
    uint64_t budget = limits_.max_nested_archive_total_bytes -
                      std::min(nested_bytes_held_, limits_.max_nested_archive_total_bytes);
    uint64_t limit = std::min(limits_.max_nested_archive_bytes, budget);
    uint64_t size = 0;
    // A declared size past the limit is believed (a smaller one is not: the copy is bounded);
    // a compressed zip's size shows only as it is decompressed.
    const bool declared_too_large = what == "zip" && file.declared_bytes > limit;
    Result<ArchiveSource> copy =
        declared_too_large ? Result<ArchiveSource>(TooLarge("declared larger than the limit"))
                           : CopyNestedArchive(*archive_bytes, limit, &size);
    if (!copy.ok()) {
      std::string why = copy.status().message();
      if (copy.status().code() == StatusCode::kTooLarge) {
        why = limit < limits_.max_nested_archive_bytes
                  ? "the zips nested in archives already take " +
                        std::to_string(nested_bytes_held_) + " bytes, and all of " +
                        "them together may take " +
                        std::to_string(limits_.max_nested_archive_total_bytes) +
                        " (max_nested_archive_total_bytes)"
                  : "larger than the limit of " + std::to_string(limit) +
                        " bytes for a zip inside a zip or compressed (max_nested_archive_bytes)";
      }
      return Status(copy.status().code(),
                    "nested archive" + (what == "zip" ? std::string() : " (" + what + ")") +
                        " skipped: " + why + "; unpack it and analyse its contents instead");
    }
    nested_bytes_held_ += size;
    opened.source.path = std::move(copy->path);
    opened.source.bytes = std::move(copy->bytes);
    opened.source.keep_alive = std::move(copy->keep_alive);
    return opened;
  }

 public:
  void WalkArchive(const ArchiveSource& source, int depth) {
    Result<std::shared_ptr<ZipArchive>> archive = ZipArchive::Open(source);
    if (!archive.ok()) {
      Warn(source.display_name, "skipped: " + archive.status().message());
      return;
    }
    std::unique_ptr<Folder> root = MakeArchiveRootFolder(*archive, limits_, &result_.warnings);
    size_t found_before = result_.applications.size();
    int saved_depth = std::exchange(archive_depth_, depth);
    WalkFolder(*root, 0);
    archive_depth_ = saved_depth;
    if (result_.applications.size() == found_before) {
      Warn(source.display_name, "zip archive holds no event logs");
    }
  }

  DiscoveryResult TakeResult() {
    std::sort(result_.applications.begin(), result_.applications.end(),
              [](const ApplicationLog& a, const ApplicationLog& b) {
                return std::forward_as_tuple(a.name, a.parts.front().display_name) <
                       std::forward_as_tuple(b.name, b.parts.front().display_name);
              });
    AssignWarnings();
    return std::move(result_);
  }

 private:
  // Each warning goes to the logs whose folder holds what it names ("a.zip!dir/" holds
  // "a.zip!dir/pricing.json" and "a.zip!dir/x.zip!y"), or to every log when it is under none.
  void AssignWarnings() {
    std::map<std::string, std::vector<size_t>, std::less<>> by_folder;
    for (size_t i = 0; i < result_.applications.size(); ++i) {
      const std::string& first = result_.applications[i].parts.front().display_name;
      size_t cut = first.find_last_of("/!");
      if (cut != std::string::npos) by_folder[first.substr(0, cut + 1)].push_back(i);
    }
    auto add = [](ApplicationLog& log, const DiscoveryWarning& warning) {
      if (log.warnings.size() < ApplicationLog::kMaxWarningsPerLog) {
        log.warnings.push_back(warning);
      } else {
        ++log.warnings_left_out;
      }
    };
    uint64_t unplaced = 0;
    for (const DiscoveryWarning& warning : result_.warnings) {
      bool placed = false;
      // Every folder above what the warning names: the prefixes ending in '/' or '!'.
      for (size_t at = warning.path.find_first_of("/!"); at != std::string::npos;
           at = warning.path.find_first_of("/!", at + 1)) {
        auto found = by_folder.find(std::string_view(warning.path).substr(0, at + 1));
        if (found == by_folder.end()) continue;
        for (size_t i : found->second) add(result_.applications[i], warning);
        placed = true;
      }
      if (placed) continue;
      // Under no log's folder: every log's report names it (the first few; the rest counted).
      if (++unplaced <= ApplicationLog::kMaxWarningsPerLog) {
        for (ApplicationLog& log : result_.applications) add(log, warning);
      }
    }
    if (unplaced > ApplicationLog::kMaxWarningsPerLog) {
      for (ApplicationLog& log : result_.applications) {
        log.warnings_left_out += unplaced - ApplicationLog::kMaxWarningsPerLog;
      }
    }
  }

 public:
 private:
  // Symbolic links can make a directory its own descendant, or show one file twice.
  bool FirstVisit(const std::string& disk_path, const std::string& display_name) {
    std::error_code error;
    fs::path canonical = fs::canonical(disk_path, error);
    if (error) return true;  // listing or opening will report the problem
    if (!visited_.insert(canonical.string()).second) {
      Warn(display_name, "skipped: already searched as " + canonical.string() +
                             " (symbolic link loop or duplicate link)");
      return false;
    }
    return true;
  }

  void Warn(std::string path, std::string message) {
    result_.warnings.push_back({std::move(path), std::move(message)});
  }

  DiscoveryLimits limits_;
  DiscoveryResult result_;
  std::set<std::string> visited_;
  int archive_depth_ = 0;           // of the archive whose folders are being walked; 0 on disk
  uint64_t nested_bytes_held_ = 0;  // nested archives copied so far
};

}  // namespace

Result<DiscoveryResult> Discover(const std::string& path, const DiscoveryLimits& limits) {
  std::error_code error;
  fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) {
    if (error && error != std::errc::no_such_file_or_directory) {
      return IoError("cannot access " + path + ": " + error.message());
    }
    return NotFound("no such file or directory: " + path);
  }
  if (fs::is_directory(status)) return DiscoverFolder(*MakeDiskFolder(path, path), limits);
  if (fs::is_regular_file(status)) {
    std::error_code size_error;
    uintmax_t size = fs::file_size(path, size_error);
    return DiscoverFile(MakeDiskFileEntry(path, path, size_error ? 0 : size), limits);
  }
  return InvalidArgument(path + " is neither a regular file nor a directory");
}

DiscoveryResult DiscoverFolder(const Folder& folder, const DiscoveryLimits& limits) {
  Walker walker(limits);
  walker.WalkFolder(folder, 0);
  return walker.TakeResult();
}

DiscoveryResult DiscoverFile(const FileEntry& file, const DiscoveryLimits& limits) {
  Walker walker(limits);
  walker.WalkFile(file);
  return walker.TakeResult();
}

DiscoveryResult DiscoverArchiveBytes(const std::string& display_name, std::string bytes,
                                     const DiscoveryLimits& limits) {
  Walker walker(limits);
  ArchiveSource source;
  source.display_name = display_name;
  source.bytes = std::make_shared<const std::string>(std::move(bytes));
  walker.WalkArchive(source, 1);
  return walker.TakeResult();
}

}  // namespace sparkprof::source
