// Constants of snappy-java's SnappyOutputStream framing, shared by the reader and the writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sparkprof::codec::snappy_java {

inline constexpr std::string_view kMagic{"\x82SNAPPY\0", 8};
inline constexpr size_t kHeaderBytes = 16;  // magic, BE int32 version, BE int32 compatible version
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kMinimumCompatibleVersion = 1;
// A chunk-length int with this value is the first four magic bytes of a concatenated stream.
inline constexpr uint32_t kMagicHead = 0x82534E41;
inline constexpr size_t kDefaultChunkBytes = 32 << 10;  // spark.io.compression.snappy.blockSize

}  // namespace sparkprof::codec::snappy_java
