#include "analyzer/codec/lz4_block_stream.h"

#include <lz4.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "analyzer/codec/byte_order.h"
#include "analyzer/codec/decoder_stream.h"
#include "analyzer/codec/lz4_block_format.h"
#include "analyzer/codec/lz4_java_checksum.h"

namespace sparkprof::codec {
namespace {

std::string Hex(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

class Lz4BlockStream final : public BlockDecoderStream {
 public:
  Lz4BlockStream(std::unique_ptr<InputStream> compressed, const DecoderLimits& limits)
      : BlockDecoderStream("lz4", std::move(compressed), limits) {}

 private:
  Result<size_t> DecodeBlock(const BlockTarget& target) override {
    using namespace lz4_block;
    while (true) {
      const uint64_t header_offset = input_.offset();
      const std::string at = " at byte " + std::to_string(header_offset);
      SPARKPROF_ASSIGN_OR_RETURN(size_t available, input_.Ensure(kHeaderBytes));
      // Spark reads with stopOnEmptyBlock=false: the end of input at a block boundary is the
      // end of the log, with or without an end block before it.
      if (available == 0) return size_t{0};
      const char* header = input_.data();
      if (std::memcmp(header, kMagic.data(), std::min(available, kMagic.size())) != 0) {
        return CorruptError("bad magic" + at + " (expected \"LZ4Block\")");
      }
      if (available < kHeaderBytes) {
        return CorruptError("truncated block header" + at + " (" + std::to_string(available) +
                            " of " + std::to_string(kHeaderBytes) + " bytes)");
      }
      const uint8_t token = static_cast<uint8_t>(header[8]);
      const uint8_t method = token & 0xF0;
      const int level = token & 0x0F;
      const uint32_t compressed_bytes = LoadLittleEndian32(header + 9);
      const uint32_t decoded_bytes = LoadLittleEndian32(header + 13);
      const uint32_t checksum = LoadLittleEndian32(header + 17);
      if (method != kMethodRaw && method != kMethodLz4) {
        return CorruptError("unknown compression method " + Hex(method) + " in block" + at);
      }
      if (compressed_bytes == 0 && decoded_bytes == 0) {
        if (checksum != 0) {
          return CorruptError("end-of-stream block" + at + " has non-zero checksum " +
                              Hex(checksum));
        }
        input_.Consume(kHeaderBytes);
        continue;  // another concatenated stream may follow
      }
      const uint64_t level_max_bytes = uint64_t{1} << (kLevelBase + level);
      if (decoded_bytes > level_max_bytes || decoded_bytes > limits_.max_block_bytes) {
        return CorruptError(
            "block" + at + " declares " + std::to_string(decoded_bytes) +
            " decompressed bytes, more than allowed (" +
            std::to_string(std::min<uint64_t>(level_max_bytes, limits_.max_block_bytes)) + ")");
      }
      if (compressed_bytes == 0 || decoded_bytes == 0) {
        return CorruptError("block" + at + " declares " + std::to_string(compressed_bytes) +
                            " compressed and " + std::to_string(decoded_bytes) +
                            " decompressed bytes");
      }
      if (method == kMethodRaw && compressed_bytes != decoded_bytes) {
        return CorruptError("stored block" + at + " has compressed length " +
                            std::to_string(compressed_bytes) + " != decompressed length " +
                            std::to_string(decoded_bytes));
      }
      if (compressed_bytes >
          static_cast<uint32_t>(LZ4_compressBound(static_cast<int>(decoded_bytes)))) {
        return CorruptError("block" + at + " declares " + std::to_string(compressed_bytes) +
                            " compressed bytes, more than lz4 can produce from " +
                            std::to_string(decoded_bytes));
      }
      SPARKPROF_ASSIGN_OR_RETURN(available, input_.Ensure(kHeaderBytes + compressed_bytes));
      if (available < kHeaderBytes + compressed_bytes) {
        return CorruptError("truncated block" + at + " (" +
                            std::to_string(available - kHeaderBytes) + " of " +
                            std::to_string(compressed_bytes) + " payload bytes)");
      }
      const char* payload = input_.data() + kHeaderBytes;
      char* destination = ChooseDestination(target, decoded_bytes);
      if (method == kMethodRaw) {
        std::memcpy(destination, payload, decoded_bytes);
      } else {
        int written = LZ4_decompress_safe(payload, destination, static_cast<int>(compressed_bytes),
                                          static_cast<int>(decoded_bytes));
        if (written != static_cast<int>(decoded_bytes)) {
          return CorruptError(written < 0
                                  ? "malformed lz4 data in block" + at
                                  : "block" + at + " decompressed to " + std::to_string(written) +
                                        " bytes, header says " + std::to_string(decoded_bytes));
        }
      }
      const uint32_t actual = Lz4JavaBlockChecksum({destination, decoded_bytes});
      if (actual != checksum) {
        return CorruptError("checksum mismatch in block" + at + " (expected " + Hex(checksum) +
                            ", got " + Hex(actual) + ")");
      }
      input_.Consume(kHeaderBytes + compressed_bytes);
      return size_t{decoded_bytes};
    }
  }
};

}  // namespace

std::unique_ptr<InputStream> MakeLz4BlockDecoder(std::unique_ptr<InputStream> compressed,
                                                 const DecoderLimits& limits) {
  return std::make_unique<Lz4BlockStream>(std::move(compressed), limits);
}

}  // namespace sparkprof::codec
