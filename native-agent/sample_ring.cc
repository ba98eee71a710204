#include "native-agent/sample_ring.h"

#include <cstring>
#include <new>

namespace sparkprof::agent {
namespace {

uint32_t RoundUpToPowerOfTwo(uint32_t value) {
  uint32_t result = 1;
  while (result < value && result < (1u << 30)) result <<= 1;
  return result;
}

// Keep every slot 8-byte aligned: records hold pointers and 64-bit integers.
size_t SlotBytes(int depth) {
  return (SampleRecord::BytesFor(depth < 1 ? 1 : depth) + 7) & ~size_t{7};
}

}  // namespace

uint32_t SampleRing::RoundedCapacity(uint32_t capacity) {
  return RoundUpToPowerOfTwo(capacity < 2 ? 2 : capacity);
}

size_t SampleRing::MemoryBytesFor(uint32_t capacity, int depth) {
  return SlotBytes(depth) * RoundedCapacity(capacity);
}

// not async-signal-safe
SampleRing::SampleRing(uint32_t capacity, int depth)
    : depth_(depth < 1 ? 1 : depth),
      slot_bytes_(SlotBytes(depth_)),
      mask_(RoundedCapacity(capacity) - 1),
      // No exception may leave a JVMTI callback: a failed allocation is a ring that drops.
      storage_(new (std::nothrow) std::byte[slot_bytes_ * (mask_ + 1)]) {
  // Touch every page now so the first samples do not take page faults inside the handler.
  if (storage_) std::memset(storage_.get(), 0, slot_bytes_ * (mask_ + 1));
}

}  // namespace sparkprof::agent
