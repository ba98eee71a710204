// The signal path without a JVM: real timers and signals, a fake walker, the crash guard.
#include "native-agent/sampler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <thread>

#include "native-agent/agent_counters.h"
#include "native-agent/schedstat.h"
#include "native-agent/signal_handler.h"

namespace sparkprof::agent {
namespace {

// async-signal-safe: a fixed three-frame "stack".
int FakeWalker(void*, RawFrame* frames, int max_frames, void*, int32_t*) {
  int n = max_frames < 3 ? max_frames : 3;
  for (int i = 0; i < n; ++i)
    frames[i] = RawFrame{i, reinterpret_cast<const void*>(uintptr_t(i + 1))};
  return n;
}

// Faults like a walker reading a torn stack would.
int FaultingWalker(void*, RawFrame*, int, void*, int32_t*) {
  volatile int* bad = reinterpret_cast<volatile int*>(uintptr_t{16});
  return *bad;
}

pid_t Tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// Burns `duration` of this thread's CPU time (not wall time: on a loaded machine the thread gets
// only part of a core, and a CPU timer samples CPU time), giving up after 20 s of wall time.
void SpinCpu(std::chrono::milliseconds duration) {
  auto cpu_ns = []() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  };
  const int64_t until = cpu_ns() + std::chrono::nanoseconds(duration).count();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  volatile uint64_t x = 0;
  while (cpu_ns() < until && std::chrono::steady_clock::now() < give_up) {
    for (int i = 0; i < 1000; ++i) x = x + 1;
  }
}

TEST(SamplerTest, CpuTimerSamplesTheBusyThreadWithItsTag) {
  ThreadRegistry registry;
  Sampler sampler(SamplingMode::kCpu, 2'000'000, registry);
  SetStackWalker(FakeWalker);
  ASSERT_TRUE(sampler.Start().ok());
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(Tid(), 256, 8));
  state->tag.Set(TaskTag{4, 1, 99});
  BindCurrentThread(state);
  sampler.OnThreadStarted(state);
  EnableSampling(true);
  SpinCpu(std::chrono::milliseconds(300));
  sampler.Stop();
  BindCurrentThread(nullptr);
  EXPECT_FALSE(SamplingEnabled());
  uint32_t samples = state->ring.Size();
  // 300 ms of CPU at 2 ms: a CPU timer fires only at kernel ticks (4 ms at HZ=250) the thread
  // runs through, and on a loaded machine it runs through few (12-15 measured under a parallel
  // build): expect some, not a rate.
  EXPECT_GE(samples, 5u) << sampler.mechanism();
  const SampleRecord* record = state->ring.Peek();
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->num_frames, 3);
  EXPECT_EQ(record->tag, (TaskTag{4, 1, 99}));
  EXPECT_EQ(record->frames[2].method_id, reinterpret_cast<const void*>(uintptr_t{3}));
}

