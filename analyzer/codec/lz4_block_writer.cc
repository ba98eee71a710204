#include "analyzer/codec/lz4_block_writer.h"

#include <lz4.h>

#include <algorithm>
#include <bit>

#include "analyzer/codec/byte_order.h"
#include "analyzer/codec/lz4_java_checksum.h"

namespace sparkprof::codec {
namespace {

// lz4-java's compressionLevel(blockSize): ceil(log2(blockSize)) - 10, at least 0.
uint8_t LevelForBlockBytes(size_t block_bytes) {
  int ceil_log2 = std::bit_width(block_bytes - 1);
  return static_cast<uint8_t>(std::max(0, ceil_log2 - lz4_block::kLevelBase));
}

}  // namespace

Lz4BlockWriter::Lz4BlockWriter(std::string* out, size_t block_bytes)
    : ChunkWriter(out, std::clamp<size_t>(block_bytes, 64, 32 << 20), /*flush_ends_chunk=*/false),
      level_(LevelForBlockBytes(std::clamp<size_t>(block_bytes, 64, 32 << 20))) {}

void Lz4BlockWriter::AppendHeader(uint8_t method, uint32_t compressed_bytes, uint32_t decoded_bytes,
                                  uint32_t checksum) {
  out_->append(lz4_block::kMagic);
  out_->push_back(static_cast<char>(method | level_));
  AppendLittleEndian32(out_, compressed_bytes);
  AppendLittleEndian32(out_, decoded_bytes);
  AppendLittleEndian32(out_, checksum);
}

void Lz4BlockWriter::EncodeChunk(std::string_view block) {
  const int block_size = static_cast<int>(block.size());
  compressed_.resize(static_cast<size_t>(LZ4_compressBound(block_size)));
  int compressed_size = LZ4_compress_default(block.data(), compressed_.data(), block_size,
                                             static_cast<int>(compressed_.size()));
  const uint32_t checksum = Lz4JavaBlockChecksum(block);
  if (compressed_size <= 0 || compressed_size >= block_size) {
    AppendHeader(lz4_block::kMethodRaw, block_size, block_size, checksum);
    out_->append(block);
  } else {
    AppendHeader(lz4_block::kMethodLz4, compressed_size, block_size, checksum);
    out_->append(compressed_.data(), static_cast<size_t>(compressed_size));
  }
}

void Lz4BlockWriter::EncodeEndOfStream() { AppendHeader(lz4_block::kMethodRaw, 0, 0, 0); }

std::string EncodeLz4Block(std::string_view data, size_t block_bytes) {
  std::string out;
  Lz4BlockWriter writer(&out, block_bytes);
  writer.Append(data);
  writer.Finish();
  return out;
}

}  // namespace sparkprof::codec
