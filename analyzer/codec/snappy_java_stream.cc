#include "analyzer/codec/snappy_java_stream.h"

#include <snappy.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "analyzer/codec/byte_order.h"
#include "analyzer/codec/decoder_stream.h"
#include "analyzer/codec/snappy_java_format.h"

namespace sparkprof::codec {
namespace {

constexpr size_t kChunkLengthBytes = 4;
constexpr size_t kMaxVarintBytes = 5;

class SnappyJavaStream final : public BlockDecoderStream {
 public:
  SnappyJavaStream(std::unique_ptr<InputStream> compressed, const DecoderLimits& limits)
      : BlockDecoderStream("snappy", std::move(compressed), limits) {}

 private:
  Status ReadStreamHeader() {
    using namespace snappy_java;
    const std::string at = " at byte " + std::to_string(input_.offset());
    SPARKPROF_ASSIGN_OR_RETURN(size_t available, input_.Ensure(kHeaderBytes));
    if (available < kHeaderBytes) {
      return CorruptError("truncated stream header" + at + " (" + std::to_string(available) +
                          " of " + std::to_string(kHeaderBytes) + " bytes)");
    }
    if (std::memcmp(input_.data(), kMagic.data(), kMagic.size()) != 0) {
      return CorruptError("bad stream header" + at + " (expected 82 'SNAPPY' 00)");
    }
    input_.Consume(kHeaderBytes);
    return Status::Ok();
  }

  Result<size_t> DecodeBlock(const BlockTarget& target) override {
    if (!header_read_) {
      SPARKPROF_ASSIGN_OR_RETURN(size_t available, input_.Ensure(1));
      if (available == 0) return size_t{0};  // an empty file: the writer never got to its header
      SPARKPROF_RETURN_IF_ERROR(ReadStreamHeader());
      header_read_ = true;
    }
    while (true) {
      const uint64_t chunk_offset = input_.offset();
      const std::string at = " at byte " + std::to_string(chunk_offset);
      SPARKPROF_ASSIGN_OR_RETURN(size_t available,
                                 input_.Ensure(kChunkLengthBytes + kMaxVarintBytes));
      if (available == 0) return size_t{0};
      if (available < kChunkLengthBytes) {
        return CorruptError("truncated chunk length" + at);
      }
      const uint32_t compressed_bytes = LoadBigEndian32(input_.data());
      if (compressed_bytes == snappy_java::kMagicHead) {
        SPARKPROF_RETURN_IF_ERROR(ReadStreamHeader());
        continue;
      }
      if (compressed_bytes == 0 || compressed_bytes > 0x7FFFFFFF) {
        return CorruptError("chunk" + at + " declares invalid length " +
                            std::to_string(static_cast<int32_t>(compressed_bytes)));
      }
      const char* payload = input_.data() + kChunkLengthBytes;
      size_t payload_available = std::min<size_t>(available - kChunkLengthBytes, compressed_bytes);
      size_t decoded_bytes = 0;
      if (!snappy::GetUncompressedLength(payload, payload_available, &decoded_bytes)) {
        if (payload_available < compressed_bytes && payload_available < kMaxVarintBytes) {
          return CorruptError("truncated chunk" + at);
        }
        return CorruptError("chunk" + at + " does not start with a snappy length");
      }
      if (decoded_bytes > limits_.max_block_bytes) {
        return CorruptError("chunk" + at + " declares " + std::to_string(decoded_bytes) +
                            " decompressed bytes, more than max_block_bytes (" +
                            std::to_string(limits_.max_block_bytes) + ")");
      }
      if (compressed_bytes > snappy::MaxCompressedLength(decoded_bytes)) {
        return CorruptError("chunk" + at + " declares " + std::to_string(compressed_bytes) +
                            " compressed bytes, more than snappy can produce from " +
                            std::to_string(decoded_bytes));
      }
      SPARKPROF_ASSIGN_OR_RETURN(available, input_.Ensure(kChunkLengthBytes + compressed_bytes));
      if (available < kChunkLengthBytes + compressed_bytes) {
        return CorruptError("truncated chunk" + at + " (" +
                            std::to_string(available - kChunkLengthBytes) + " of " +
                            std::to_string(compressed_bytes) + " bytes)");
      }
      payload = input_.data() + kChunkLengthBytes;
      if (decoded_bytes == 0) {
        // snappy-java never writes an empty chunk, but one is harmless.
        input_.Consume(kChunkLengthBytes + compressed_bytes);
        continue;
      }
      char* destination = ChooseDestination(target, decoded_bytes);
      if (!snappy::RawUncompress(payload, compressed_bytes, destination)) {
        return CorruptError("malformed snappy data in chunk" + at);
      }
      input_.Consume(kChunkLengthBytes + compressed_bytes);
      return decoded_bytes;
    }
  }

  bool header_read_ = false;
};

}  // namespace

std::unique_ptr<InputStream> MakeSnappyJavaDecoder(std::unique_ptr<InputStream> compressed,
                                                   const DecoderLimits& limits) {
  return std::make_unique<SnappyJavaStream>(std::move(compressed), limits);
}

}  // namespace sparkprof::codec
