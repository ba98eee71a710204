#include "analyzer/codec/chunk_writer.h"

#include <algorithm>

namespace sparkprof::codec {

ChunkWriter::ChunkWriter(std::string* out, size_t chunk_bytes, bool flush_ends_chunk)
    : out_(out),
      chunk_bytes_(std::max<size_t>(chunk_bytes, 1)),
      flush_ends_chunk_(flush_ends_chunk) {
  pending_.reserve(chunk_bytes_);
}

void ChunkWriter::Append(std::string_view data) {
  while (!data.empty()) {
    if (pending_.empty() && data.size() >= chunk_bytes_) {
      EncodeChunk(data.substr(0, chunk_bytes_));
      data.remove_prefix(chunk_bytes_);
      continue;
    }
    size_t take = std::min(data.size(), chunk_bytes_ - pending_.size());
    pending_.append(data.substr(0, take));
    data.remove_prefix(take);
    if (pending_.size() == chunk_bytes_) EmitPending();
  }
}

void ChunkWriter::Flush() {
  if (flush_ends_chunk_) EmitPending();
}

void ChunkWriter::Finish() {
  EmitPending();
  EncodeEndOfStream();
}

void ChunkWriter::EmitPending() {
  if (pending_.empty()) return;
  EncodeChunk(pending_);
  pending_.clear();
}

}  // namespace sparkprof::codec
