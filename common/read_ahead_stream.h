// Reads another stream ahead on a thread of its own, so that producing the bytes (decompression,
// disk reads) overlaps with what the caller does with them (parsing). Bounded: at most
// `buffers` x `buffer_bytes` are read ahead. Serves exactly the inner stream's bytes, then its
// end or its error, in order; input_offset() is the inner stream's offset after the bytes served
// so far were read.
#pragma once

#include <cstddef>
#include <memory>

#include "common/input_stream.h"

namespace sparkprof {

inline constexpr size_t kReadAheadBufferBytes = 256 << 10;
inline constexpr size_t kReadAheadBuffers = 3;

// `inner` must outlive the returned stream and is read only by its thread until the stream is
// destroyed (which stops and joins the thread). Where no thread can be started, the returned
// stream reads `inner` directly.
std::unique_ptr<InputStream> MakeReadAheadStream(InputStream& inner,
                                                 size_t buffer_bytes = kReadAheadBufferBytes,
                                                 size_t buffers = kReadAheadBuffers);

}  // namespace sparkprof
