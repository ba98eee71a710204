// Decoder for compress-lzf LZFOutputStream chunks, which Spark uses for ".lzf" event logs.
#pragma once

#include <memory>

#include "analyzer/codec/codec.h"

namespace sparkprof::codec {

std::unique_ptr<InputStream> MakeLzfDecoder(std::unique_ptr<InputStream> compressed,
                                            const DecoderLimits& limits);

}  // namespace sparkprof::codec
