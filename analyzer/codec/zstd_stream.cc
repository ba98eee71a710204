#include "analyzer/codec/zstd_stream.h"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <string>

#include "analyzer/codec/decoder_stream.h"

namespace sparkprof::codec {
namespace {

// The window is what a zstd frame makes the decoder allocate, so it is bounded like a block.
// Spark writes level 1 frames with windows of at most 512 KiB.
// zstd.h keeps its window-log bounds behind ZSTD_STATIC_LINKING_ONLY: smallest window 2^10,
// default decoder ceiling 2^27.
int WindowLogMax(uint64_t max_block_bytes) {
  constexpr int kSmallestWindowLog = 10;
  constexpr int kDefaultMaxWindowLog = 27;
  int log = std::bit_width(std::max<uint64_t>(max_block_bytes, 1)) - 1;
  return std::clamp(log, kSmallestWindowLog, kDefaultMaxWindowLog);
}

class ZstdStream final : public DecoderStream {
 public:
  ZstdStream(std::unique_ptr<InputStream> compressed, const DecoderLimits& limits)
      : DecoderStream("zstd", std::move(compressed), limits), context_(ZSTD_createDCtx()) {
    if (context_ != nullptr) {
      ZSTD_DCtx_setParameter(context_, ZSTD_d_windowLogMax, WindowLogMax(limits.max_block_bytes));
    }
  }
  ~ZstdStream() override { ZSTD_freeDCtx(context_); }

 private:
  Result<size_t> Produce(char* buffer, size_t size) override {
    if (context_ == nullptr) return Internal("zstd: cannot create a decompression context");
    ZSTD_outBuffer output{buffer, size, 0};
    while (output.pos == 0) {
      // Decoded bytes may still sit in the context after the input ran dry, so flush them
      // before asking for more input.
      if (input_.available() == 0 && !output_may_be_pending_) {
        SPARKPROF_ASSIGN_OR_RETURN(size_t available, input_.FillIfEmpty());
        if (available == 0) {
          if (!in_frame_) return size_t{0};
          return CorruptError("truncated zstd frame at byte " + std::to_string(frame_offset_) +
                              " (input ends at byte " + std::to_string(input_.offset()) + ")");
        }
      }
      if (!in_frame_ && input_.available() > 0) {
        frame_offset_ = input_.offset();
        in_frame_ = true;
      }
      ZSTD_inBuffer in{input_.data(), input_.available(), 0};
      size_t hint = ZSTD_decompressStream(context_, &output, &in);
      input_.Consume(in.pos);
      if (ZSTD_isError(hint)) {
        return CorruptError(std::string(ZSTD_getErrorName(hint)) + " in frame at byte " +
                            std::to_string(frame_offset_) + " (near byte " +
                            std::to_string(input_.offset()) + ")");
      }
      // A full output buffer may mean more decoded bytes wait inside the context; hint 0
      // means the frame is complete and flushed, and the next input starts a new frame.
      output_may_be_pending_ = hint != 0 && output.pos == output.size;
      if (hint == 0) in_frame_ = false;
    }
    return output.pos;
  }

  ZSTD_DCtx* context_;
  bool in_frame_ = false;
  bool output_may_be_pending_ = false;
  uint64_t frame_offset_ = 0;
};

}  // namespace

std::unique_ptr<InputStream> MakeZstdDecoder(std::unique_ptr<InputStream> compressed,
                                             const DecoderLimits& limits) {
  return std::make_unique<ZstdStream>(std::move(compressed), limits);
}

}  // namespace sparkprof::codec
