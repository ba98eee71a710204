// Decoder for gzip files (some platforms deliver event logs gzipped, e.g. Databricks log
// delivery), including several concatenated members.
#pragma once

#include <memory>

#include "analyzer/codec/codec.h"

namespace sparkprof::codec {

std::unique_ptr<InputStream> MakeGzipDecoder(std::unique_ptr<InputStream> compressed,
                                             const DecoderLimits& limits);

}  // namespace sparkprof::codec
