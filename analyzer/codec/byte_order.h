// Fixed-width integer loads and stores. lz4-java writes little-endian ints, snappy-java and
// compress-lzf big-endian ones; spelling the byte order at each call site keeps that visible.
#pragma once

#include <cstdint>
#include <string>

namespace sparkprof::codec {

inline uint32_t LoadLittleEndian32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

inline uint32_t LoadBigEndian32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | uint32_t{b[3]};
}

inline uint16_t LoadBigEndian16(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(b[0] << 8 | b[1]);
}

inline void AppendLittleEndian32(std::string* out, uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) out->push_back(static_cast<char>(value >> shift));
}

inline void AppendBigEndian32(std::string* out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

inline void AppendBigEndian16(std::string* out, uint16_t value) {
  out->push_back(static_cast<char>(value >> 8));
  out->push_back(static_cast<char>(value));
}

}  // namespace sparkprof::codec
