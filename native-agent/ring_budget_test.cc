#include "native-agent/ring_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "native-agent/sample_ring.h"
#include "native-agent/thread_state.h"

namespace sparkprof::agent {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(RingBudgetTest, DefaultRingsFitUnchanged) {
  RingBudget budget(256 * kMiB);
  EXPECT_EQ(budget.Reserve(32, 64), 32u);
  EXPECT_EQ(budget.Reserve(5, 64), 8u);  // rounded up as the ring rounds
  EXPECT_EQ(budget.rings_shrunk(), 0u);
  EXPECT_EQ(budget.reserved_bytes(),
            SampleRing::MemoryBytesFor(32, 64) + SampleRing::MemoryBytesFor(8, 64));
}

// depth=2048,ring=65536 asks for 2 GiB per thread (issue 15): each ring is cut to 1/256 of the
// budget, later ones to what is left, and once not even kMinRingSlots fit, threads are
// refused; everything stays within the budget.
TEST(RingBudgetTest, HugeRingsShrinkThenThreadsAreRefused) {
  RingBudget budget(256 * kMiB);
  const uint64_t asked = SampleRing::MemoryBytesFor(65536, 2048);
  EXPECT_GT(asked, 2000 * kMiB);
  std::vector<uint32_t> granted;
  for (int thread = 0; thread < 2000; ++thread) {
    uint32_t slots = budget.Reserve(65536, 2048);
    if (slots == 0) break;
    EXPECT_LE(SampleRing::MemoryBytesFor(slots, 2048), kMiB);
    granted.push_back(slots);
  }
  // Slots of 2048 frames take 32,824 bytes: 16 of them are the largest ring within 1 MiB.
  EXPECT_EQ(granted.front(), 16u);
  EXPECT_GE(granted.size(), 511u);
  for (size_t i = 1; i < granted.size(); ++i) EXPECT_LE(granted[i], granted[i - 1]);
  EXPECT_GE(granted.back(), RingBudget::kMinRingSlots);
  EXPECT_LE(budget.reserved_bytes(), budget.budget_bytes());
  EXPECT_EQ(budget.rings_shrunk(), granted.size());
  EXPECT_EQ(budget.Reserve(65536, 2048), 0u);
  EXPECT_GE(budget.threads_refused(), 1u);
  // A freed ring makes room again.
  budget.Release(granted.front(), 2048);
  EXPECT_EQ(budget.Reserve(16, 2048), 16u);
}

TEST(RingBudgetTest, ThreadStateGivesItsBytesBack) {
  RingBudget budget(kMiB);
  uint32_t slots = budget.Reserve(64, 64);
  ASSERT_GT(slots, 0u);
  auto state = std::make_unique<ThreadState>(1, slots, 64, &budget);
  EXPECT_TRUE(state->ring.allocated());
  EXPECT_EQ(budget.reserved_bytes(), state->ring.memory_bytes());
  state.reset();
  EXPECT_EQ(budget.reserved_bytes(), 0u);
}

TEST(RingBudgetTest, ConcurrentReservationsNeverExceedTheBudget) {
  RingBudget budget(4 * kMiB);
  std::vector<std::thread> threads;
  threads.reserve(8);
  std::atomic<uint64_t> granted_bytes{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        uint32_t slots = budget.Reserve(1024, 128);
        if (slots != 0) granted_bytes.fetch_add(SampleRing::MemoryBytesFor(slots, 128));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(granted_bytes.load(), budget.reserved_bytes());
  EXPECT_LE(budget.reserved_bytes(), budget.budget_bytes());
}

}  // namespace
}  // namespace sparkprof::agent