TEST(SamplerTest, CpuSampleWeightsAddUpToTheThreadsCpuTime) {
  // 1 ms asks more than a 100 or 250 Hz kernel's CPU timers deliver; the weights still add up.
  ThreadRegistry registry;
  Sampler sampler(SamplingMode::kCpu, 1'000'000, registry);
  SetStackWalker(FakeWalker);
  SetFixedSampleWeight(0);
  ASSERT_TRUE(sampler.Start().ok());
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(Tid(), 1024, 4));
  const uint64_t signals_before = g_counters.signals_received.load();
  const uint64_t timer_failures_before = g_counters.timer_create_failures.load();
  state->last_cpu_ns.store(CurrentThreadCpuNs());
  const int64_t cpu_start_ns = state->last_cpu_ns.load();
  BindCurrentThread(state);
  sampler.OnThreadStarted(state);
  EnableSampling(true);
  SpinCpu(std::chrono::milliseconds(400));
  sampler.Stop();
  const uint32_t timer_samples = state->ring.Size();
  // One last sample by hand: it carries the CPU since the last timer sample (on a loaded machine
  // the timer fires only at ticks the thread happens to run through, so that tail can be long).
  EnableSampling(true);
  RecordSampleOnCurrentThread(nullptr);
  EnableSampling(false);
  BindCurrentThread(nullptr);
  const int64_t cpu_used_ns = CurrentThreadCpuNs() - cpu_start_ns;
  int64_t weights_ns = 0;
  uint32_t samples = 0;
  for (const SampleRecord* r = state->ring.Peek(); r != nullptr; r = state->ring.Peek()) {
    EXPECT_GE(r->weight_ns, 0);
    weights_ns += r->weight_ns;
    ++samples;
    state->ring.Pop();
  }
  ASSERT_EQ(samples, timer_samples + 1);
  // Every nanosecond of CPU up to the last sample, whatever the timer did: 1 ms asks more than a
  // 100/250 Hz kernel delivers, and overruns merge signals.
  EXPECT_LE(weights_ns, cpu_used_ns);
  EXPECT_GE(weights_ns, cpu_used_ns - 2'000'000)
      << timer_samples << " timer samples (" << sampler.mechanism() << "), signals "
      << g_counters.signals_received.load() - signals_before << ", timer failures "
      << g_counters.timer_create_failures.load() - timer_failures_before;
}

TEST(SamplerTest, WallModeSignalsSleepingThreads) {
  ThreadRegistry registry;
  Sampler sampler(SamplingMode::kWall, 5'000'000, registry);
  SetStackWalker(FakeWalker);
  ASSERT_TRUE(sampler.Start().ok());
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(Tid(), 256, 8));
  BindCurrentThread(state);
  EnableSampling(true);
  // 10 samples of a 5 ms clock take 50 ms on an idle machine; a loaded one may hold back the
  // sampler thread for a while, so the sleep goes on (in 50 ms naps) until they are there.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (state->ring.Size() < 10u && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  sampler.Stop();
  BindCurrentThread(nullptr);
  EXPECT_GE(state->ring.Size(), 10u);
}

// Which wait the waiting thread stands in, for PhaseWalker (async-signal-safe: a lock-free int).
std::atomic<int> g_wait_phase{0};

// async-signal-safe: a one-frame "stack" naming the current wait.
int PhaseWalker(void*, RawFrame* frames, int max_frames, void*, int32_t*) {
  if (max_frames < 1) return 0;
  frames[0] = RawFrame{0, reinterpret_cast<const void*>(static_cast<uintptr_t>(
                              g_wait_phase.load(std::memory_order_relaxed)))};
  return 1;
}

// Starts `sampler` (mode cpu+wall, reading schedstat) with PhaseWalker as the walker.
void StartCpuWallSampler(Sampler& sampler) {
  SetStackWalker(PhaseWalker);
  SetFixedSampleWeight(0);  // as the agent sets it in this mode
  SetTaskWallSplit(true);
  sampler.set_read_schedstat(true);
  ASSERT_TRUE(sampler.Start().ok());
  EnableSampling(true);
}

// On the calling thread: registers it, opens its schedstat and tags it as the agent's SetTaskTag
// does (baselines first, then the tag, then the timer thread told).
ThreadState* TagThisThread(ThreadRegistry& registry, Sampler& sampler, const TaskTag& tag,
                           uint32_t ring_capacity = 256) {
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(Tid(), ring_capacity, 8));
  int fd = OpenSchedstat(state->tid);
  state->schedstat_fd.store(fd);
  BindCurrentThread(state);
  MarkTaskWallBaseline(
      state, fd >= 0 ? ReadSchedstat(fd).value_or(SchedstatReading{-1, 0}).run_delay_ns : -1);
  state->tag.Set(tag);
  g_wait_phase.store(1);
  sampler.OnTaskTagged();
  return state;
}

