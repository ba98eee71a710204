// What all decoders share: the InputStream contract (errors are sticky and come after every
// valid byte), the max_output_bytes budget, and for block framings (lz4-java, snappy-java, lzf)
// the choice of decoding straight into the caller's buffer when a block fits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "analyzer/codec/codec.h"
#include "analyzer/codec/compressed_input.h"

namespace sparkprof::codec {

class DecoderStream : public InputStream {
 public:
  DecoderStream(const char* codec_name, std::unique_ptr<InputStream> compressed,
                const DecoderLimits& limits);

  Result<size_t> Read(char* buffer, size_t size) final;
  uint64_t input_offset() const final { return input_.offset(); }

 protected:
  // Writes 1..size decoded bytes, or returns 0 at the clean end of the stream.
  virtual Result<size_t> Produce(char* buffer, size_t size) = 0;

  // Every message starts with the codec name: "lz4: checksum mismatch in block at byte 21 ...".
  Status CorruptError(const std::string& problem) const;
  Status TooLargeError(const std::string& problem) const;

  const char* codec_name_;
  DecoderLimits limits_;
  CompressedInput input_;

 private:
  uint64_t output_bytes_ = 0;
  Status error_;
  bool finished_ = false;
};

// A framing made of independent blocks, each with a header that declares its decoded size.
class BlockDecoderStream : public DecoderStream {
 public:
  using DecoderStream::DecoderStream;

 protected:
  // Decodes the next non-empty block into ChooseDestination(target, declared size) and returns
  // its size, or 0 at the clean end of the stream. Called once per Produce.
  struct BlockTarget {
    char* caller_buffer;
    size_t caller_capacity;
  };
  virtual Result<size_t> DecodeBlock(const BlockTarget& target) = 0;

  // Where to decode a block of `decoded_bytes`: the caller's buffer if it fits, else ours.
  char* ChooseDestination(const BlockTarget& target, size_t decoded_bytes);

 private:
  Result<size_t> Produce(char* buffer, size_t size) final;

  std::unique_ptr<char[]> block_;
  size_t block_capacity_ = 0;
  size_t block_begin_ = 0;
  size_t block_end_ = 0;
  bool block_in_use_ = false;
};

}  // namespace sparkprof::codec
