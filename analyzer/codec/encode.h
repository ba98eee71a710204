// One entry point to the test/fixture encoders: the bytes Spark would write for `data` in
// `format`, as one stream.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/codec/codec.h"

namespace sparkprof::codec {

// Unsupported for kZip and kUnknownBinary.
Result<std::string> Encode(Format format, std::string_view data);

}  // namespace sparkprof::codec
