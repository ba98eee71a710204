#include "driver-aggregator/profile_file_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "analyzer/profile/stage_profiles.h"
#include "common/atomic_file.h"
#include "common/errno_text.h"

namespace sparkprof::driver {
namespace {

void AppendLittleEndian32(uint32_t value, std::string& out) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

uint32_t ReadLittleEndian32(const uint8_t* data) {
  return static_cast<uint32_t>(data[0]) | static_cast<uint32_t>(data[1]) << 8 |
         static_cast<uint32_t>(data[2]) << 16 | static_cast<uint32_t>(data[3]) << 24;
}

constexpr size_t kHeaderBytes = 8;  // root offset + file identifier

std::string MarkerPath(const std::string& path) {
  return path + std::string(profile::kInProgressMarkerSuffix);
}

// The marker is a courtesy to readers: a directory that refuses it does not stop the profile.
void CreateMarker(const std::string& path) {
  std::string error;
  int marker = OpenForWritingNoFollow(MarkerPath(path), &error);
  if (marker >= 0) ::close(marker);
}

}  // namespace

void AppendSizePrefixed(std::span<const uint8_t> batch, std::string& out) {
  if (batch.size() < kHeaderBytes) return;
  AppendLittleEndian32(static_cast<uint32_t>(batch.size() + 4), out);
  AppendLittleEndian32(ReadLittleEndian32(batch.data()) + 4, out);
  out.append(reinterpret_cast<const char*>(batch.data()) + 4, 4);  // identifier
  out.append(4, '\0');
  out.append(reinterpret_cast<const char*>(batch.data()) + kHeaderBytes,
             batch.size() - kHeaderBytes);
}

ProfileFileWriter::~ProfileFileWriter() { Close(); }

Status ProfileFileWriter::Open(const std::string& path) {
  Close();
  // The output directory may be shared (/tmp/sparkprof): never write through a planted symlink.
  std::string error;
  int fd = OpenForWritingNoFollow(path, &error);
  if (fd < 0) return IoError(error);
  std::FILE* file = ::fdopen(fd, "wb");
  if (file == nullptr) {
    ::close(fd);
    return IoError("cannot create " + path + ": " + ErrnoText(errno));
  }
  file_ = file;
  path_ = path;
  bytes_written_ = 0;
  error_.clear();
  CreateMarker(path);
  return Status::Ok();
}

void ProfileFileWriter::Seal() {
  Flush();
  Close();
  if (!path_.empty()) ::unlink(MarkerPath(path_).c_str());
}

Status ProfileFileWriter::MoveTo(const std::string& path) {
  if (file_ == nullptr) return InvalidArgument("no profile file is open");
  Flush();
  // The open stream writes on into the renamed file (same inode).
  if (::rename(path_.c_str(), path.c_str()) != 0) {
    return IoError("cannot move " + path_ + " to " + path + ": " + ErrnoText(errno));
  }
  ::unlink(MarkerPath(path_).c_str());
  path_ = path;
  CreateMarker(path);
  return Status::Ok();
}

bool ProfileFileWriter::Append(std::span<const uint8_t> batch) {
  if (file_ == nullptr) return false;
  framed_.clear();
  AppendSizePrefixed(batch, framed_);
  if (framed_.empty() || bytes_written_ + framed_.size() > max_bytes_) {
    ++batches_skipped_;
    return false;
  }
  if (std::fwrite(framed_.data(), 1, framed_.size(), file_) != framed_.size()) {
    error_ = "cannot write " + path_ + ": " + ErrnoText(errno);
    ++batches_skipped_;
    Close();
    return false;
  }
  bytes_written_ += framed_.size();
  return true;
}

void ProfileFileWriter::Flush() {
  if (file_ != nullptr) std::fflush(file_);
}

void ProfileFileWriter::Close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

}  // namespace sparkprof::driver
