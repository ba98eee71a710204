#include "common/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
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

// The pair ends up on different CPUs within what the caller was allowed, and the caller gets
// its CPUs back; with one CPU allowed nothing changes.
TEST(ParallelTest, ApartOnCpusSeparatesThePairAndGivesTheCallersCpusBack) {
  cpu_set_t before;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
  std::mutex mutex;
  std::condition_variable cv;
  bool stop = false;
  std::thread other([&] {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return stop; });
  });
  {
    ApartOnCpus apart({other.native_handle()});
    cpu_set_t mine, its;
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine), 0);
    ASSERT_EQ(pthread_getaffinity_np(other.native_handle(), sizeof(its), &its), 0);
    if (CPU_COUNT(&before) < 2) {
      EXPECT_FALSE(apart.apart());
      EXPECT_TRUE(CPU_EQUAL(&mine, &before));
    } else {
      ASSERT_TRUE(apart.apart());
      EXPECT_EQ(CPU_COUNT(&mine), 1);
      EXPECT_EQ(CPU_COUNT(&its), 1);  // one CPU per other thread
      cpu_set_t both;
      CPU_AND(&both, &mine, &its);
      EXPECT_EQ(CPU_COUNT(&both), 0);
      CPU_OR(&both, &mine, &its);
      CPU_AND(&both, &both, &before);
      EXPECT_EQ(CPU_COUNT(&both), 2);  // within the caller's CPUs
    }
  }
  cpu_set_t after;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&after, &before));
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
  }
  cv.notify_all();
  other.join();
  // Allowed one CPU only: nothing to separate, and nothing changes.
  cpu_set_t one;
  CPU_ZERO(&one);
  int first = 0;
  while (!CPU_ISSET(first, &before)) ++first;
  CPU_SET(first, &one);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
  std::thread idle([] {});
  {
    ApartOnCpus apart({idle.native_handle()});
    EXPECT_FALSE(apart.apart());
  }
  idle.join();
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&after, &one));
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(before), &before), 0);
}

// The body runs, once started free to run wherever its creator may; with one CPU allowed it just
// runs there.
TEST(ParallelTest, StartThreadElsewhereRunsTheBodyWithTheCallersCpus) {
  cpu_set_t callers;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(callers), &callers), 0);
  for (bool one_cpu : {false, true}) {
    cpu_set_t allowed = callers;
    if (one_cpu) {
      int first = 0;
      while (!CPU_ISSET(first, &callers)) ++first;
      CPU_ZERO(&allowed);
      CPU_SET(first, &allowed);
      ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed), 0);
    }
    cpu_set_t seen;
    CPU_ZERO(&seen);
    int runs = 0;
    std::thread thread = StartThreadElsewhere([&] {
      ++runs;
      pthread_getaffinity_np(pthread_self(), sizeof(seen), &seen);
    });
    thread.join();
    EXPECT_EQ(runs, 1);
    EXPECT_TRUE(CPU_EQUAL(&seen, &allowed)) << "one cpu: " << one_cpu;
  }
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(callers), &callers), 0);
}

// Threads that wait until released: the "others" an ApartOnCpus places.
class ParkedThreads {
 public:
  std::thread Start() {
    return std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return released_; });
    });
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      released_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool released_ = false;
};

// Two pairs at once (analyses side by side) never share a CPU: the second pair gets CPUs the
// first does not hold, or stays where Linux puts it when none are left; once the first is gone,
// its CPUs can be held again.
TEST(ParallelTest, ApartOnCpusOfTwoPairsNeverShareACpu) {
  cpu_set_t before;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
  const int cpus = CPU_COUNT(&before);
  ParkedThreads parked;
  std::thread first_other = parked.Start();
  std::thread second_other = parked.Start();
  auto held = [](pthread_t a, pthread_t b) {
    cpu_set_t x, y;
    pthread_getaffinity_np(a, sizeof(x), &x);
    pthread_getaffinity_np(b, sizeof(y), &y);
    CPU_OR(&x, &x, &y);
    return x;
  };
  {
    ApartOnCpus first({first_other.native_handle()});
    EXPECT_EQ(first.apart(), cpus >= 2);
    const cpu_set_t first_cpus = held(pthread_self(), first_other.native_handle());
    bool second_apart = false;
    cpu_set_t second_cpus;
    std::thread second_caller([&] {
      ApartOnCpus second({second_other.native_handle()});
      second_apart = second.apart();
      second_cpus = held(pthread_self(), second_other.native_handle());
    });
    second_caller.join();
    if (first.apart()) {
      EXPECT_EQ(second_apart, cpus >= 4);
      if (second_apart) {
        cpu_set_t shared;
        CPU_AND(&shared, &first_cpus, &second_cpus);
        EXPECT_EQ(CPU_COUNT(&shared), 0);
      }
    }
  }
  // The first pair's CPUs are free again.
  std::thread again([&] {
    ApartOnCpus third({second_other.native_handle()});
    EXPECT_EQ(third.apart(), cpus >= 2);
  });
  again.join();
  parked.Release();
  first_other.join();
  second_other.join();
}

// A thread started while its creator is kept apart inherits the creator's one CPU; a nested
// ApartOnCpus moves it to a free CPU of the creator's former ones (with 3 or more CPUs; with 2
// none is free and it stays) and leaves the creator as the outer one keeps it.
TEST(ParallelTest, ApartOnCpusNestedMovesThreadsStartedWhilePinned) {
  cpu_set_t before;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "one CPU: nothing to keep apart";
  ParkedThreads parked;
  std::thread producer = parked.Start();
  {
    ApartOnCpus outer({producer.native_handle()});
    ASSERT_TRUE(outer.apart());
    cpu_set_t pinned;
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(pinned), &pinned), 0);
    ASSERT_EQ(CPU_COUNT(&pinned), 1);
    std::thread worker = parked.Start();
    cpu_set_t its;
    pthread_getaffinity_np(worker.native_handle(), sizeof(its), &its);
    EXPECT_TRUE(CPU_EQUAL(&its, &pinned));  // inherited: what the nested one is for
    if (CPU_COUNT(&before) < 3) {
      // No CPU left free: the worker stays on its creator's CPU.
      ApartOnCpus inner({worker.native_handle()});
      EXPECT_FALSE(inner.apart());
      pthread_getaffinity_np(worker.native_handle(), sizeof(its), &its);
      EXPECT_TRUE(CPU_EQUAL(&its, &pinned));
    } else {
      ApartOnCpus inner({worker.native_handle()});
      EXPECT_TRUE(inner.apart());
      pthread_getaffinity_np(worker.native_handle(), sizeof(its), &its);
      cpu_set_t shared;
      CPU_AND(&shared, &its, &pinned);
      EXPECT_EQ(CPU_COUNT(&shared), 0);
      CPU_AND(&shared, &its, &before);
      EXPECT_TRUE(CPU_EQUAL(&shared, &its));
      EXPECT_GE(CPU_COUNT(&its), 1);
      cpu_set_t mine;
      pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine);
      EXPECT_TRUE(CPU_EQUAL(&mine, &pinned));
    }
    cpu_set_t mine;
    pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine);
    EXPECT_TRUE(CPU_EQUAL(&mine, &pinned));  // still the outer one's
    parked.Release();
    worker.join();
  }
  producer.join();
  cpu_set_t after;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&after, &before));
}

}  // namespace
}  // namespace sparkprof
