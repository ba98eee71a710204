#include "common/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace sparkprof {
namespace {

TEST(ParallelTest, AvailableCpusIsPositiveAndWithinTheMachine) {
  const int cpus = AvailableCpus();
  EXPECT_GE(cpus, 1);
  const unsigned hardware = std::thread::hardware_concurrency();
  if (hardware > 0) {
    EXPECT_LE(cpus, static_cast<int>(hardware));
  }
  EXPECT_EQ(ThreadsOrAvailable(0), cpus);
  EXPECT_EQ(ThreadsOrAvailable(3), 3);
}

TEST(ParallelTest, EveryItemRunsOnceWhateverTheThreadCount) {
  for (int threads : {1, 2, 4, 64}) {
    std::vector<std::atomic<int>> runs(1000);
    ParallelFor(runs.size(), threads, [&](size_t i) { ++runs[i]; });
    for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << threads << " " << i;
  }
  int calls = 0;
  ParallelFor(0, 4, [&](size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelTest, UsesSeveralThreadsWhenAsked) {
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  ParallelFor(2, 2, [&](size_t) {
    const int now = ++inside;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    // Wait (bounded: 30 s, a loaded machine may start the other thread late) for the other
    // item so both are seen inside at once.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (most.load() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    --inside;
  });
  EXPECT_EQ(most.load(), 2);
}

TEST(ParallelTest, AnExceptionReachesTheCallerAfterAllThreadsStop) {
  std::atomic<int> done{0};
  EXPECT_THROW(ParallelFor(100, 4,
                           [&](size_t i) {
                             if (i == 10) throw std::runtime_error("item 10");
                             ++done;
                           }),
               std::runtime_error);
  EXPECT_LT(done.load(), 100);
}

}  // namespace
}  // namespace sparkprof
