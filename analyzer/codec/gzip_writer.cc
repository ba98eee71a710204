#include "analyzer/codec/gzip_writer.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

namespace sparkprof::codec {

std::string EncodeGzip(std::string_view data, int level) {
  z_stream zlib{};
  constexpr int kGzipWindowBits = 15 + 16;
  if (deflateInit2(&zlib, level, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return {};
  }
  std::string out;
  char buffer[64 << 10];
  int result = Z_OK;
  while (result != Z_STREAM_END) {
    if (zlib.avail_in == 0 && !data.empty()) {
      // zlib counts in uInt; larger inputs are fed in slices.
      size_t slice = std::min<size_t>(data.size(), UINT_MAX);
      zlib.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
      zlib.avail_in = static_cast<uInt>(slice);
      data.remove_prefix(slice);
    }
    zlib.next_out = reinterpret_cast<Bytef*>(buffer);
    zlib.avail_out = sizeof buffer;
    result = deflate(&zlib, data.empty() ? Z_FINISH : Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - zlib.avail_out);
    if (result != Z_OK && result != Z_STREAM_END && result != Z_BUF_ERROR) break;
  }
  deflateEnd(&zlib);
  return out;
}

}  // namespace sparkprof::codec