// A task thread woken from one wait that blocks again in the next within microseconds uses
// almost no CPU and may see no run delay: the idle skip must still notice that it ran (its
// timeslice count moved) and signal it, or the rest of the task's wait goes to the first wait.
TEST(SamplerTest, AThreadWokenIntoTheNextWaitIsSampledThere) {
  ThreadRegistry registry;
  Sampler sampler(SamplingMode::kCpuWall, 5'000'000, registry);
  StartCpuWallSampler(sampler);
  std::mutex mutex;
  std::condition_variable changed;
  int step = 0;  // 1: leave the first wait; 2: leave the second
  std::atomic<ThreadState*> waiter{nullptr};
  std::thread thread([&] {
    ThreadState* state = TagThisThread(registry, sampler, TaskTag{3, 0, 42});
    waiter.store(state);
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return step >= 1; });
    g_wait_phase.store(2);  // straight into the next wait
    changed.wait(lock, [&] { return step >= 2; });
    lock.unlock();
    state->tag.Clear();
    BindCurrentThread(nullptr);
  });
  while (waiter.load() == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ThreadState* state = waiter.load();
  if (state->schedstat_fd.load() < 0) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      step = 2;
    }
    changed.notify_all();
    thread.join();
    sampler.Stop();
    EnableSampling(false);
    SetTaskWallSplit(false);
    GTEST_SKIP() << "no /proc/self/task/<tid>/schedstat here";
  }
  // Wait until the timer thread has sampled the first wait and then skipped the idle thread.
  auto latest_phase = [&](int* phase) {
    while (const SampleRecord* record = state->ring.Peek()) {
      if (record->num_frames == 1)
        *phase = static_cast<int>(reinterpret_cast<uintptr_t>(record->frames[0].method_id));
      state->ring.Pop();
    }
  };
  int phase = 0;
  const uint64_t skipped_before = g_counters.wall_signals_skipped_idle.load();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((phase != 1 || g_counters.wall_signals_skipped_idle.load() < skipped_before + 3) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    latest_phase(&phase);
  }
  EXPECT_EQ(phase, 1);
  EXPECT_GE(g_counters.wall_signals_skipped_idle.load(), skipped_before + 3);
  {
    std::lock_guard<std::mutex> lock(mutex);
    step = 1;
  }
  changed.notify_all();
  while (phase != 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    latest_phase(&phase);
  }
  EXPECT_EQ(phase, 2) << "the second wait was never sampled: the idle skip kept the first";
  {
    std::lock_guard<std::mutex> lock(mutex);
    step = 2;
  }
  changed.notify_all();
  thread.join();
  sampler.Stop();
  EnableSampling(false);
  SetTaskWallSplit(false);
  close(state->schedstat_fd.exchange(-1));
}

