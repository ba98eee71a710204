// Constants of compress-lzf's chunk framing (LZFChunk), shared by the reader and the writer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sparkprof::codec::lzf_chunk {

inline constexpr char kMagic0 = 'Z';
inline constexpr char kMagic1 = 'V';
inline constexpr uint8_t kTypeStored = 0;      // 'Z' 'V' 0 len(u16 BE) bytes
inline constexpr uint8_t kTypeCompressed = 1;  // 'Z' 'V' 1 compLen(u16 BE) origLen(u16 BE) lzf
inline constexpr size_t kStoredHeaderBytes = 5;
inline constexpr size_t kCompressedHeaderBytes = 7;
inline constexpr size_t kMaxChunkBytes = 0xFFFF;
// compress-lzf stores inputs shorter than this without trying to compress them.
inline constexpr size_t kMinCompressibleBytes = 16;

}  // namespace sparkprof::codec::lzf_chunk
