#include "analyzer/codec/decoder_stream.h"

#include <algorithm>
#include <cstring>

namespace sparkprof::codec {

DecoderStream::DecoderStream(const char* codec_name, std::unique_ptr<InputStream> compressed,
                             const DecoderLimits& limits)
    : codec_name_(codec_name), limits_(limits), input_(std::move(compressed)) {}

Status DecoderStream::CorruptError(const std::string& problem) const {
  return Corrupt(std::string(codec_name_) + ": " + problem);
}

Status DecoderStream::TooLargeError(const std::string& problem) const {
  return TooLarge(std::string(codec_name_) + ": " + problem);
}

Result<size_t> DecoderStream::Read(char* buffer, size_t size) {
  if (!error_.ok()) return error_;
  size_t served = 0;
  // Filling the whole buffer keeps the line splitter above us from seeing tiny reads.
  while (served < size && !finished_) {
    Result<size_t> produced = Produce(buffer + served, size - served);
    if (!produced.ok()) {
      error_ = produced.status();
      break;
    }
    if (*produced == 0) {
      finished_ = true;
      break;
    }
    uint64_t allowed = std::min<uint64_t>(*produced, limits_.max_output_bytes - output_bytes_);
    output_bytes_ += allowed;
    served += allowed;
    if (allowed < *produced) {
      error_ = TooLargeError("decompressed output exceeds max_output_bytes (" +
                             std::to_string(limits_.max_output_bytes) + ") at compressed byte " +
                             std::to_string(input_.offset()));
      break;
    }
  }
  if (served > 0) return served;
  if (!error_.ok()) return error_;
  return size_t{0};
}

char* BlockDecoderStream::ChooseDestination(const BlockTarget& target, size_t decoded_bytes) {
  if (decoded_bytes <= target.caller_capacity) return target.caller_buffer;
  if (block_capacity_ < decoded_bytes) {
    // Callers check decoded_bytes against DecoderLimits::max_block_bytes before asking.
    block_ = std::make_unique<char[]>(decoded_bytes);
    block_capacity_ = decoded_bytes;
  }
  block_in_use_ = true;
  return block_.get();
}

Result<size_t> BlockDecoderStream::Produce(char* buffer, size_t size) {
  if (block_begin_ == block_end_) {
    block_in_use_ = false;
    SPARKPROF_ASSIGN_OR_RETURN(size_t decoded, DecodeBlock({buffer, size}));
    if (!block_in_use_) return decoded;
    block_begin_ = 0;
    block_end_ = decoded;
  }
  size_t n = std::min(size, block_end_ - block_begin_);
  std::memcpy(buffer, block_.get() + block_begin_, n);
  block_begin_ += n;
  return n;
}

}  // namespace sparkprof::codec