// A task thread idle in one long wait is looked at less and less often (the timer thread sleeps
// when every task thread is backed off), and none of its time is lost: its samples and the idle
// time charged at its tag's end add up to the time it was tagged.
TEST(SamplerTest, ALongIdleWaitIsLookedAtLessOftenAndKeepsItsTime) {
  ThreadRegistry registry;
  constexpr int64_t kIntervalNs = 5'000'000;
  Sampler sampler(SamplingMode::kCpuWall, kIntervalNs, registry);
  StartCpuWallSampler(sampler);
  std::mutex mutex;
  std::condition_variable changed;
  bool release = false;
  std::atomic<ThreadState*> waiter{nullptr};
  std::chrono::steady_clock::time_point tagged_at, cleared_at;
  std::thread thread([&] {
    tagged_at = std::chrono::steady_clock::now();
    ThreadState* state = TagThisThread(registry, sampler, TaskTag{3, 0, 43});
    waiter.store(state);
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return release; });
    lock.unlock();
    MarkTaskWallBaseline(state, -1);  // what ClearTaskTag does
    cleared_at = std::chrono::steady_clock::now();
    state->tag.Clear();
    BindCurrentThread(nullptr);
  });
  while (waiter.load() == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ThreadState* state = waiter.load();
  const bool have_schedstat = state->schedstat_fd.load() >= 0;
  const uint64_t ticks_before = sampler.wall_ticks();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const uint64_t ticks = sampler.wall_ticks() - ticks_before;
  {
    std::lock_guard<std::mutex> lock(mutex);
    release = true;
  }
  changed.notify_all();
  thread.join();
  sampler.Stop();
  EnableSampling(false);
  SetTaskWallSplit(false);
  if (!have_schedstat) GTEST_SKIP() << "no /proc/self/task/<tid>/schedstat here";
  close(state->schedstat_fd.exchange(-1));
  int64_t charged_ns = 0;
  int records = 0;
  while (const SampleRecord* record = state->ring.Peek()) {
    charged_ns += record->weight_ns + record->off_cpu_ns + int64_t{record->idle_before_us} * 1000;
    ++records;
    state->ring.Pop();
  }
  const int64_t tagged_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(cleared_at - tagged_at).count();
  // 1.5 s at 5 ms is 300 ticks when every one looks; backed off, about 60.
  EXPECT_LT(ticks, 150u) << "the idle thread was looked at every interval";
  EXPECT_GE(records, 2);
  EXPECT_LE(charged_ns, tagged_ns);
  // All but the CPU the thread used after its last sample (waking, the handler's return).
  EXPECT_GE(charged_ns, tagged_ns - 5'000'000) << "charged " << charged_ns << " of " << tagged_ns;
}

// A task thread running flat out is left to its CPU timer: the timer thread looks at it a few
// times a second instead of every interval, its CPU-timer samples are recorded, and its time is
// still all charged, once.
TEST(SamplerTest, ABusyTaskThreadIsLeftToItsCpuTimerAndKeepsItsTime) {
  ThreadRegistry registry;
  constexpr int64_t kIntervalNs = 5'000'000;
  Sampler sampler(SamplingMode::kCpuWall, kIntervalNs, registry);
  StartCpuWallSampler(sampler);
  const uint64_t cpu_recorded_before = g_counters.samples_taken.load();
  const uint64_t skipped_busy_before = g_counters.wall_signals_skipped_busy.load();
  const uint64_t dropped_before = g_counters.samples_dropped_ring_full.load();
  std::atomic<ThreadState*> worker{nullptr};
  int64_t cpu_tagged_ns = 0, run_delay_ns = 0, wall_tagged_ns = 0, spin_ns = 0;
  uint64_t ticks = 0;
  bool have_schedstat = false;
  std::thread thread([&] {
    const int64_t cpu_start = CurrentThreadCpuNs();
    const auto wall_start = std::chrono::steady_clock::now();
    ThreadState* state = TagThisThread(registry, sampler, TaskTag{6, 0, 61}, 4096);
    sampler.OnThreadStarted(state);  // its CPU timer, as for every JVM thread
    worker.store(state);
    const int fd = state->schedstat_fd.load();
    have_schedstat = fd >= 0;
    const int64_t delay_start = state->run_delay_mark_ns.load();  // the tag's own reading
    const uint64_t ticks_start = sampler.wall_ticks();
    const auto spin_start = std::chrono::steady_clock::now();
    SpinCpu(std::chrono::milliseconds(800));
    ticks = sampler.wall_ticks() - ticks_start;
    spin_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - spin_start)
                  .count();
    run_delay_ns =
        (fd >= 0 ? ReadSchedstat(fd).value_or(SchedstatReading{}).run_delay_ns : 0) - delay_start;
    MarkTaskWallBaseline(state, -1);  // what ClearTaskTag does
    cpu_tagged_ns = CurrentThreadCpuNs() - cpu_start;
    wall_tagged_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - wall_start)
                         .count();
    state->tag.Clear();
    sampler.OnThreadEnding(state);
    BindCurrentThread(nullptr);
  });
  thread.join();
  sampler.Stop();
  EnableSampling(false);
  SetTaskWallSplit(false);
  ThreadState* state = worker.load();
  if (!have_schedstat) GTEST_SKIP() << "no /proc/self/task/<tid>/schedstat here";
  if (int fd = state->schedstat_fd.exchange(-1); fd >= 0) close(fd);
  int64_t on_cpu_ns = 0, off_cpu_ns = 0, starved_ns = 0;
  int records = 0;
  while (const SampleRecord* record = state->ring.Peek()) {
    on_cpu_ns += record->weight_ns;
    starved_ns += record->cpu_starved_ns;
    off_cpu_ns += record->off_cpu_ns + int64_t{record->idle_before_us} * 1000;
    ++records;
    state->ring.Pop();
  }
  // Charged once: never more CPU than the thread used while tagged, and all but what it used
  // after its last sample (a CPU timer's period at most, plus a look's back-off when it ends);
  // never more time than passed while it was tagged.
  EXPECT_LE(on_cpu_ns, cpu_tagged_ns);
  EXPECT_GE(on_cpu_ns, cpu_tagged_ns - 8 * kIntervalNs)
      << "charged " << on_cpu_ns << " of " << cpu_tagged_ns;
  EXPECT_LE(on_cpu_ns + off_cpu_ns, wall_tagged_ns);
  EXPECT_GE(records, 10);
  EXPECT_EQ(g_counters.samples_dropped_ring_full.load(), dropped_before);  // room for 20 s at 5 ms
  EXPECT_GT(g_counters.samples_taken.load(), cpu_recorded_before);
  // A spinning thread never blocks: whether it had its core or waited for one (run delay), it
  // is found busy and looked at less often than every interval, and the run delay it had is
  // charged as such (all but what came after the last look's reading). A thread waiting in the
  // run queue as it is looked at has that wait not yet in its schedstat, so on a host that gives
  // it under 3/4 of a core some looks miss it: the tick count is asserted only above that.
  EXPECT_GT(g_counters.wall_signals_skipped_busy.load(), skipped_busy_before);
  if (run_delay_ns * 4 < spin_ns) {
    EXPECT_LT(ticks, static_cast<uint64_t>(spin_ns / kIntervalNs) / 2)
        << "the busy thread was looked at every interval";
  }
  EXPECT_LE(starved_ns, run_delay_ns);
  EXPECT_GE(starved_ns, run_delay_ns - run_delay_ns / 4 - 8 * kIntervalNs)
      << "run delay " << run_delay_ns << ", charged as starved " << starved_ns;
}

