// What every codec fuzz target checks: decoding arbitrary bytes ends cleanly or with a sticky
// error, within the limits; and the same bytes, encoded by our writer, decode to themselves.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "analyzer/codec/codec.h"
#include "analyzer/codec/encode.h"

namespace sparkprof::codec::fuzz {

inline void Check(bool condition) {
  if (!condition) std::abort();
}

// Drains `stream`; returns the decoded bytes (bounded by the limits).
inline std::string DrainForFuzzing(InputStream& stream, size_t read_bytes, uint64_t max_output) {
  std::vector<char> buffer(read_bytes);
  std::string out;
  while (true) {
    Result<size_t> got = stream.Read(buffer.data(), buffer.size());
    if (!got.ok()) {
      Check(!stream.Read(buffer.data(), buffer.size()).ok());
      break;
    }
    if (*got == 0) break;
    Check(*got <= buffer.size());
    out.append(buffer.data(), *got);
    Check(out.size() <= max_output);
  }
  return out;
}

inline void FuzzDecoder(Format format, const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  DecoderLimits limits;
  limits.max_block_bytes = 1 << 20;
  limits.max_output_bytes = 32 << 20;
  // Vary the caller's buffer so blocks land both in it and in the decoder's own buffer.
  size_t read_bytes = size == 0 ? 1 : 1 + (data[size - 1] % 4) * 40000;
  auto decoder = MakeDecoder(format, MakeMemoryInputStream(bytes), limits);
  Check(decoder.ok());
  DrainForFuzzing(**decoder, read_bytes, limits.max_output_bytes);

  if (format == Format::kPlain || size > (1 << 20)) return;
  Result<std::string> encoded = Encode(format, bytes);
  Check(encoded.ok());
  auto round_trip = MakeDecoder(format, MakeMemoryInputStream(*encoded), DecoderLimits{});
  Check(round_trip.ok());
  Check(DrainForFuzzing(**round_trip, read_bytes, UINT64_MAX) == bytes);
}

}  // namespace sparkprof::codec::fuzz
