#include "driver-aggregator/ingest_queue.h"

#include <algorithm>
#include <new>

namespace sparkprof::driver {
namespace {

// Boost.Lockfree's fixed-size queue indexes its nodes with 16 bits, one node being its dummy.
constexpr size_t kMaxQueueNodes = 65535;

size_t QueueNodes(const IngestQueueLimits& limits) {
  return std::clamp<size_t>(limits.max_batches + 1, 2, kMaxQueueNodes);
}

}  // namespace

IngestQueue::IngestQueue(IngestQueueLimits limits, Consumer consumer)
    : limits_{std::clamp<size_t>(limits.max_batches, 1, kMaxQueueNodes - 1), limits.max_bytes},
      consumer_(std::move(consumer)),
      queue_(QueueNodes(limits)) {
  thread_ = std::thread([this] { Run(); });
}

IngestQueue::~IngestQueue() {
  Stop();
  Batch* raw = nullptr;
  while (queue_.pop(raw)) delete raw;  // pushed after Stop()'s sweep (none without producers)
}

std::unique_ptr<IngestQueue::Batch> IngestQueue::Reserve(size_t size) {
  size_t batches = queued_batches_.load(std::memory_order_relaxed);
  do {
    if (batches >= limits_.max_batches) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
  } while (!queued_batches_.compare_exchange_weak(batches, batches + 1, std::memory_order_relaxed));
  uint64_t bytes = queued_bytes_.load(std::memory_order_relaxed);
  do {
    if (size > limits_.max_bytes || bytes > limits_.max_bytes - size) {
      queued_batches_.fetch_sub(1, std::memory_order_relaxed);
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
  } while (!queued_bytes_.compare_exchange_weak(bytes, bytes + size, std::memory_order_relaxed));
  auto batch = std::make_unique<Batch>();
  batch->size = size;
  batch->words.reset(new (std::nothrow) uint64_t[(size + sizeof(uint64_t) - 1) / sizeof(uint64_t)]);
  if (!batch->words && size > 0) {  // no memory for it: a drop, not a crash
    Release(*batch);
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  return batch;
}

void IngestQueue::Release(const Batch& batch) {
  queued_bytes_.fetch_sub(batch.size, std::memory_order_relaxed);
  queued_batches_.fetch_sub(1, std::memory_order_relaxed);
}

IngestQueue::Offered IngestQueue::Push(std::unique_ptr<Batch> batch) {
  batch->queued = Clock::now();
  pushed_.fetch_add(1, std::memory_order_acq_rel);
  Batch* raw = batch.release();
  if (!queue_.bounded_push(raw)) {
    // Cannot happen (the count was reserved and the queue has a node for every reservation);
    // if it did, the batch is a drop and Drain() must not wait for it.
    std::unique_ptr<Batch> dropped(raw);
    dropped_.fetch_add(1, std::memory_order_relaxed);
    MarkConsumed(*dropped);
    return Offered::kFull;
  }
  wake_.fetch_add(1, std::memory_order_release);
  wake_.notify_one();
  return Offered::kQueued;
}

void IngestQueue::MarkConsumed(const Batch& batch) {
  Release(batch);
  {
    std::lock_guard<std::mutex> lock(drain_mutex_);
    consumed_.fetch_add(1, std::memory_order_release);
  }
  drained_.notify_all();
}

void IngestQueue::Run() {
  while (true) {
    uint32_t seen = wake_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) break;
    Batch* raw = nullptr;
    if (queue_.pop(raw)) {
      std::unique_ptr<Batch> batch(raw);
      consumer_(batch->bytes(), batch->queued);
      MarkConsumed(*batch);
      continue;
    }
    wake_.wait(seen, std::memory_order_acquire);  // until a push or Stop() bumps it
  }
  // Stopping: what is still queued is discarded (producers may still push; the destructor
  // frees those).
  Batch* raw = nullptr;
  while (queue_.pop(raw)) {
    std::unique_ptr<Batch> batch(raw);
    discarded_.fetch_add(1, std::memory_order_relaxed);
    MarkConsumed(*batch);
  }
}

bool IngestQueue::Drain(std::chrono::milliseconds timeout) {
  uint64_t target = pushed_.load(std::memory_order_acquire);
  std::unique_lock<std::mutex> lock(drain_mutex_);
  return drained_.wait_for(lock, timeout, [&] {
    return consumed_.load(std::memory_order_acquire) >= target ||
           stopping_.load(std::memory_order_acquire);
  }) && consumed_.load(std::memory_order_acquire) >= target;
}

void IngestQueue::Stop() {
  std::call_once(stop_once_, [this] {
    stopping_.store(true, std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_release);
    wake_.notify_all();
    {
      std::lock_guard<std::mutex> lock(drain_mutex_);  // a Drain() waiting sees stopping_
    }
    drained_.notify_all();
    if (thread_.joinable()) thread_.join();
  });
}

}  // namespace sparkprof::driver
