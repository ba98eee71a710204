// The hand-off from Spark's plugin dispatcher thread to the aggregator's ingest thread.
//
// Spark delivers every plugin message of the application on one dispatcher thread
// (reference/spark-facts.md), so DriverPlugin.receive must return at once: it copies the batch
// into a buffer of its own and queues it; one sparkprof thread verifies and folds the batches in
// the order they were queued. The queue is bounded twice -- by count (a fixed-size Boost.Lockfree
// queue, no allocation inside it) and by the bytes of the queued batches -- and when either bound
// would be passed the batch is dropped and counted, never waited for.
//
// Shutdown: Drain() waits until every batch queued before it was consumed (executors' final
// markers ride behind their last batches, so the driver drains after the markers arrived and
// before it writes its report and flame graphs). Stop() (and the destructor) ends the thread
// after the batch it is on and discards what is still queued; it never waits for a producer.
//
// Thread safety: Offer() from any number of threads (lock-free: two CAS loops, one push, one
// futex wake at most); Drain() and Stop() from any thread but the consumer's.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>

#include <boost/lockfree/policies.hpp>
#include <boost/lockfree/queue.hpp>

namespace sparkprof::driver {

struct IngestQueueLimits {
  // Batches queued at most (the lock-free queue's fixed size; at most 65,534).
  size_t max_batches = 1024;
  // Bytes of queued batches at most; a batch larger than this is never queued.
  uint64_t max_bytes = uint64_t{256} << 20;
};

class IngestQueue {
 public:
  using Clock = std::chrono::steady_clock;
  // Called on the ingest thread, once per batch, in queue order.
  using Consumer = std::function<void(std::span<const uint8_t> batch, Clock::time_point queued)>;

  enum class Offered : uint8_t { kQueued, kFull, kStopped, kCopyFailed };

  // Starts the ingest thread.
  IngestQueue(IngestQueueLimits limits, Consumer consumer);
  ~IngestQueue();  // Stop()
  IngestQueue(const IngestQueue&) = delete;
  IngestQueue& operator=(const IngestQueue&) = delete;

  // Queues a batch of `size` bytes that `fill(destination)` writes (into 8-byte aligned memory of
  // its own; `fill` returns false when it could not: nothing is queued). kFull (counted in
  // dropped()) when the queue holds max_batches batches or the bytes would pass max_bytes.
  template <typename Fill>
  Offered Offer(size_t size, Fill&& fill) {
    if (stopping_.load(std::memory_order_acquire)) return Offered::kStopped;
    std::unique_ptr<Batch> batch = Reserve(size);
    if (!batch) return Offered::kFull;
    if (!fill(batch->data())) {
      Release(*batch);
      return Offered::kCopyFailed;
    }
    return Push(std::move(batch));
  }

  // Waits until every batch queued before this call was consumed. False at the timeout, or
  // when the queue was stopped first.
  bool Drain(std::chrono::milliseconds timeout);
  // Ends the ingest thread after the batch it is on; batches still queued are discarded
  // (counted in discarded()). Idempotent. Offer() returns kStopped from now on.
  void Stop();

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t discarded() const { return discarded_.load(std::memory_order_relaxed); }
  uint64_t consumed() const { return consumed_.load(std::memory_order_relaxed); }
  size_t queued_batches() const { return queued_batches_.load(std::memory_order_relaxed); }
  uint64_t queued_bytes() const { return queued_bytes_.load(std::memory_order_relaxed); }
  const IngestQueueLimits& limits() const { return limits_; }

 private:
  struct Batch {
    std::unique_ptr<uint64_t[]> words;  // uint64_t: the flatbuffers Verifier wants alignment
    size_t size = 0;
    Clock::time_point queued;
    uint8_t* data() { return reinterpret_cast<uint8_t*>(words.get()); }
    std::span<const uint8_t> bytes() const {
      return {reinterpret_cast<const uint8_t*>(words.get()), size};
    }
  };

  std::unique_ptr<Batch> Reserve(size_t size);  // null (counted) when full
  void Release(const Batch& batch);             // gives back its share of the bounds
  Offered Push(std::unique_ptr<Batch> batch);
  void Run();
  void MarkConsumed(const Batch& batch);

  const IngestQueueLimits limits_;
  const Consumer consumer_;
  boost::lockfree::queue<Batch*, boost::lockfree::fixed_sized<true>> queue_;
  std::atomic<size_t> queued_batches_{0};  // reserved, not yet consumed
  std::atomic<uint64_t> queued_bytes_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> discarded_{0};
  std::atomic<bool> stopping_{false};
  // Bumped after every push and at Stop(); the ingest thread sleeps on it (a futex) when empty.
  std::atomic<uint32_t> wake_{0};
  // Batches pushed (counted before the push, so a Drain never misses one in flight) and
  // consumed; drain_mutex_ and drained_ let Drain() sleep until the two meet.
  std::atomic<uint64_t> pushed_{0};
  std::atomic<uint64_t> consumed_{0};
  std::mutex drain_mutex_;
  std::condition_variable drained_;
  std::once_flag stop_once_;
  std::thread thread_;
};

}  // namespace sparkprof::driver
