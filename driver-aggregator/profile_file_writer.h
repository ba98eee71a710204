// Writes the application's saved profile (*.sparkprof, read by `sparkprof flamegraph`): every
// accepted batch, framed as a size-prefixed flatbuffers buffer (flamegraph/profile_file_reader.h).
// Bounded by a byte cap; past it batches are counted, not written.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "common/status.h"

namespace sparkprof::driver {

// Appends `batch` (a verified, not size-prefixed buffer as the agent encodes it) to `out` as a
// size-prefixed buffer. Putting 4 bytes in front would leave the batch's 8-byte fields misaligned,
// so the body moves by 8 instead: [size][root offset + 4][identifier][4 zero bytes][batch from
// byte 8]. Offsets inside a flatbuffer are relative, so only the root offset changes.
void AppendSizePrefixed(std::span<const uint8_t> batch, std::string& out);

class ProfileFileWriter {
 public:
  explicit ProfileFileWriter(uint64_t max_bytes) : max_bytes_(max_bytes) {}
  ~ProfileFileWriter();
  ProfileFileWriter(const ProfileFileWriter&) = delete;
  ProfileFileWriter& operator=(const ProfileFileWriter&) = delete;

  // Starts a new file (truncating), closing the previous one, and its in-progress marker
  // `<path>.inprogress` (empty): readers then know the file is not finished -- the driver runs
  // on, or was killed -- until Seal() removes the marker.
  Status Open(const std::string& path);
  // Appends one batch; false when it was not written (no file, cap reached, write error).
  bool Append(std::span<const uint8_t> batch);
  void Flush();
  // The file is complete: flushed, closed, its marker removed.
  void Seal();
  // The open file (and its marker) renamed to `path` in the same file system, writing on:
  // batches that came before the application's directory was known join its profile.
  Status MoveTo(const std::string& path);
  // Closed as it is: a file not sealed keeps its marker.
  void Close();

  bool is_open() const { return file_ != nullptr; }
  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t batches_skipped() const { return batches_skipped_; }
  // The first write error, if any ("" otherwise); the file is closed after it.
  const std::string& error() const { return error_; }

 private:
  const uint64_t max_bytes_;
  std::FILE* file_ = nullptr;
  std::string path_;
  std::string framed_;  // reused per batch
  uint64_t bytes_written_ = 0;
  uint64_t batches_skipped_ = 0;
  std::string error_;
};

}  // namespace sparkprof::driver
