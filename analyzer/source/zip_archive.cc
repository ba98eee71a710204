#include "analyzer/source/zip_archive.h"

#include <zip.h>

#ifdef SPARKPROF_LIBZIP_SONAME
#include <dlfcn.h>
#endif

#include <atomic>
#include <list>
#include <mutex>
#include <utility>
#include <vector>

namespace sparkprof::source {

// The libzip functions this file calls, through ZipLibrary's pointers of the same names.
// (clang-format 14 re-indents this list differently on every pass.)
// clang-format off
#define SPARKPROF_LIBZIP_FUNCTIONS(X)                                                       \
  X(zip_discard) X(zip_error_fini) X(zip_error_init) X(zip_error_init_with_code)           \
  X(zip_error_strerror) X(zip_fclose) X(zip_file_strerror) X(zip_fopen_index) X(zip_fread) \
  X(zip_get_num_entries) X(zip_open) X(zip_open_from_source) X(zip_source_buffer_create)   \
  X(zip_source_free) X(zip_stat_index) X(zip_stat_init) X(zip_strerror)
// clang-format on

namespace {

struct ZipLibrary {
// NOLINTNEXTLINE(bugprone-macro-parentheses): a declarator's name cannot be parenthesised
#define SPARKPROF_ZIP_POINTER(name) decltype(&::name) name = nullptr;
  SPARKPROF_LIBZIP_FUNCTIONS(SPARKPROF_ZIP_POINTER)
#undef SPARKPROF_ZIP_POINTER
};

Status LoadZipLibrary(const char* file_name, ZipLibrary* library) {
#ifdef SPARKPROF_LIBZIP_SONAME
  // Kept open once loaded: streams and cached archives hold its objects until the process ends.
  void* handle = dlopen(file_name, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Unsupported(std::string("reading zip archives needs libzip, which did not load: ") +
                       (why != nullptr ? why : file_name));
  }
#define SPARKPROF_ZIP_LOOKUP(name)                                                       \
  library->name = reinterpret_cast<decltype(library->name)>(dlsym(handle, #name));       \
  if (library->name == nullptr) {                                                        \
    dlclose(handle);                                                                     \
    return Unsupported(std::string("reading zip archives needs libzip 1.0 or later; ") + \
                       file_name + " has no " #name);                                    \
  }
  SPARKPROF_LIBZIP_FUNCTIONS(SPARKPROF_ZIP_LOOKUP)
#undef SPARKPROF_ZIP_LOOKUP
#else
  (void)file_name;
#define SPARKPROF_ZIP_LINKED(name) library->name = &::name;
  SPARKPROF_LIBZIP_FUNCTIONS(SPARKPROF_ZIP_LINKED)
#undef SPARKPROF_ZIP_LINKED
#endif
  return Status();
}

#ifdef SPARKPROF_LIBZIP_SONAME
constexpr const char* kLibzipFile = SPARKPROF_LIBZIP_SONAME;
#else
constexpr const char* kLibzipFile = "";  // linked
#endif

struct LoadedZipLibrary {
  ZipLibrary functions;
  Status status;
};

// libzip as loaded on first use (CheckZipLibrary says why).
const LoadedZipLibrary& Libzip() {
  static const LoadedZipLibrary loaded = [] {
    LoadedZipLibrary l;
    l.status = LoadZipLibrary(kLibzipFile, &l.functions);
    return l;
  }();
  return loaded;
}

// Set once ZipArchive::Open succeeded: every other use follows one.
const ZipLibrary& Zip() { return Libzip().functions; }

std::atomic<uint64_t> g_open_count{0};
std::atomic<uint64_t> g_next_pool_id{1};

std::string ZipErrorText(zip_error_t* error) { return Zip().zip_error_strerror(error); }

std::string ZipErrorText(int code) {
  const ZipLibrary& zip = Zip();
  zip_error_t error;
  zip.zip_error_init_with_code(&error, code);
  std::string text = zip.zip_error_strerror(&error);
  zip.zip_error_fini(&error);
  return text;
}

}  // namespace

Status CheckZipLibrary(const char* file_name) {
  ZipLibrary library;
  return LoadZipLibrary(file_name, &library);
}

struct ZipArchive::Handle {
  zip_t* zip = nullptr;
};

class ZipEntryInputStream final : public InputStream {
 public:
  ZipEntryInputStream(std::shared_ptr<ZipArchive> archive, zip_file_t* file, std::string name)
      : archive_(std::move(archive)), file_(file), display_name_(std::move(name)) {}
  ~ZipEntryInputStream() override { Zip().zip_fclose(file_); }

  Result<size_t> Read(char* buffer, size_t size) override {
    if (!error_.ok()) return error_;
    if (size == 0) return size_t{0};
    zip_int64_t got = Zip().zip_fread(file_, buffer, size);
    if (got < 0) {
      // libzip reports a damaged deflate stream or a CRC mismatch here, at the end at latest.
      error_ = Corrupt("reading zip entry " + display_name_ + " at byte " +
                       std::to_string(offset_) + ": " + Zip().zip_file_strerror(file_));
      return error_;
    }
    offset_ += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }
  // The entry's own (zip-decompressed) bytes are this stream's input as the codec layer sees it.
  uint64_t input_offset() const override { return offset_; }

 private:
  std::shared_ptr<ZipArchive> archive_;  // keeps the zip_t alive while the entry is open
  zip_file_t* file_;
  std::string display_name_;
  uint64_t offset_ = 0;
  Status error_;
};

bool StartsWithZipSignature(std::string_view head) {
  return head.size() >= 4 && head[0] == 'P' && head[1] == 'K' &&
         ((head[2] == '\3' && head[3] == '\4') || (head[2] == '\5' && head[3] == '\6'));
}

ZipArchive::ZipArchive(ArchiveSource source, Handle* handle, uint64_t entry_count)
    : source_(std::move(source)), handle_(handle), entry_count_(entry_count) {}

ZipArchive::~ZipArchive() {
  Zip().zip_discard(handle_->zip);  // read-only: nothing to write back
  delete handle_;
}

Result<std::shared_ptr<ZipArchive>> ZipArchive::Open(const ArchiveSource& source) {
  if (const Status& loaded = Libzip().status; !loaded.ok()) {
    return Status(loaded.code(),
                  "cannot open zip archive " + source.display_name + ": " + loaded.message());
  }
  const ZipLibrary& lib = Zip();
  zip_t* zip = nullptr;
  std::string problem;
  if (source.bytes != nullptr) {
    zip_error_t error;
    lib.zip_error_init(&error);
    zip_source_t* buffer =
        lib.zip_source_buffer_create(source.bytes->data(), source.bytes->size(), 0, &error);
    if (buffer != nullptr) {
      zip = lib.zip_open_from_source(buffer, ZIP_RDONLY, &error);
      if (zip == nullptr) lib.zip_source_free(buffer);
    }
    if (zip == nullptr) problem = ZipErrorText(&error);
    lib.zip_error_fini(&error);
  } else {
    int code = 0;
    zip = lib.zip_open(source.path.c_str(), ZIP_RDONLY, &code);
    if (zip == nullptr) problem = ZipErrorText(code);
  }
  if (zip == nullptr) {
    return Corrupt("cannot open zip archive " + source.display_name + ": " + problem);
  }
  g_open_count.fetch_add(1, std::memory_order_relaxed);
  zip_int64_t count = lib.zip_get_num_entries(zip, 0);
  auto* handle = new Handle{zip};
  return std::shared_ptr<ZipArchive>(
      new ZipArchive(source, handle, count < 0 ? 0 : static_cast<uint64_t>(count)));
}

Result<ZipEntryInfo> ZipArchive::Entry(uint64_t index) const {
  const ZipLibrary& lib = Zip();
  zip_stat_t stat;
  lib.zip_stat_init(&stat);
  if (lib.zip_stat_index(handle_->zip, index, 0, &stat) != 0 || (stat.valid & ZIP_STAT_NAME) == 0 ||
      stat.name == nullptr) {
    return Corrupt("zip archive " + source_.display_name + ": cannot read entry #" +
                   std::to_string(index) + ": " + lib.zip_strerror(handle_->zip));
  }
  ZipEntryInfo info;
  info.name = stat.name;
  if ((stat.valid & ZIP_STAT_COMP_SIZE) != 0) info.compressed_bytes = stat.comp_size;
  if ((stat.valid & ZIP_STAT_SIZE) != 0) info.declared_bytes = stat.size;
  return info;
}

Result<std::unique_ptr<InputStream>> ZipArchive::OpenEntry(std::shared_ptr<ZipArchive> archive,
                                                           uint64_t index,
                                                           const std::string& display_name) {
  zip_file_t* file = Zip().zip_fopen_index(archive->handle_->zip, index, 0);
  if (file == nullptr) {
    // Encrypted entries and compression methods this libzip lacks land here.
    return Unsupported("cannot open zip entry " + display_name + ": " +
                       Zip().zip_strerror(archive->handle_->zip));
  }
  return std::unique_ptr<InputStream>(
      new ZipEntryInputStream(std::move(archive), file, display_name));
}

Result<std::unique_ptr<InputStream>> OpenZipEntryFresh(const ArchiveSource& source, uint64_t index,
                                                       const std::string& expected_name,
                                                       const std::string& display_name) {
  SPARKPROF_ASSIGN_OR_RETURN(std::shared_ptr<ZipArchive> archive, ZipArchive::Open(source));
  SPARKPROF_ASSIGN_OR_RETURN(ZipEntryInfo info, archive->Entry(index));
  if (info.name != expected_name) {
    return NotFound("zip archive " + source.display_name + " changed since it was listed: entry #" +
                    std::to_string(index) + " is now " + info.name + ", expected " + expected_name);
  }
  return ZipArchive::OpenEntry(std::move(archive), index, display_name);
}

uint64_t ZipArchiveOpenCount() { return g_open_count.load(std::memory_order_relaxed); }

namespace {

// The idle handles of every pool, most recently released first.
class IdleArchiveCache {
 public:
  static IdleArchiveCache& Get() {
    static auto* cache = new IdleArchiveCache;  // never destroyed: pools may outlive statics
    return *cache;
  }

  std::shared_ptr<ZipArchive> Take(uint64_t pool_id) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if (it->first != pool_id) continue;
      std::shared_ptr<ZipArchive> archive = std::move(it->second);
      idle_.erase(it);
      return archive;
    }
    return nullptr;
  }

  void Put(uint64_t pool_id, std::shared_ptr<ZipArchive> archive) {
    std::shared_ptr<ZipArchive> evicted;  // closed outside the lock
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.emplace_front(pool_id, std::move(archive));
    if (idle_.size() > kMaxIdleZipArchives) {
      evicted = std::move(idle_.back().second);
      idle_.pop_back();
    }
  }

  void Forget(uint64_t pool_id) {
    std::vector<std::shared_ptr<ZipArchive>> closed;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = idle_.begin(); it != idle_.end();) {
      if (it->first == pool_id) {
        closed.push_back(std::move(it->second));
        it = idle_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<uint64_t, std::shared_ptr<ZipArchive>>> idle_;
};

}  // namespace

// Gives its archive handle back to the pool once the entry is closed.
class PooledZipEntryStream final : public InputStream {
 public:
  PooledZipEntryStream(std::shared_ptr<ZipArchivePool> pool, std::shared_ptr<ZipArchive> archive,
                       std::unique_ptr<InputStream> entry)
      : pool_(std::move(pool)), archive_(std::move(archive)), entry_(std::move(entry)) {}
  ~PooledZipEntryStream() override {
    entry_.reset();  // zip_fclose before another stream may use the handle
    pool_->Release(std::move(archive_));
  }

  Result<size_t> Read(char* buffer, size_t size) override { return entry_->Read(buffer, size); }
  uint64_t input_offset() const override { return entry_->input_offset(); }

 private:
  std::shared_ptr<ZipArchivePool> pool_;
  std::shared_ptr<ZipArchive> archive_;
  std::unique_ptr<InputStream> entry_;
};

ZipArchivePool::ZipArchivePool(ArchiveSource source)
    : source_(std::move(source)), id_(g_next_pool_id.fetch_add(1, std::memory_order_relaxed)) {}

std::shared_ptr<ZipArchivePool> ZipArchivePool::Create(ArchiveSource source) {
  return std::shared_ptr<ZipArchivePool>(new ZipArchivePool(std::move(source)));
}

ZipArchivePool::~ZipArchivePool() { IdleArchiveCache::Get().Forget(id_); }

void ZipArchivePool::Release(std::shared_ptr<ZipArchive> archive) {
  if (archive != nullptr) IdleArchiveCache::Get().Put(id_, std::move(archive));
}

Result<std::unique_ptr<InputStream>> ZipArchivePool::OpenEntry(uint64_t index,
                                                               const std::string& expected_name,
                                                               const std::string& display_name) {
  std::shared_ptr<ZipArchive> archive = IdleArchiveCache::Get().Take(id_);
  if (archive == nullptr) {
    SPARKPROF_ASSIGN_OR_RETURN(archive, ZipArchive::Open(source_));
  }
  Result<ZipEntryInfo> info = archive->Entry(index);
  if (!info.ok()) return info.status();
  if (info->name != expected_name) {
    return NotFound("zip archive " + source_.display_name +
                    " changed since it was listed: entry #" + std::to_string(index) + " is now " +
                    info->name + ", expected " + expected_name);
  }
  Result<std::unique_ptr<InputStream>> entry = ZipArchive::OpenEntry(archive, index, display_name);
  if (!entry.ok()) {
    Release(std::move(archive));
    return entry.status();
  }
  return std::unique_ptr<InputStream>(
      new PooledZipEntryStream(shared_from_this(), std::move(archive), std::move(*entry)));
}

}  // namespace sparkprof::source
