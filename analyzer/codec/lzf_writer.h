// Writes compress-lzf LZFOutputStream chunks as Spark's LZFCompressionCodec does.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/codec/chunk_writer.h"
#include "analyzer/codec/lzf_format.h"

namespace sparkprof::codec {

class LzfWriter final : public ChunkWriter {
 public:
  explicit LzfWriter(std::string* out, size_t chunk_bytes = lzf_chunk::kMaxChunkBytes);

 private:
  void EncodeChunk(std::string_view chunk) override;
  std::string compressed_;
};

std::string EncodeLzf(std::string_view data, size_t chunk_bytes = lzf_chunk::kMaxChunkBytes);

}  // namespace sparkprof::codec
