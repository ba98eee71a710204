// Decoder for lz4-java LZ4BlockOutputStream, which Spark uses for ".lz4" event logs (it is not
// the LZ4 Frame format the lz4 command line writes).
#pragma once

#include <memory>

#include "analyzer/codec/codec.h"

namespace sparkprof::codec {

std::unique_ptr<InputStream> MakeLz4BlockDecoder(std::unique_ptr<InputStream> compressed,
                                                 const DecoderLimits& limits);

}  // namespace sparkprof::codec
