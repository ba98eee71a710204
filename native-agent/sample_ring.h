// A fixed-capacity single-producer/single-consumer ring of fixed-size sample records, one per
// profiled thread. The producer is the thread's own signal handler; the consumer is the drain.
//
// Why not boost::lockfree::spsc_queue: its push() copies a T whose size is fixed at compile time,
// while our record size depends on the `depth` option, and a copy would mean walking the stack into
// a temporary and memcpy'ing depth x 16 bytes per sample (bench/sample_ring_bench.cc: a put costs
// 1.7-2.6x this ring's at depth 64, 34-37x at depth 2048; a compile-time capacity would also drop
// the `ring` option and the ringmemory budget). Here the handler reserves the next slot,
// lets the stack walker write straight into it, and publishes it with one release store. All memory
// is allocated in the constructor (on ThreadStart, outside any handler); nothing allocates later.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "native-agent/task_tag.h"

namespace sparkprof::agent {

// Layout-compatible with HotSpot's ASGCT_CallFrame {jint lineno; jmethodID method_id;}.
struct RawFrame {
  int32_t bci_or_line;    // AsyncGetCallTrace: bci, or -3 for a native frame
  const void* method_id;  // jmethodID
};

struct SampleRecord {
  TaskTag tag;
  // The on-CPU time this sample stands for: in CPU mode the thread's CPU clock advance since its
  // last recorded sample (timer ticks are coarser than short intervals, and overruns merge
  // signals); in wall mode the interval; for a task thread's wall sample in mode cpu+wall its CPU
  // clock advance since its previous wall sample, at most the wall time since then.
  int64_t weight_ns;
  // Mode cpu+wall, a task thread's wall sample: the rest of the wall time since its previous wall
  // sample (or its tag), when it was not on a CPU; 0 for every other sample.
  int64_t off_cpu_ns;
  // The part of off_cpu_ns the kernel counted as run delay (runnable, waiting for a CPU).
  int64_t cpu_starved_ns;
  int32_t num_frames;  // > 0: frames valid; <= 0: walker error code (see stack_walker.h)
  // When num_frames > 0 but the first walk failed and a retry kept the outer frames: the first
  // walk's error code (the drain marks the break with it); 0 for a complete walk.
  int32_t partial_walk_error;
  // HotSpot's JavaThreadState of the sampled thread (hotspot_layout.h), -1 when unknown; read
  // for wall samples only (it tells a thread blocked on a monitor from one running).
  int32_t jvm_thread_state;
  // Mode cpu+wall: wall time (us) before this sample's own interval that the thread spent
  // blocked and unsignalled (the timer thread saw neither its CPU clock nor its run delay move
  // since its previous wall sample, so it was still in that sample's wait): the drain charges it
  // to the previous sample's stack and wait kind.
  int32_t idle_before_us;
  RawFrame frames[1];  // really `depth` frames: the ring sizes slots accordingly

  static size_t BytesFor(int depth) {
    return offsetof(SampleRecord, frames) + sizeof(RawFrame) * static_cast<size_t>(depth);
  }
};

// SampleRecord::num_frames of a record that carries only idle_before_us and weight_ns (written by
// the thread itself as its tag changes, for idle time and, in mode cpu+wall while it was found
// busy, CPU time no later sample would carry): no stack of its own; both go to the thread's last
// sample's stack.
inline constexpr int32_t kIdleOnlyRecord = -1000;

// A slot is this header plus 16 bytes a frame (docs/agent.md's `ring` row says so).
static_assert(offsetof(SampleRecord, frames) == 56 && sizeof(RawFrame) == 16);

static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "ring indices are used in a signal handler");

class SampleRing {
 public:
  // not async-signal-safe: allocates. `capacity` is rounded up to a power of two. When the
  // allocation fails, allocated() is false and the ring holds nothing (TryReserve drops).
  SampleRing(uint32_t capacity, int depth);
  SampleRing(const SampleRing&) = delete;
  SampleRing& operator=(const SampleRing&) = delete;

  int depth() const { return depth_; }
  uint32_t capacity() const { return mask_ + 1; }
  size_t memory_bytes() const { return storage_ ? slot_bytes_ * (mask_ + 1) : 0; }
  bool allocated() const { return storage_ != nullptr; }
  // What a ring of `capacity` x `depth` holds, and the capacity it really gets.
  static size_t MemoryBytesFor(uint32_t capacity, int depth);
  static uint32_t RoundedCapacity(uint32_t capacity);

  // Producer side. async-signal-safe: returns the next free slot or nullptr when full.
  SampleRecord* TryReserve() {
    uint32_t head = head_.load(std::memory_order_relaxed);
    uint32_t tail = tail_.load(std::memory_order_acquire);
    if (head - tail > mask_ || storage_ == nullptr) return nullptr;
    return Slot(head);
  }
  // async-signal-safe: publishes the slot returned by the last TryReserve().
  void Commit() {
    head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Consumer side (not async-signal-safe by contract; one consumer at a time).
  const SampleRecord* Peek() const {
    uint32_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_.load(std::memory_order_acquire)) return nullptr;
    return Slot(tail);
  }
  void Pop() { tail_.store(tail_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
  uint32_t Size() const {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }

 private:
  SampleRecord* Slot(uint32_t index) const {
    return reinterpret_cast<SampleRecord*>(storage_.get() + slot_bytes_ * (index & mask_));
  }

  int depth_;
  size_t slot_bytes_;
  uint32_t mask_;
  std::unique_ptr<std::byte[]> storage_;
  alignas(64) std::atomic<uint32_t> head_{0};  // written by the producer only
  alignas(64) std::atomic<uint32_t> tail_{0};  // written by the consumer only
};

}  // namespace sparkprof::agent
