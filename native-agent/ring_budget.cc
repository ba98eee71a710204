#include "native-agent/ring_budget.h"

#include "native-agent/sample_ring.h"

namespace sparkprof::agent {

uint32_t RingBudget::Reserve(uint32_t requested, int depth) {
  const uint64_t ring_cap = budget_bytes_ / kMaxRingShare;
  uint32_t slots = SampleRing::RoundedCapacity(requested);
  while (slots > kMinRingSlots && SampleRing::MemoryBytesFor(slots, depth) > ring_cap) slots /= 2;
  uint64_t reserved = reserved_bytes_.load();
  while (true) {
    const uint64_t bytes = SampleRing::MemoryBytesFor(slots, depth);
    if (reserved + bytes <= budget_bytes_) {
      if (reserved_bytes_.compare_exchange_weak(reserved, reserved + bytes)) break;
      continue;  // `reserved` was reloaded: try the same size again
    }
    if (slots <= kMinRingSlots) {
      threads_refused_.fetch_add(1);
      return 0;
    }
    slots /= 2;
  }
  if (slots < SampleRing::RoundedCapacity(requested)) rings_shrunk_.fetch_add(1);
  return slots;
}

void RingBudget::Release(uint32_t slots, int depth) {
  reserved_bytes_.fetch_sub(SampleRing::MemoryBytesFor(slots, depth));
}

}  // namespace sparkprof::agent
