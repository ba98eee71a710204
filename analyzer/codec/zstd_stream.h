// Decoder for ".zstd" event logs: standard zstd frames, one per flush (closeFrameOnFlush), so a
// log is a sequence of concatenated frames whose last one may be cut off while Spark writes it.
#pragma once

#include <memory>

#include "analyzer/codec/codec.h"

namespace sparkprof::codec {

std::unique_ptr<InputStream> MakeZstdDecoder(std::unique_ptr<InputStream> compressed,
                                             const DecoderLimits& limits);

}  // namespace sparkprof::codec
