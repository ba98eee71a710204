#include "native-agent/sample_ring.h"

#include <cstring>

namespace sparkprof::agent {
namespace {

uint32_t RoundUpToPowerOfTwo(uint32_t value) {
  uint32_t result = 1;
  while (result < value && result < (1u << 30)) result <<= 1;
  return result;
}

}  // namespace

// not async-signal-safe
SampleRing::SampleRing(uint32_t capacity, int depth)
    : depth_(depth < 1 ? 1 : depth),
      // Keep every slot 8-byte aligned: records hold pointers and 64-bit integers.
      slot_bytes_((SampleRecord::BytesFor(depth_) + 7) & ~size_t{7}),
      mask_(RoundUpToPowerOfTwo(capacity < 2 ? 2 : capacity) - 1),
      storage_(new std::byte[slot_bytes_ * (mask_ + 1)]) {
  // Touch every page now so the first samples do not take page faults inside the handler.
  std::memset(storage_.get(), 0, slot_bytes_ * (mask_ + 1));
}

}  // namespace sparkprof::agent
