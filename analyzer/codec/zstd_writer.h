// Writes zstd frames the way Spark's ZStdCompressionCodec does (closeFrameOnFlush: one frame per
// flush, no checksum), for fixtures and tests.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/codec/chunk_writer.h"

namespace sparkprof::codec {

inline constexpr int kSparkZstdLevel = 1;  // spark.io.compression.zstd.level

class ZstdWriter final : public ChunkWriter {
 public:
  // Each `frame_bytes` of input (and each Flush) becomes one frame.
  explicit ZstdWriter(std::string* out, size_t frame_bytes = 1 << 20, int level = kSparkZstdLevel);

 private:
  void EncodeChunk(std::string_view frame) override;
  int level_;
  std::string compressed_;
};

// One frame holding all of `data`.
std::string EncodeZstd(std::string_view data, int level = kSparkZstdLevel);

}  // namespace sparkprof::codec
