#include "common/input_stream.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace sparkprof {
namespace {

class FileInputStream final : public InputStream {
 public:
  FileInputStream(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  ~FileInputStream() override { std::fclose(file_); }

  Result<size_t> Read(char* buffer, size_t size) override {
    size_t got = std::fread(buffer, 1, size, file_);
    if (got == 0 && std::ferror(file_)) {
      return IoError("reading " + path_ + " at byte " + std::to_string(offset_) + ": " +
                     std::strerror(errno));
    }
    offset_ += got;
    return got;
  }
  uint64_t input_offset() const override { return offset_; }

 private:
  std::FILE* file_;
  std::string path_;
  uint64_t offset_ = 0;
};

class MemoryInputStream final : public InputStream {
 public:
  explicit MemoryInputStream(std::string bytes) : bytes_(std::move(bytes)) {}
  Result<size_t> Read(char* buffer, size_t size) override {
    size_t n = std::min(size, bytes_.size() - offset_);
    std::memcpy(buffer, bytes_.data() + offset_, n);
    offset_ += n;
    return n;
  }
  uint64_t input_offset() const override { return offset_; }

 private:
  std::string bytes_;
  size_t offset_ = 0;
};

class PrefixedInputStream final : public InputStream {
 public:
  PrefixedInputStream(std::string head, std::unique_ptr<InputStream> rest)
      : head_(std::move(head)), rest_(std::move(rest)) {}
  Result<size_t> Read(char* buffer, size_t size) override {
    if (head_offset_ < head_.size()) {
      size_t n = std::min(size, head_.size() - head_offset_);
      std::memcpy(buffer, head_.data() + head_offset_, n);
      head_offset_ += n;
      return n;
    }
    return rest_->Read(buffer, size);
  }
  uint64_t input_offset() const override { return rest_->input_offset() - (head_.size() - head_offset_); }

 private:
  std::string head_;
  size_t head_offset_ = 0;
  std::unique_ptr<InputStream> rest_;
};

}  // namespace

Result<std::unique_ptr<InputStream>> OpenFileInputStream(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    int error = errno;
    std::string message = "cannot open " + path + ": " + std::strerror(error);
    if (error == ENOENT) return NotFound(message);
    return IoError(message);
  }
  return std::unique_ptr<InputStream>(new FileInputStream(file, path));
}

std::unique_ptr<InputStream> MakeMemoryInputStream(std::string bytes) {
  return std::make_unique<MemoryInputStream>(std::move(bytes));
}

std::unique_ptr<InputStream> MakePrefixedInputStream(std::string head,
                                                     std::unique_ptr<InputStream> rest) {
  return std::make_unique<PrefixedInputStream>(std::move(head), std::move(rest));
}

}  // namespace sparkprof
