#include "analyzer/codec/lzf_writer.h"

#include <lzf.h>

#include <algorithm>

#include "analyzer/codec/byte_order.h"

namespace sparkprof::codec {

LzfWriter::LzfWriter(std::string* out, size_t chunk_bytes)
    : ChunkWriter(out, std::min(chunk_bytes, lzf_chunk::kMaxChunkBytes),
                  /*flush_ends_chunk=*/true) {}

void LzfWriter::EncodeChunk(std::string_view chunk) {
  using namespace lzf_chunk;
  unsigned int compressed_size = 0;
  if (chunk.size() >= kMinCompressibleBytes) {
    // Room for one byte less than the input: lzf_compress returns 0 when the result would not
    // shrink, and then the chunk is stored.
    compressed_.resize(chunk.size() - 1);
    compressed_size =
        lzf_compress(chunk.data(), static_cast<unsigned int>(chunk.size()), compressed_.data(),
                     static_cast<unsigned int>(compressed_.size()));
  }
  out_->push_back(kMagic0);
  out_->push_back(kMagic1);
  if (compressed_size == 0) {
    out_->push_back(static_cast<char>(kTypeStored));
    AppendBigEndian16(out_, static_cast<uint16_t>(chunk.size()));
    out_->append(chunk);
  } else {
    out_->push_back(static_cast<char>(kTypeCompressed));
    AppendBigEndian16(out_, static_cast<uint16_t>(compressed_size));
    AppendBigEndian16(out_, static_cast<uint16_t>(chunk.size()));
    out_->append(compressed_.data(), compressed_size);
  }
}

std::string EncodeLzf(std::string_view data, size_t chunk_bytes) {
  std::string out;
  LzfWriter writer(&out, chunk_bytes);
  writer.Append(data);
  writer.Finish();
  return out;
}

}  // namespace sparkprof::codec
