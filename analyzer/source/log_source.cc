#include "analyzer/source/log_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "analyzer/source/folder.h"
#include "analyzer/source/log_layouts.h"
#include "analyzer/source/log_names.h"
#include "analyzer/source/zip_archive.h"

namespace sparkprof::source {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSniffBytes = 4;

// The first `size` bytes (fewer if the stream is shorter).
Result<std::string> ReadHead(InputStream& stream, size_t size) {
  std::string head(size, '\0');
  size_t filled = 0;
  while (filled < size) {
    SPARKPROF_ASSIGN_OR_RETURN(size_t got, stream.Read(head.data() + filled, size - filled));
    if (got == 0) break;
    filled += got;
  }
  head.resize(filled);
  return head;
}

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
        return IoError(std::string("cannot write its temporary copy: ") + std::strerror(errno));
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

class Walker {
 public:
  explicit Walker(const DiscoveryLimits& limits) : limits_(limits) {}

  void WalkFolder(const Folder& folder, int directory_depth) {
    if (!folder.disk_path().empty() && !FirstVisit(folder.disk_path(), folder.display_name())) {
      return;
    }
    FolderListing listing = folder.List(&result_.warnings);
    if (IsRollingFolder(folder.name(), listing.files)) {
      if (std::optional<ApplicationLog> log = MakeRollingLog(folder, listing.files, &result_.warnings)) {
        result_.applications.push_back(std::move(*log));
      }
      for (const auto& child : listing.folders) {
        Warn(child->display_name(), "ignored: a folder inside a rolling event-log directory");
      }
      return;
    }
    if (std::optional<ApplicationLog> log = TakeDatabricksLog(folder, &listing.files)) {
      result_.applications.push_back(std::move(*log));
    }
    for (const FileEntry& file : listing.files) {
      // A status file without its rolling directory has no events to read.
      if (IsAppStatusName(file.name)) continue;
      WalkFile(file);
    }
    for (const auto& child : listing.folders) {
      if (directory_depth + 1 > limits_.max_directory_depth) {
        Warn(child->display_name(), "skipped: more than " +
                                        std::to_string(limits_.max_directory_depth) +
                                        " directory levels below the starting point");
        continue;
      }
      WalkFolder(*child, directory_depth + 1);
    }
  }

  // A file is either a zip (searched like a folder) or a candidate event log.
  void WalkFile(const FileEntry& file) {
    if (!file.disk_path.empty() && !FirstVisit(file.disk_path, file.display_name)) return;
    Result<std::unique_ptr<InputStream>> stream = file.open_during_scan();
    if (!stream.ok()) {
      Warn(file.display_name, "skipped: " + stream.status().message());
      return;
    }
    Result<std::string> head = ReadHead(**stream, kSniffBytes);
    if (!head.ok()) {
      Warn(file.display_name, "skipped: " + head.status().message());
      return;
    }
    if (!StartsWithZipSignature(*head)) {
      result_.applications.push_back(MakeSingleFileLog(file));
      return;
    }
    int depth = file.archive.empty() ? 1 : archive_depth_ + 1;
    if (depth > limits_.max_archive_depth) {
      Warn(file.display_name, "skipped: archives nested more than " +
                                  std::to_string(limits_.max_archive_depth) + " deep");
      return;
    }
    ArchiveSource source;
    source.display_name = file.display_name;
    source.disk_file = file.disk_file;
    if (!file.disk_path.empty()) {
      source.path = file.disk_path;
    } else {
      // libzip needs to seek, which a stream out of the outer archive cannot.
      uint64_t budget = limits_.max_nested_archive_total_bytes -
                        std::min(nested_bytes_held_, limits_.max_nested_archive_total_bytes);
      uint64_t limit = std::min(limits_.max_nested_archive_bytes, budget);
      uint64_t size = 0;
      // A declared size past the limit is believed (a smaller one is not: the copy is bounded).
      Result<ArchiveSource> copy =
          file.declared_bytes > limit
              ? Result<ArchiveSource>(TooLarge("declared larger than the limit"))
              : CopyNestedArchive(*MakePrefixedInputStream(std::move(*head), std::move(*stream)),
                                  limit, &size);
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
                          " bytes for a zip inside a zip (max_nested_archive_bytes)";
        }
        Warn(file.display_name, "nested archive skipped: " + why +
                                    "; unzip it and analyse its contents instead");
        return;
      }
      nested_bytes_held_ += size;
      source.path = std::move(copy->path);
      source.bytes = std::move(copy->bytes);
      source.keep_alive = std::move(copy->keep_alive);
    }
    WalkArchive(source, depth);
  }

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
    return std::move(result_);
  }

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
  int archive_depth_ = 0;  // of the archive whose folders are being walked; 0 on disk
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
