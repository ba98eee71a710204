#include "analyzer/codec/snappy_java_writer.h"

#include <snappy.h>

#include "analyzer/codec/byte_order.h"

namespace sparkprof::codec {

SnappyJavaWriter::SnappyJavaWriter(std::string* out, size_t chunk_bytes)
    : ChunkWriter(out, chunk_bytes, /*flush_ends_chunk=*/true) {
  // snappy-java writes its header on construction, so even an empty stream has one.
  out_->append(snappy_java::kMagic);
  AppendBigEndian32(out_, snappy_java::kVersion);
  AppendBigEndian32(out_, snappy_java::kMinimumCompatibleVersion);
}

void SnappyJavaWriter::EncodeChunk(std::string_view chunk) {
  compressed_.resize(snappy::MaxCompressedLength(chunk.size()));
  size_t compressed_size = 0;
  snappy::RawCompress(chunk.data(), chunk.size(), compressed_.data(), &compressed_size);
  AppendBigEndian32(out_, static_cast<uint32_t>(compressed_size));
  out_->append(compressed_.data(), compressed_size);
}

std::string EncodeSnappyJava(std::string_view data, size_t chunk_bytes) {
  std::string out;
  SnappyJavaWriter writer(&out, chunk_bytes);
  writer.Append(data);
  writer.Finish();
  return out;
}

}  // namespace sparkprof::codec
