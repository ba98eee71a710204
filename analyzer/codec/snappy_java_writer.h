// Writes snappy-java SnappyOutputStream framing as Spark's SnappyCompressionCodec does.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/codec/chunk_writer.h"
#include "analyzer/codec/snappy_java_format.h"

namespace sparkprof::codec {

class SnappyJavaWriter final : public ChunkWriter {
 public:
  explicit SnappyJavaWriter(std::string* out, size_t chunk_bytes = snappy_java::kDefaultChunkBytes);

 private:
  void EncodeChunk(std::string_view chunk) override;
  std::string compressed_;
};

std::string EncodeSnappyJava(std::string_view data,
                             size_t chunk_bytes = snappy_java::kDefaultChunkBytes);

}  // namespace sparkprof::codec
