// The compressed side of every decoder: reads the source in large chunks and lets a decoder
// look at a whole block header or payload contiguously, while keeping the absolute byte offset
// that error messages name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/input_stream.h"

namespace sparkprof::codec {

class CompressedInput {
 public:
  static constexpr size_t kReadChunkBytes = 256 << 10;

  explicit CompressedInput(std::unique_ptr<InputStream> source);

  // Makes at least `bytes` bytes available at data(), unless the source ends first; returns how
  // many are available (fewer than `bytes` only at the end). The caller bounds `bytes`: the
  // buffer grows to hold it.
  Result<size_t> Ensure(size_t bytes);

  // Reads more from the source when nothing is buffered; returns the bytes available, 0 at end.
  Result<size_t> FillIfEmpty() { return available() > 0 ? Result<size_t>(available()) : Ensure(1); }

  const char* data() const { return buffer_.get() + begin_; }
  size_t available() const { return end_ - begin_; }
  void Consume(size_t bytes) {
    begin_ += bytes;
    offset_ += bytes;
  }
  // Absolute offset in the compressed input of data()[0].
  uint64_t offset() const { return offset_; }

 private:
  std::unique_ptr<InputStream> source_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
  size_t begin_ = 0;
  size_t end_ = 0;
  uint64_t offset_ = 0;
  bool source_ended_ = false;
};

}  // namespace sparkprof::codec
