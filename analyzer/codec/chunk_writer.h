// The buffering every Java block framing shares: input collects until a chunk is full (or a
// flush ends it early), then the framing encodes that chunk. The writers exist for tests and
// fixtures, since no real .lz4/.snappy/.lzf event logs are available.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sparkprof::codec {

class ChunkWriter {
 public:
  // Appends the encoded bytes to `*out`, which must outlive the writer.
  ChunkWriter(std::string* out, size_t chunk_bytes, bool flush_ends_chunk);
  virtual ~ChunkWriter() = default;
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  void Append(std::string_view data);
  // What the Java stream's flush() does: snappy-java and compress-lzf end the chunk,
  // lz4-java (syncFlush=false) does nothing.
  void Flush();
  // Ends the stream (pending chunk, then any end marker). The writer must not be used after.
  void Finish();

 protected:
  virtual void EncodeChunk(std::string_view chunk) = 0;
  virtual void EncodeEndOfStream() {}
  std::string* out_;

 private:
  void EmitPending();

  std::string pending_;
  size_t chunk_bytes_;
  bool flush_ends_chunk_;
};

}  // namespace sparkprof::codec
