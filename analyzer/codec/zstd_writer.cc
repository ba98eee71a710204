#include "analyzer/codec/zstd_writer.h"

#include <zstd.h>

namespace sparkprof::codec {

ZstdWriter::ZstdWriter(std::string* out, size_t frame_bytes, int level)
    : ChunkWriter(out, frame_bytes, /*flush_ends_chunk=*/true), level_(level) {}

void ZstdWriter::EncodeChunk(std::string_view frame) {
  compressed_.resize(ZSTD_compressBound(frame.size()));
  size_t size =
      ZSTD_compress(compressed_.data(), compressed_.size(), frame.data(), frame.size(), level_);
  // ZSTD_compress only fails on a too-small destination, which compressBound rules out.
  if (!ZSTD_isError(size)) out_->append(compressed_.data(), size);
}

std::string EncodeZstd(std::string_view data, int level) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t size = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
  out.resize(ZSTD_isError(size) ? 0 : size);
  return out;
}

}  // namespace sparkprof::codec
