// Writes a gzip member (zlib deflate), for fixtures and tests.
#pragma once

#include <string>
#include <string_view>

namespace sparkprof::codec {

std::string EncodeGzip(std::string_view data, int level = 6);

}  // namespace sparkprof::codec
