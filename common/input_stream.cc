#include "common/input_stream.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/errno_text.h"

namespace sparkprof {
namespace {

class FileInputStream final : public InputStream {
 public:
  FileInputStream(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileInputStream() override { ::close(fd_); }

  Result<size_t> Read(char* buffer, size_t size) override {
    while (true) {
      ssize_t got = ::read(fd_, buffer, size);
      if (got >= 0) {
        offset_ += static_cast<uint64_t>(got);
        return static_cast<size_t>(got);
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        // Opened non-blocking: a "regular" file that has no data yet (/proc/kmsg) would
        // otherwise wait forever.
        return IoError("reading " + path_ + " at byte " + std::to_string(offset_) +
                       " would wait for data that may never come (not an ordinary file?)");
      }
      return IoError("reading " + path_ + " at byte " + std::to_string(offset_) + ": " +
                     ErrnoText(errno));
    }
  }
  uint64_t input_offset() const override { return offset_; }

 private:
  int fd_;
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
  uint64_t input_offset() const override {
    return rest_->input_offset() - (head_.size() - head_offset_);
  }

 private:
  std::string head_;
  size_t head_offset_ = 0;
  std::unique_ptr<InputStream> rest_;
};

}  // namespace

Result<std::unique_ptr<InputStream>> OpenFileInputStream(const std::string& path) {
  // O_NONBLOCK: opening a FIFO does not wait for a writer, and reading a file that never has
  // data (/proc/kmsg) fails instead of blocking. Ordinary files ignore the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int error = errno;
    std::string message = "cannot open " + path + ": " + ErrnoText(error);
    if (error == ENOENT) return NotFound(message);
    return IoError(message);
  }
  struct stat status;
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    return InvalidArgument("cannot read " + path + ": not a regular file (a FIFO, socket or " +
                           "device may block or never end); copy its contents to a file first");
  }
  // /proc and /sys files look regular but are kernel interfaces: reading /proc/kmsg consumes
  // the kernel's log. No event log lives there.
  struct statfs filesystem;
  if (::fstatfs(fd, &filesystem) == 0 &&
      (filesystem.f_type == PROC_SUPER_MAGIC || filesystem.f_type == SYSFS_MAGIC)) {
    ::close(fd);
    return InvalidArgument("cannot read " + path +
                           ": a kernel interface file in /proc or /sys, "
                           "not an event log");
  }
  return std::unique_ptr<InputStream>(new FileInputStream(fd, path));
}

std::unique_ptr<InputStream> MakeMemoryInputStream(std::string bytes) {
  return std::make_unique<MemoryInputStream>(std::move(bytes));
}

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

Result<bool> ReadAllWithin(InputStream& stream, uint64_t limit, std::string& out,
                           uint64_t reserve) {
  if (reserve > 0) out.reserve(static_cast<size_t>(std::min(reserve, limit)));
  std::vector<char> buffer(size_t{1} << 20);
  while (true) {
    SPARKPROF_ASSIGN_OR_RETURN(size_t got, stream.Read(buffer.data(), buffer.size()));
    if (got == 0) return true;
    if (out.size() > limit || got > limit - out.size()) return false;
    out.append(buffer.data(), got);
  }
}

std::unique_ptr<InputStream> MakePrefixedInputStream(std::string head,
                                                     std::unique_ptr<InputStream> rest) {
  return std::make_unique<PrefixedInputStream>(std::move(head), std::move(rest));
}

}  // namespace sparkprof
