#include "analyzer/codec/lzf_stream.h"

#include <lzf.h>

#include <cstring>
#include <string>

#include "analyzer/codec/byte_order.h"
#include "analyzer/codec/decoder_stream.h"
#include "analyzer/codec/lzf_format.h"

namespace sparkprof::codec {
namespace {

class LzfStream final : public BlockDecoderStream {
 public:
  LzfStream(std::unique_ptr<InputStream> compressed, const DecoderLimits& limits)
      : BlockDecoderStream("lzf", std::move(compressed), limits) {}

 private:
  Result<size_t> DecodeBlock(const BlockTarget& target) override {
    using namespace lzf_chunk;
    while (true) {
      const std::string at = " at byte " + std::to_string(input_.offset());
      SPARKPROF_ASSIGN_OR_RETURN(size_t available, input_.Ensure(kCompressedHeaderBytes));
      if (available == 0) return size_t{0};
      const char* header = input_.data();
      if (header[0] != kMagic0 || (available > 1 && header[1] != kMagic1)) {
        return CorruptError("bad chunk magic" + at + " (expected 'ZV')");
      }
      if (available < 3) return CorruptError("truncated chunk header" + at);
      const uint8_t type = static_cast<uint8_t>(header[2]);
      if (type != kTypeStored && type != kTypeCompressed) {
        return CorruptError("unknown chunk type " + std::to_string(type) + at);
      }
      const size_t header_bytes = type == kTypeStored ? kStoredHeaderBytes : kCompressedHeaderBytes;
      if (available < header_bytes) return CorruptError("truncated chunk header" + at);
      const size_t payload_bytes = LoadBigEndian16(header + 3);
      const size_t decoded_bytes =
          type == kTypeStored ? payload_bytes : LoadBigEndian16(header + 5);
      if (decoded_bytes > limits_.max_block_bytes) {
        return CorruptError("chunk" + at + " declares " + std::to_string(decoded_bytes) +
                            " bytes, more than max_block_bytes (" +
                            std::to_string(limits_.max_block_bytes) + ")");
      }
      SPARKPROF_ASSIGN_OR_RETURN(available, input_.Ensure(header_bytes + payload_bytes));
      if (available < header_bytes + payload_bytes) {
        return CorruptError("truncated chunk" + at + " (" +
                            std::to_string(available - header_bytes) + " of " +
                            std::to_string(payload_bytes) + " bytes)");
      }
      const char* payload = input_.data() + header_bytes;
      if (decoded_bytes == 0) {
        if (type == kTypeCompressed) {
          return CorruptError("compressed chunk" + at + " declares 0 decompressed bytes");
        }
        input_.Consume(header_bytes);
        continue;
      }
      char* destination = ChooseDestination(target, decoded_bytes);
      if (type == kTypeStored) {
        std::memcpy(destination, payload, decoded_bytes);
      } else {
        unsigned int written =
            lzf_decompress(payload, static_cast<unsigned int>(payload_bytes), destination,
                           static_cast<unsigned int>(decoded_bytes));
        if (written != decoded_bytes) {
          return CorruptError(written == 0
                                  ? "malformed lzf data in chunk" + at
                                  : "chunk" + at + " decompressed to " + std::to_string(written) +
                                        " bytes, header says " + std::to_string(decoded_bytes));
        }
      }
      input_.Consume(header_bytes + payload_bytes);
      return decoded_bytes;
    }
  }
};

}  // namespace

std::unique_ptr<InputStream> MakeLzfDecoder(std::unique_ptr<InputStream> compressed,
                                            const DecoderLimits& limits) {
  return std::make_unique<LzfStream>(std::move(compressed), limits);
}

}  // namespace sparkprof::codec