TEST(SamplerTest, FullRingDropsAndCounts) {
  ThreadState state(Tid(), 4, 8);
  SetStackWalker(FakeWalker);
  BindCurrentThread(&state);
  EnableSampling(true);
  uint64_t dropped_before = g_counters.samples_dropped_ring_full.load();
  for (int i = 0; i < 10; ++i) RecordSampleOnCurrentThread(nullptr);
  EnableSampling(false);
  BindCurrentThread(nullptr);
  EXPECT_EQ(state.ring.Size(), 4u);
  EXPECT_EQ(g_counters.samples_dropped_ring_full.load() - dropped_before, 6u);
}

TEST(SamplerTest, CrashInsideTheWalkIsRecovered) {
  std::string error;
  ASSERT_TRUE(InstallCrashGuard(&error)) << error;
  ThreadState state(Tid(), 8, 8);
  SetStackWalker(FaultingWalker);
  BindCurrentThread(&state);
  EnableSampling(true);
  uint64_t before = g_counters.walk_crashes_recovered.load();
  RecordSampleOnCurrentThread(nullptr);
  RecordSampleOnCurrentThread(nullptr);  // the guard still works after a recovery
  EnableSampling(false);
  BindCurrentThread(nullptr);
  SetStackWalker(FakeWalker);
  EXPECT_EQ(g_counters.walk_crashes_recovered.load() - before, 2u);
  ASSERT_EQ(state.ring.Size(), 2u);
  EXPECT_EQ(state.ring.Peek()->num_frames, kWalkCrashed);
  EXPECT_EQ(state.in_handler.load(), 0);
}

