// One memory budget for every thread's sample ring (option `ringmemory=`). Valid options can ask
// for absurd rings (`depth=2048,ring=65536` is 2 GiB per thread, allocated and touched when the
// thread starts), so each ring is sized against the budget when its thread registers: shrunk
// (halved, down to kMinRingSlots) to at most 1/kMaxRingShare of the budget and to what is left,
// and when not even the smallest ring fits, the thread is not profiled. Both are counted, and the
// agent logs the first of each once.
#pragma once

#include <atomic>
#include <cstdint>

namespace sparkprof::agent {

class RingBudget {
 public:
  static constexpr uint32_t kMinRingSlots = 4;
  // One ring holds at most budget / 256 (1 MiB by default, 30x a default ring), so the JVM's
  // own threads, which start first, cannot take the budget from the task threads after them.
  static constexpr uint64_t kMaxRingShare = 256;

  explicit RingBudget(uint64_t budget_bytes) : budget_bytes_(budget_bytes) {}

  // Slots for a new ring of `depth` frames: `requested` (rounded up to a power of two as the
  // ring does) or fewer, with its bytes reserved; 0 when no ring fits (nothing reserved).
  // Thread-safe.
  uint32_t Reserve(uint32_t requested, int depth);
  // Gives back what a ring of `slots` x `depth` reserved (its thread's state is freed).
  void Release(uint32_t slots, int depth);

  uint64_t budget_bytes() const { return budget_bytes_; }
  uint64_t reserved_bytes() const { return reserved_bytes_.load(); }
  uint64_t rings_shrunk() const { return rings_shrunk_.load(); }
  uint64_t threads_refused() const { return threads_refused_.load(); }

 private:
  const uint64_t budget_bytes_;
  std::atomic<uint64_t> reserved_bytes_{0};
  std::atomic<uint64_t> rings_shrunk_{0};
  std::atomic<uint64_t> threads_refused_{0};
};

}  // namespace sparkprof::agent
