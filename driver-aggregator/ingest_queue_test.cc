#include "driver-aggregator/ingest_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace sparkprof::driver {
namespace {

using std::chrono::milliseconds;

// Holds the ingest thread inside the consumer until opened.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    waiters_.notify_all();
    open_cv_.wait(lock, [&] { return open_; });
  }
  void WaitUntilHeld() {
    std::unique_lock<std::mutex> lock(mutex_);
    waiters_.wait(lock, [&] { return waiting_ > 0; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    open_cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable open_cv_;
  std::condition_variable waiters_;
  bool open_ = false;
  int waiting_ = 0;
};

IngestQueue::Offered OfferNumber(IngestQueue& queue, uint32_t number, size_t size = 64) {
  return queue.Offer(size, [&](uint8_t* destination) {
    std::memset(destination, 0xab, size);
    std::memcpy(destination, &number, sizeof(number));
    return true;
  });
}

uint32_t NumberOf(std::span<const uint8_t> batch) {
  uint32_t number;
  std::memcpy(&number, batch.data(), sizeof(number));
  return number;
}

TEST(IngestQueueTest, ConsumesEveryBatchInQueueOrderWithItsBytes) {
  std::vector<uint32_t> seen;
  std::vector<size_t> sizes;
  bool aligned = true;
  IngestQueue queue({}, [&](std::span<const uint8_t> batch, IngestQueue::Clock::time_point) {
    seen.push_back(NumberOf(batch));
    sizes.push_back(batch.size());
    aligned = aligned && reinterpret_cast<uintptr_t>(batch.data()) % alignof(uint64_t) == 0;
  });
  for (uint32_t i = 0; i < 5000; ++i) {
    // Drop nothing: wait for room like no real producer does, to check the order of all.
    while (OfferNumber(queue, i, 4 + i % 97) == IngestQueue::Offered::kFull) {
      std::this_thread::yield();
    }
  }
  ASSERT_TRUE(queue.Drain(milliseconds(30000)));
  ASSERT_EQ(seen.size(), 5000u);
  for (uint32_t i = 0; i < 5000; ++i) {
    EXPECT_EQ(seen[i], i);
    EXPECT_EQ(sizes[i], 4 + i % 97);
  }
  EXPECT_TRUE(aligned);
  EXPECT_EQ(queue.queued_batches(), 0u);
  EXPECT_EQ(queue.queued_bytes(), 0u);
}

TEST(IngestQueueTest, DropsAndCountsAtTheBatchLimitNeverWaits) {
  Gate gate;
  IngestQueue queue({.max_batches = 4, .max_bytes = 1 << 20},
                    [&](std::span<const uint8_t>, IngestQueue::Clock::time_point) { gate.Wait(); });
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(OfferNumber(queue, i), IngestQueue::Offered::kQueued);
  gate.WaitUntilHeld();  // one batch is being consumed: it still counts until it is done
  for (uint32_t i = 0; i < 10; ++i) {
    EXPECT_EQ(OfferNumber(queue, 100 + i), IngestQueue::Offered::kFull);
  }
  EXPECT_EQ(queue.dropped(), 10u);
  EXPECT_EQ(queue.queued_batches(), 4u);
  gate.Open();
  ASSERT_TRUE(queue.Drain(milliseconds(10000)));
  EXPECT_EQ(queue.consumed(), 4u);
  EXPECT_EQ(OfferNumber(queue, 7), IngestQueue::Offered::kQueued);  // room again
}

TEST(IngestQueueTest, BytesAreBoundedAtAndPastTheLimit) {
  Gate gate;
  IngestQueue queue({.max_batches = 100, .max_bytes = 1000},
                    [&](std::span<const uint8_t>, IngestQueue::Clock::time_point) { gate.Wait(); });
  EXPECT_EQ(OfferNumber(queue, 1, 1001), IngestQueue::Offered::kFull);  // alone past the limit
  EXPECT_EQ(OfferNumber(queue, 2, 600), IngestQueue::Offered::kQueued);
  EXPECT_EQ(OfferNumber(queue, 3, 401), IngestQueue::Offered::kFull);    // 1001 bytes
  EXPECT_EQ(OfferNumber(queue, 4, 400), IngestQueue::Offered::kQueued);  // exactly 1000
  EXPECT_EQ(queue.queued_bytes(), 1000u);
  EXPECT_EQ(OfferNumber(queue, 5, 8), IngestQueue::Offered::kFull);
  EXPECT_EQ(queue.dropped(), 3u);
  gate.Open();
  ASSERT_TRUE(queue.Drain(milliseconds(10000)));
  EXPECT_EQ(queue.queued_bytes(), 0u);
  EXPECT_EQ(OfferNumber(queue, 6, 1000), IngestQueue::Offered::kQueued);
}

TEST(IngestQueueTest, AFailedCopyQueuesNothingAndGivesItsBytesBack) {
  std::atomic<int> consumed{0};
  IngestQueue queue({.max_batches = 2, .max_bytes = 100},
                    [&](std::span<const uint8_t>, IngestQueue::Clock::time_point) { ++consumed; });
  EXPECT_EQ(queue.Offer(100, [](uint8_t*) { return false; }), IngestQueue::Offered::kCopyFailed);
  EXPECT_EQ(queue.queued_bytes(), 0u);
  EXPECT_EQ(queue.queued_batches(), 0u);
  EXPECT_EQ(OfferNumber(queue, 1, 100), IngestQueue::Offered::kQueued);
  ASSERT_TRUE(queue.Drain(milliseconds(10000)));
  EXPECT_EQ(consumed.load(), 1);
}

TEST(IngestQueueTest, DrainWaitsForWhatWasQueuedBeforeItAndTimesOutOtherwise) {
  Gate gate;
  std::atomic<uint32_t> last{0};
  IngestQueue queue({}, [&](std::span<const uint8_t> batch, IngestQueue::Clock::time_point) {
    if (NumberOf(batch) == 1) gate.Wait();
    std::this_thread::sleep_for(milliseconds(1));
    last = NumberOf(batch);
  });
  for (uint32_t i = 1; i <= 50; ++i)
    ASSERT_EQ(OfferNumber(queue, i), IngestQueue::Offered::kQueued);
  EXPECT_FALSE(queue.Drain(milliseconds(50)));  // the consumer is held
  gate.Open();
  EXPECT_TRUE(queue.Drain(milliseconds(30000)));
  EXPECT_EQ(last.load(), 50u);
  EXPECT_EQ(queue.consumed(), 50u);
  EXPECT_TRUE(queue.Drain(milliseconds(0)));  // nothing queued: at once
}

TEST(IngestQueueTest, StopDiscardsWhatIsQueuedAndRefusesMore) {
  Gate gate;
  auto queue = std::make_unique<IngestQueue>(
      IngestQueueLimits{},
      [&](std::span<const uint8_t>, IngestQueue::Clock::time_point) { gate.Wait(); });
  for (uint32_t i = 0; i < 20; ++i)
    ASSERT_EQ(OfferNumber(*queue, i), IngestQueue::Offered::kQueued);
  gate.WaitUntilHeld();
  // A drain waiting when the queue stops returns (false) instead of waiting for the rest.
  auto drain = std::async(std::launch::async, [&] { return queue->Drain(milliseconds(60000)); });
  std::thread opener([&] {
    std::this_thread::sleep_for(milliseconds(50));
    gate.Open();
  });
  queue->Stop();  // joins after the batch being consumed
  opener.join();
  ASSERT_EQ(drain.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(queue->consumed(), 20u);  // 1 folded, the rest discarded: all accounted for
  EXPECT_EQ(queue->discarded(), 19u);
  EXPECT_EQ(OfferNumber(*queue, 99), IngestQueue::Offered::kStopped);
  queue.reset();
}

TEST(IngestQueueTest, ManyProducersFloodingWhileItStopsNeitherDeadlockNorLeak) {
  auto finished = std::async(std::launch::async, [] {
    std::atomic<uint64_t> consumed{0};
    auto queue = std::make_unique<IngestQueue>(
        IngestQueueLimits{.max_batches = 64, .max_bytes = 64 << 10},
        [&](std::span<const uint8_t> batch, IngestQueue::Clock::time_point) {
          consumed += batch.size() > 0 ? 1 : 0;
        });
    std::atomic<bool> go{true};
    std::atomic<uint64_t> queued{0}, full{0}, stopped{0};
    std::vector<std::thread> producers;
    for (int p = 0; p < 4; ++p) {
      producers.emplace_back([&, p] {
        for (uint32_t i = 0; go; ++i) {
          switch (OfferNumber(*queue, i, 512 + p)) {
            case IngestQueue::Offered::kQueued:
              ++queued;
              break;
            case IngestQueue::Offered::kFull:
              ++full;
              break;
            default:
              ++stopped;
              break;
          }
        }
      });
    }
    // The flood runs a while (and at least until something was queued: a loaded machine may
    // start the producers late), stops mid-flood as at JVM exit, and goes on until offers were
    // refused as stopped -- each wait bounded, none a fixed guess at the scheduler.
    auto wait_for = [](const std::atomic<uint64_t>& count) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (count.load() == 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(milliseconds(5));
      }
    };
    std::this_thread::sleep_for(milliseconds(300));
    wait_for(queued);
    queue->Stop();
    wait_for(stopped);
    go = false;
    for (auto& producer : producers) producer.join();
    EXPECT_GT(queued.load(), 0u);
    EXPECT_GT(stopped.load(), 0u);
    EXPECT_EQ(full.load(), queue->dropped());
    // Everything queued before the stop was folded or discarded; the destructor frees the rest.
    EXPECT_LE(queue->consumed(), queued.load());
    queue.reset();
    return true;
  });
  ASSERT_EQ(finished.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "deadlock: the flood did not end";
  EXPECT_TRUE(finished.get());
}

}  // namespace
}  // namespace sparkprof::driver
