// Helpers shared by the codec tests: sample event-log text, random bytes, and a drain loop
// that records what a decoder served and how it stopped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "analyzer/codec/codec.h"

namespace sparkprof::codec::testing {

// JSON lines that look like an event log (compressible, like the real thing).
std::string SampleEventLogText(size_t bytes);
// Incompressible bytes, the same for the same seed.
std::string RandomBytes(size_t bytes, uint32_t seed);

struct Drained {
  std::string bytes;
  Status status;                // ok when the stream ended cleanly
  bool error_is_sticky = true;  // a Read after the error failed again
};

// Reads `stream` to its end or first error, `read_bytes` at a time.
Drained Drain(InputStream& stream, size_t read_bytes = 64 << 10);
Drained DecodeAll(Format format, std::string compressed, const DecoderLimits& limits = {},
                  size_t read_bytes = 64 << 10);

// Expects `drained` to have stopped with `code`, a message containing `message_part`, and a
// sticky error.
void ExpectError(const Drained& drained, StatusCode code, const std::string& message_part);
inline void ExpectCorrupt(const Drained& drained, const std::string& message_part) {
  ExpectError(drained, StatusCode::kCorrupt, message_part);
}

// An input that hands out at most `max_read_bytes` per Read, like a pipe or a socket.
std::unique_ptr<InputStream> MakeTrickleInputStream(std::string bytes, size_t max_read_bytes);

}  // namespace sparkprof::codec::testing
