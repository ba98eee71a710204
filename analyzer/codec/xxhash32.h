// XXH32, the checksum lz4-java puts in every LZ4Block header. Implemented here because the
// system liblz4 does not export its copy.
#pragma once

#include <cstdint>
#include <string_view>

namespace sparkprof::codec {

uint32_t Xxh32(std::string_view data, uint32_t seed);

// lz4-java: StreamingXXHash32(0x9747b28c).asChecksum().getValue() keeps only 28 bits.
inline constexpr uint32_t kLz4JavaChecksumSeed = 0x9747b28c;
inline uint32_t Lz4JavaBlockChecksum(std::string_view uncompressed) {
  return Xxh32(uncompressed, kLz4JavaChecksumSeed) & 0x0FFFFFFFu;
}

}  // namespace sparkprof::codec