// Stands for a VM word a walker moves for one walk (a thread's last Java frame anchor).
volatile uintptr_t g_moved_word = 1234;

// Moves the word as the stub step-over moves an anchor, then faults before putting it back.
int MovingThenFaultingWalker(void*, RawFrame*, int, void*, int32_t*) {
  ThreadState* state = CurrentThreadState();
  if (!state->walk_undo.Save(&g_moved_word)) return 0;
  g_moved_word = 5678;
  return FaultingWalker(nullptr, nullptr, 0, nullptr, nullptr);
}

TEST(SamplerTest, ACrashedWalkPutsBackWhatItMoved) {
  std::string error;
  ASSERT_TRUE(InstallCrashGuard(&error)) << error;
  ThreadState state(Tid(), 8, 8);
  SetStackWalker(MovingThenFaultingWalker);
  BindCurrentThread(&state);
  EnableSampling(true);
  RecordSampleOnCurrentThread(nullptr);
  RecordSampleOnCurrentThread(nullptr);
  EnableSampling(false);
  BindCurrentThread(nullptr);
  SetStackWalker(FakeWalker);
  EXPECT_EQ(g_moved_word, 1234u);
  EXPECT_EQ(state.walk_undo.count, 0);
  ASSERT_EQ(state.ring.Size(), 2u);
  EXPECT_EQ(state.ring.Peek()->num_frames, kWalkCrashed);
}

TEST(SamplerTest, WalkUndoRestoresNewestFirstAndRefusesWhenFull) {
  WalkUndo undo;
  volatile uintptr_t words[WalkUndo::kMaxWords + 1] = {10, 20, 30, 40, 50};
  for (int i = 0; i < WalkUndo::kMaxWords; ++i) ASSERT_TRUE(undo.Save(&words[i]));
  EXPECT_FALSE(undo.Save(&words[WalkUndo::kMaxWords]));
  ASSERT_TRUE(undo.count == WalkUndo::kMaxWords);
  for (auto& word : words) word = 0;
  undo.Restore();
  EXPECT_EQ(words[0], 10u);
  EXPECT_EQ(words[3], 40u);
  EXPECT_EQ(words[4], 0u);  // never saved, never written
  EXPECT_EQ(undo.count, 0);

  volatile uintptr_t word = 1;  // moved twice: the oldest value wins
  ASSERT_TRUE(undo.Save(&word));
  word = 2;
  ASSERT_TRUE(undo.Save(&word));
  word = 3;
  undo.Restore();
  EXPECT_EQ(word, 1u);
}

TEST(SamplerTest, SignalOnAnUnknownThreadIsCountedAndIgnored) {
  EnableSampling(true);
  uint64_t before = g_counters.samples_no_thread_state.load();
  RecordSampleOnCurrentThread(nullptr);
  EnableSampling(false);
  EXPECT_EQ(g_counters.samples_no_thread_state.load() - before, 1u);
}

TEST(SignalHandlerTest, WallSplitCapsOnCpuAtTheWallTimeAndRunDelayAtTheRest) {
  WallSplit split = SplitWallInterval(10'000'000, 3'000'000, 100, 2'000'100);
  EXPECT_EQ(split.on_cpu_ns, 3'000'000);
  EXPECT_EQ(split.off_cpu_ns, 7'000'000);
  EXPECT_EQ(split.cpu_starved_ns, 2'000'000);
  split = SplitWallInterval(10'000'000, 12'000'000, 0, 5'000'000);  // CPU clock ahead of wall
  EXPECT_EQ(split.on_cpu_ns, 10'000'000);
  EXPECT_EQ(split.off_cpu_ns, 0);
  EXPECT_EQ(split.cpu_starved_ns, 0);
  split = SplitWallInterval(10'000'000, 1'000'000, 0, 50'000'000);  // delay capped at off-CPU
  EXPECT_EQ(split.cpu_starved_ns, 9'000'000);
  split = SplitWallInterval(10'000'000, 1'000'000, -1, 50'000'000);  // no baseline: no split
  EXPECT_EQ(split.cpu_starved_ns, 0);
  EXPECT_EQ(split.off_cpu_ns, 9'000'000);
  split = SplitWallInterval(-5, 1'000'000, 0, 10);
  EXPECT_EQ(split.on_cpu_ns + split.off_cpu_ns + split.cpu_starved_ns, 0);
}

