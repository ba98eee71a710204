#include "analyzer/codec/compressed_input.h"

#include <algorithm>
#include <cstring>

namespace sparkprof::codec {

CompressedInput::CompressedInput(std::unique_ptr<InputStream> source)
    : source_(std::move(source)) {}

Result<size_t> CompressedInput::Ensure(size_t bytes) {
  if (available() >= bytes || source_ended_) return available();
  if (capacity_ - begin_ < bytes) {
    size_t wanted = std::max(bytes, kReadChunkBytes);
    if (capacity_ < wanted) {
      auto grown = std::make_unique<char[]>(wanted);
      if (available() > 0) std::memcpy(grown.get(), data(), available());
      buffer_ = std::move(grown);
      capacity_ = wanted;
    } else if (available() > 0) {
      std::memmove(buffer_.get(), data(), available());
    }
    end_ -= begin_;
    begin_ = 0;
  }
  while (available() < bytes) {
    SPARKPROF_ASSIGN_OR_RETURN(size_t got, source_->Read(buffer_.get() + end_, capacity_ - end_));
    if (got == 0) {
      source_ended_ = true;
      break;
    }
    end_ += got;
  }
  return available();
}

}  // namespace sparkprof::codec
