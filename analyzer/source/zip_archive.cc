#include "analyzer/source/zip_archive.h"

#include <zip.h>

#include <utility>

namespace sparkprof::source {
namespace {

std::string ZipErrorText(zip_error_t* error) { return zip_error_strerror(error); }

std::string ZipErrorText(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

}  // namespace

struct ZipArchive::Handle {
  zip_t* zip = nullptr;
};

class ZipEntryInputStream final : public InputStream {
 public:
  ZipEntryInputStream(std::shared_ptr<ZipArchive> archive, zip_file_t* file, std::string name)
      : archive_(std::move(archive)), file_(file), display_name_(std::move(name)) {}
  ~ZipEntryInputStream() override { zip_fclose(file_); }

  Result<size_t> Read(char* buffer, size_t size) override {
    if (!error_.ok()) return error_;
    if (size == 0) return size_t{0};
    zip_int64_t got = zip_fread(file_, buffer, size);
    if (got < 0) {
      // libzip reports a damaged deflate stream or a CRC mismatch here, at the end at latest.
      error_ = Corrupt("reading zip entry " + display_name_ + " at byte " +
                       std::to_string(offset_) + ": " + zip_file_strerror(file_));
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
  zip_discard(handle_->zip);  // read-only: nothing to write back
  delete handle_;
}

Result<std::shared_ptr<ZipArchive>> ZipArchive::Open(const ArchiveSource& source) {
  zip_t* zip = nullptr;
  std::string problem;
  if (source.bytes != nullptr) {
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* buffer =
        zip_source_buffer_create(source.bytes->data(), source.bytes->size(), 0, &error);
    if (buffer != nullptr) {
      zip = zip_open_from_source(buffer, ZIP_RDONLY, &error);
      if (zip == nullptr) zip_source_free(buffer);
    }
    if (zip == nullptr) problem = ZipErrorText(&error);
    zip_error_fini(&error);
  } else {
    int code = 0;
    zip = zip_open(source.path.c_str(), ZIP_RDONLY, &code);
    if (zip == nullptr) problem = ZipErrorText(code);
  }
  if (zip == nullptr) {
    return Corrupt("cannot open zip archive " + source.display_name + ": " + problem);
  }
  zip_int64_t count = zip_get_num_entries(zip, 0);
  auto* handle = new Handle{zip};
  return std::shared_ptr<ZipArchive>(
      new ZipArchive(source, handle, count < 0 ? 0 : static_cast<uint64_t>(count)));
}

Result<ZipEntryInfo> ZipArchive::Entry(uint64_t index) const {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(handle_->zip, index, 0, &stat) != 0 || (stat.valid & ZIP_STAT_NAME) == 0 ||
      stat.name == nullptr) {
    return Corrupt("zip archive " + source_.display_name + ": cannot read entry #" +
                   std::to_string(index) + ": " + zip_strerror(handle_->zip));
  }
  ZipEntryInfo info;
  info.name = stat.name;
  if ((stat.valid & ZIP_STAT_COMP_SIZE) != 0) info.compressed_bytes = stat.comp_size;
  return info;
}

Result<std::unique_ptr<InputStream>> ZipArchive::OpenEntry(std::shared_ptr<ZipArchive> archive,
                                                           uint64_t index,
                                                           const std::string& display_name) {
  zip_file_t* file = zip_fopen_index(archive->handle_->zip, index, 0);
  if (file == nullptr) {
    // Encrypted entries and compression methods this libzip lacks land here.
    return Unsupported("cannot open zip entry " + display_name + ": " +
                       zip_strerror(archive->handle_->zip));
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
                    std::to_string(index) + " is now " + info.name + ", expected " +
                    expected_name);
  }
  return ZipArchive::OpenEntry(std::move(archive), index, display_name);
}

}  // namespace sparkprof::source