TEST(SignalHandlerTest, ATagKeepsRecentUnchargedRunDelayToBeCharged) {
  ThreadState state(Tid(), 4, 4);
  MarkTaskWallBaseline(&state, 1000, 500);  // first tag: from the reading on
  EXPECT_EQ(state.run_delay_mark_ns.load(), 1000);
  EXPECT_EQ(state.run_delay_ns.load(), 1000);
  MarkTaskWallBaseline(&state, 10'000, 2000);  // next tag: at most 2000 ns stay uncharged
  EXPECT_EQ(state.run_delay_mark_ns.load(), 8000);
  MarkTaskWallBaseline(&state, -1);  // untag: no reading, the mark stays
  EXPECT_EQ(state.run_delay_mark_ns.load(), 8000);
  MarkTaskWallBaseline(&state, 9000, 2000);  // within the carry: the mark stays
  EXPECT_EQ(state.run_delay_mark_ns.load(), 8000);
  PublishRunDelay(state.run_delay_ns, 7000);  // an older reading never moves the published one back
  EXPECT_EQ(state.run_delay_ns.load(), 10'000);
}

// Mode cpu+wall without timers: a tagged thread records its wall signals only, split; an
// untagged one its CPU signals only.
TEST(SignalHandlerTest, CpuPlusWallRecordsEachThreadFromOneSourceOnly) {
  SetStackWalker(FakeWalker);
  SetFixedSampleWeight(0);
  SetTaskWallSplit(true);
  ThreadState state(Tid(), 16, 8);
  BindCurrentThread(&state);
  EnableSampling(true);
  const uint64_t skipped_before = g_counters.cpu_signals_on_task_threads.load();
  RecordSampleOnCurrentThread(nullptr, SignalSource::kWallTimer);  // untagged: ignored
  EXPECT_EQ(state.ring.Size(), 0u);
  RecordSampleOnCurrentThread(nullptr, SignalSource::kCpuTimer);
  ASSERT_EQ(state.ring.Size(), 1u);
  EXPECT_EQ(state.ring.Peek()->off_cpu_ns, 0);
  state.ring.Pop();
  MarkTaskWallBaseline(&state, 1000);
  state.tag.Set(TaskTag{5, 0, 77});
  RecordSampleOnCurrentThread(nullptr, SignalSource::kCpuTimer);  // tagged: its wall samples count
  EXPECT_EQ(state.ring.Size(), 0u);
  EXPECT_EQ(g_counters.cpu_signals_on_task_threads.load(), skipped_before + 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  state.run_delay_ns.store(4'000'000);  // what the timer thread read: 4 ms - 1 us of delay
  RecordSampleOnCurrentThread(nullptr, SignalSource::kWallTimer);
  EnableSampling(false);
  BindCurrentThread(nullptr);
  SetTaskWallSplit(false);
  ASSERT_EQ(state.ring.Size(), 1u);
  const SampleRecord* record = state.ring.Peek();
  EXPECT_EQ(record->tag.task_attempt_id, 77);
  EXPECT_GE(record->weight_ns + record->off_cpu_ns, 30'000'000);  // slept 30 ms of wall time
  EXPECT_GE(record->off_cpu_ns, 20'000'000);                      // mostly asleep
  EXPECT_EQ(record->cpu_starved_ns, 4'000'000 - 1000);
  EXPECT_EQ(record->num_frames, 3);
  state.ring.Pop();
}

}  // namespace
}  // namespace sparkprof::agent
