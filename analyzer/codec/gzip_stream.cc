#include "analyzer/codec/gzip_stream.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <string>

#include "analyzer/codec/decoder_stream.h"

namespace sparkprof::codec {
namespace {

constexpr int kGzipOnlyWindowBits = 15 + 16;

class GzipStream final : public DecoderStream {
 public:
  GzipStream(std::unique_ptr<InputStream> compressed, const DecoderLimits& limits)
      : DecoderStream("gzip", std::move(compressed), limits) {
    initialized_ = inflateInit2(&zlib_, kGzipOnlyWindowBits) == Z_OK;
  }
  ~GzipStream() override {
    if (initialized_) inflateEnd(&zlib_);
  }

 private:
  Result<size_t> Produce(char* buffer, size_t size) override {
    if (!initialized_) return Internal("gzip: cannot initialise zlib");
    // zlib counts in uInt; a larger caller buffer is simply filled over several calls.
    const uInt capacity = static_cast<uInt>(std::min<size_t>(size, UINT_MAX));
    zlib_.next_out = reinterpret_cast<Bytef*>(buffer);
    zlib_.avail_out = capacity;
    while (zlib_.avail_out == capacity) {
      if (input_.available() == 0 && !output_may_be_pending_) {
        SPARKPROF_ASSIGN_OR_RETURN(size_t available, input_.FillIfEmpty());
        if (available == 0) {
          if (!in_member_) return size_t{0};
          return CorruptError("truncated gzip member at byte " + std::to_string(member_offset_) +
                              " (input ends at byte " + std::to_string(input_.offset()) + ")");
        }
      }
      if (!in_member_ && input_.available() > 0) {
        member_offset_ = input_.offset();
        in_member_ = true;
      }
      const uInt offered = static_cast<uInt>(std::min<size_t>(input_.available(), UINT_MAX));
      zlib_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input_.data()));
      zlib_.avail_in = offered;
      int result = inflate(&zlib_, Z_NO_FLUSH);
      input_.Consume(offered - zlib_.avail_in);
      if (result == Z_STREAM_END) {
        in_member_ = false;
        output_may_be_pending_ = false;
        inflateReset(&zlib_);
        continue;
      }
      if (result == Z_BUF_ERROR) {
        // No progress possible: zlib needs more input.
        output_may_be_pending_ = false;
        continue;
      }
      if (result != Z_OK) {
        return CorruptError(std::string(zlib_.msg != nullptr ? zlib_.msg : "inflate failed") +
                            " in member at byte " + std::to_string(member_offset_) +
                            " (near byte " + std::to_string(input_.offset()) + ")");
      }
      output_may_be_pending_ = zlib_.avail_out == 0;
    }
    return size_t{capacity - zlib_.avail_out};
  }

  z_stream zlib_{};
  bool initialized_ = false;
  bool in_member_ = false;
  bool output_may_be_pending_ = false;
  uint64_t member_offset_ = 0;
};

}  // namespace

std::unique_ptr<InputStream> MakeGzipDecoder(std::unique_ptr<InputStream> compressed,
                                             const DecoderLimits& limits) {
  return std::make_unique<GzipStream>(std::move(compressed), limits);
}

}  // namespace sparkprof::codec
