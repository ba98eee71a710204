// Constants of lz4-java's LZ4BlockOutputStream framing, shared by the reader and the writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sparkprof::codec::lz4_block {

inline constexpr std::string_view kMagic = "LZ4Block";
inline constexpr size_t kHeaderBytes =
    21;  // magic, token, compressedLen, decompressedLen, checksum
inline constexpr uint8_t kMethodRaw = 0x10;
inline constexpr uint8_t kMethodLz4 = 0x20;
inline constexpr int kLevelBase = 10;  // a block holds at most 1 << (kLevelBase + level) bytes
inline constexpr size_t kDefaultBlockBytes = 32 << 10;  // spark.io.compression.lz4.blockSize

}  // namespace sparkprof::codec::lz4_block
