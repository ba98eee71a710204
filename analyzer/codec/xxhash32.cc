#include "analyzer/codec/xxhash32.h"

#include <bit>

#include "analyzer/codec/byte_order.h"

namespace sparkprof::codec {
namespace {

constexpr uint32_t kPrime1 = 0x9E3779B1u;
constexpr uint32_t kPrime2 = 0x85EBCA77u;
constexpr uint32_t kPrime3 = 0xC2B2AE3Du;
constexpr uint32_t kPrime4 = 0x27D4EB2Fu;
constexpr uint32_t kPrime5 = 0x165667B1u;

inline uint32_t Round(uint32_t accumulator, uint32_t lane) {
  accumulator += lane * kPrime2;
  accumulator = std::rotl(accumulator, 13);
  return accumulator * kPrime1;
}

}  // namespace

uint32_t Xxh32(std::string_view data, uint32_t seed) {
  const char* p = data.data();
  const char* const end = p + data.size();
  uint32_t hash;
  if (data.size() >= 16) {
    uint32_t v1 = seed + kPrime1 + kPrime2;
    uint32_t v2 = seed + kPrime2;
    uint32_t v3 = seed;
    uint32_t v4 = seed - kPrime1;
    const char* const last_stripe = end - 16;
    do {
      v1 = Round(v1, LoadLittleEndian32(p));
      v2 = Round(v2, LoadLittleEndian32(p + 4));
      v3 = Round(v3, LoadLittleEndian32(p + 8));
      v4 = Round(v4, LoadLittleEndian32(p + 12));
      p += 16;
    } while (p <= last_stripe);
    hash = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
  } else {
    hash = seed + kPrime5;
  }
  hash += static_cast<uint32_t>(data.size());
  while (end - p >= 4) {
    hash += LoadLittleEndian32(p) * kPrime3;
    hash = std::rotl(hash, 17) * kPrime4;
    p += 4;
  }
  while (p < end) {
    hash += static_cast<unsigned char>(*p) * kPrime5;
    hash = std::rotl(hash, 11) * kPrime1;
    ++p;
  }
  hash ^= hash >> 15;
  hash *= kPrime2;
  hash ^= hash >> 13;
  hash *= kPrime3;
  hash ^= hash >> 16;
  return hash;
}

}  // namespace sparkprof::codec
