// A read-only view of a zip archive through libzip: list entries, stream one entry.
// History Server `/logs` zips store event-log files still compressed with their codec, so an
// entry's bytes are handed on raw; the codec layer decompresses them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/input_stream.h"
#include "common/status.h"

namespace sparkprof::source {

// `PK\3\4` (first local file header) or `PK\5\6` (end of central directory: an empty zip).
bool StartsWithZipSignature(std::string_view head);

// The CLI loads libzip by its soname when it first opens a zip (a linked libzip, with the
// libcrypto, libbz2 and liblzma it needs, cost every start ~1 ms, zips or not); the Python module
// links it. Whether libzip loads from `file_name` as it would be then: Unsupported, saying why,
// when the library or one of the functions used is missing (always OK where it is linked).
Status CheckZipLibrary(const char* file_name);

// Where an archive's bytes live. libzip needs a seekable source: a file on disk is opened by
// path, a zip found inside another zip is copied to an unlinked temporary file (or, where none
// can be made, held in memory).
struct ArchiveSource {
  std::string display_name;                  // "logs.zip", "outer.zip!inner.zip"
  std::string path;                          // set when the archive is a file on disk
  std::shared_ptr<const std::string> bytes;  // set when the archive is held in memory
  // Keeps what `path` names alive (an unlinked temporary copy of a nested archive).
  std::shared_ptr<const void> keep_alive;
  std::string disk_file;  // the file on disk holding the archive (itself, or the outermost zip)
};

struct ZipEntryInfo {
  std::string name;  // as stored, '/'-separated; a trailing '/' marks a directory entry
  uint64_t compressed_bytes = 0;
  uint64_t declared_bytes = 0;  // uncompressed size as the archive declares it; 0 if unknown
};

class ZipArchive {
 public:
  // Corrupt (naming the archive) when libzip cannot read the central directory.
  static Result<std::shared_ptr<ZipArchive>> Open(const ArchiveSource& source);

  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;
  ~ZipArchive();

  const ArchiveSource& source() const { return source_; }
  uint64_t entry_count() const { return entry_count_; }
  Result<ZipEntryInfo> Entry(uint64_t index) const;

  // Streams the (zip-decompressed) bytes of one entry. The stream keeps `archive` alive.
  // A libzip handle is not safe for concurrent use, so streams that must be independent of
  // each other open the archive again (see OpenZipEntryFresh).
  static Result<std::unique_ptr<InputStream>> OpenEntry(std::shared_ptr<ZipArchive> archive,
                                                        uint64_t index,
                                                        const std::string& display_name);

 private:
  struct Handle;
  ZipArchive(ArchiveSource source, Handle* handle, uint64_t entry_count);

  ArchiveSource source_;
  Handle* handle_;
  uint64_t entry_count_;
};

// Opens the archive and then one of its entries; checks that the entry still has the name it
// had at discovery time, so a log replaced on disk is reported instead of misread.
Result<std::unique_ptr<InputStream>> OpenZipEntryFresh(const ArchiveSource& source, uint64_t index,
                                                       const std::string& expected_name,
                                                       const std::string& display_name);

// Hands out entry streams of one archive, each on an archive handle of its own, and takes the
// handle back when the stream is destroyed, so the next entry reuses it. libzip reads the whole
// central directory on open: opening the archive once per entry made reading the N parts of a
// zipped rolling log cost N^2 (10,000 parts: 209 s). Idle handles of all pools share one small
// process-wide cache (kMaxIdleZipArchives), so thousands of zips never hold thousands of files
// open. Safe to use from several threads; streams are independent of each other.
class ZipArchivePool : public std::enable_shared_from_this<ZipArchivePool> {
 public:
  static std::shared_ptr<ZipArchivePool> Create(ArchiveSource source);
  ~ZipArchivePool();

  const ArchiveSource& source() const { return source_; }

  // As OpenZipEntryFresh, without reopening the archive when an idle handle is cached.
  Result<std::unique_ptr<InputStream>> OpenEntry(uint64_t index, const std::string& expected_name,
                                                 const std::string& display_name);

 private:
  explicit ZipArchivePool(ArchiveSource source);
  friend class PooledZipEntryStream;
  void Release(std::shared_ptr<ZipArchive> archive);

  ArchiveSource source_;
  uint64_t id_;
};

// Idle archive handles kept open across all pools (the least recently used is closed first).
inline constexpr size_t kMaxIdleZipArchives = 4;

// How many times an archive was opened by libzip in this process (for tests of the above).
uint64_t ZipArchiveOpenCount();

}  // namespace sparkprof::source
