// The checksum lz4-java puts in every LZ4Block header: XXH32 of the uncompressed block with
// lz4-java's seed, of which StreamingXXHash32(0x9747b28c).asChecksum().getValue() keeps only 28
// bits. XXH32 is Debian's libxxhash (libxxhash-dev); the system liblz4 does not export its copy.
#pragma once

#include <cstdint>
#include <string_view>

namespace sparkprof::codec {

inline constexpr uint32_t kLz4JavaChecksumSeed = 0x9747b28c;
inline constexpr uint32_t kLz4JavaChecksumMask = 0x0FFFFFFFu;

uint32_t Lz4JavaBlockChecksum(std::string_view uncompressed);

}  // namespace sparkprof::codec
