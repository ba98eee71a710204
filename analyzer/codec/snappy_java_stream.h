// Decoder for snappy-java SnappyOutputStream, which Spark uses for ".snappy" event logs (not the
// Google Snappy framing format).
#pragma once

#include <memory>

#include "analyzer/codec/codec.h"

namespace sparkprof::codec {

std::unique_ptr<InputStream> MakeSnappyJavaDecoder(std::unique_ptr<InputStream> compressed,
                                                   const DecoderLimits& limits);

}  // namespace sparkprof::codec
