// Writes lz4-java LZ4BlockOutputStream framing exactly as Spark's LZ4CompressionCodec does:
// 32 KiB blocks, XXH32 checksums, RAW blocks when lz4 does not shrink them, an end block.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/codec/chunk_writer.h"
#include "analyzer/codec/lz4_block_format.h"

namespace sparkprof::codec {

class Lz4BlockWriter final : public ChunkWriter {
 public:
  // `block_bytes` as lz4-java accepts it: 64 bytes to 32 MiB.
  explicit Lz4BlockWriter(std::string* out, size_t block_bytes = lz4_block::kDefaultBlockBytes);

 private:
  void EncodeChunk(std::string_view block) override;
  void EncodeEndOfStream() override;
  void AppendHeader(uint8_t method, uint32_t compressed_bytes, uint32_t decoded_bytes,
                    uint32_t checksum);

  uint8_t level_;
  std::string compressed_;
};

std::string EncodeLz4Block(std::string_view data,
                           size_t block_bytes = lz4_block::kDefaultBlockBytes);

}  // namespace sparkprof::codec
