#include "native-agent/drain.h"

#include "native-agent/agent_counters.h"
#include "native-agent/hotspot_layout.h"

#include <gtest/gtest.h>

#include <map>

namespace sparkprof::agent {
namespace {

// Method ids are fake pointers; names come from a map, a missing entry is a stale id.
class FakeResolver : public MethodNameResolver {
 public:
  std::string Resolve(const void* method_id) override {
    ++calls;
    auto it = names.find(reinterpret_cast<uintptr_t>(method_id));
    return it == names.end() ? "" : it->second;
  }
  std::map<uintptr_t, std::string> names;
  int calls = 0;
};

const void* Id(uintptr_t value) { return reinterpret_cast<const void*>(value); }

// Writes one record with frames given innermost first.
void Push(ThreadState* state, const TaskTag& tag, std::initializer_list<uintptr_t> innermost_first,
          int error_code = 1, int64_t weight_ns = 10'000'000, int32_t partial_walk_error = 0) {
  SampleRecord* record = state->ring.TryReserve();
  ASSERT_NE(record, nullptr);
  record->tag = tag;
  record->weight_ns = weight_ns;
  record->off_cpu_ns = 0;
  record->cpu_starved_ns = 0;
  record->jvm_thread_state = -1;
  record->idle_before_us = 0;
  record->partial_walk_error = partial_walk_error;
  int i = 0;
  for (uintptr_t id : innermost_first) record->frames[i++] = RawFrame{0, Id(id)};
  record->num_frames = error_code <= 0 ? error_code : i;
  state->ring.Commit();
}

struct DrainFixture : ::testing::Test {
  DrainFixture() : drain(DrainConfig{10'000'000, 3}, registry, resolver, gc, timeline) {
    resolver.names = {{1, "org.apache.spark.executor.Executor$TaskRunner.run"},
                      {2, "org.apache.spark.serializer.JavaSerializationStream.writeObject"},
                      {3, "java.io.ObjectOutputStream.writeObject"},
                      {4, "java.lang.Math.sqrt"},
                      {5, "Work.compute"}};
  }
  ThreadRegistry registry;
  FakeResolver resolver;
  GcMonitor gc;
  TaskTimeline timeline;
  Drain drain;
};

TEST_F(DrainFixture, AggregatesPerTagThreadAndStackWithCategories) {
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(100, 16, 8));
  state->name = "Executor task launch worker for task 7.0 in stage 2.0 (TID 7)";
  TaskTag tag{2, 0, 7};
  Push(state, tag, {3, 2, 1});
  Push(state, tag, {3, 2, 1});
  Push(state, tag, {4, 5, 1});
  Push(state, TaskTag{}, {0}, /*error_code=*/-2);
  drain.RunCycle();

  const Profile& profile = drain.cumulative();
  EXPECT_EQ(profile.total_samples(), 4u);
  ASSERT_EQ(profile.stacks().size(), 3u);
  std::map<Category, uint64_t> by_category;
  for (const auto& [key, count] : profile.samples()) {
    by_category[count.category] += count.samples;
    EXPECT_EQ(drain.strings().Get(key.thread),
              "Executor task launch worker for task N.N in stage N.N (TID N)");
  }
  EXPECT_EQ(by_category[Category::kSerialization], 2u);
  EXPECT_EQ(by_category[Category::kCompute], 1u);
  EXPECT_EQ(by_category[Category::kOther], 1u);  // the failed walk
  // Stacks are stored root first.
  const auto& first = profile.stacks()[0];
  EXPECT_EQ(drain.strings().Get(first.front()),
            "org.apache.spark.executor.Executor$TaskRunner.run");
  EXPECT_EQ(drain.strings().Get(first.back()), "java.io.ObjectOutputStream.writeObject");
  // Task times: the tag got 2 serialization + 1 compute samples of 10 ms.
  auto it = profile.task_times().find(TaskCategoryKey{tag, Category::kSerialization});
  ASSERT_NE(it, profile.task_times().end());
  EXPECT_EQ(it->second.time_ns, 20'000'000u);
  // Names are resolved once per method id.
  EXPECT_EQ(resolver.calls, 5);
  EXPECT_EQ(drain.pending().total_samples(), 4u);
}

TEST_F(DrainFixture, SampleTimeIsEachRecordsWeightNotTheInterval) {
  // A 1 ms timer on a 250 Hz kernel fires every 4 ms, and overruns merge signals: each sample
  // carries the CPU time it stands for.
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(103, 16, 8));
  TaskTag tag{1, 0, 3};
  Push(state, tag, {4, 5, 1}, 1, 4'000'000);
  Push(state, tag, {4, 5, 1}, 1, 12'000'000);
  Push(state, tag, {4, 5, 1}, 1, 0);  // a thread that used no CPU since its last sample
  drain.RunCycle();
  const Profile& profile = drain.cumulative();
  auto it = profile.task_times().find(TaskCategoryKey{tag, Category::kCompute});
  ASSERT_NE(it, profile.task_times().end());
  EXPECT_EQ(it->second.samples, 3u);
  EXPECT_EQ(it->second.time_ns, 16'000'000u);
  ASSERT_EQ(profile.samples().size(), 1u);
  EXPECT_EQ(profile.samples().begin()->second.time_ns, 16'000'000u);
  EXPECT_EQ(drain.pending().samples().begin()->second.time_ns, 16'000'000u);
}

TEST_F(DrainFixture, AThreadsCpuAfterItsLastSampleGoesToThatSamplesStack) {
  drain.set_charge_cpu_tails(true);
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(105, 16, 8));
  TaskTag tag{1, 0, 5};
  state->last_cpu_ns.store(50'000'000);  // the handler's mark at the last sample
  Push(state, tag, {3, 2, 1}, 1, 10'000'000);
  state->end_cpu_ns.store(57'000'000);  // ThreadEnd: 7 ms of CPU since that sample
  registry.Retire(state);
  drain.RunCycle();
  const Profile& profile = drain.cumulative();
  auto it = profile.task_times().find(TaskCategoryKey{tag, Category::kSerialization});
  ASSERT_NE(it, profile.task_times().end());
  EXPECT_EQ(it->second.time_ns, 17'000'000u);
  EXPECT_EQ(it->second.samples, 1u);  // time, not a sample
  EXPECT_EQ(profile.total_samples(), 1u);
}

TEST_F(DrainFixture, NoTailsUnlessWeightsAreCpuTime) {
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(106, 16, 8));
  Push(state, TaskTag{}, {4, 5, 1}, 1, 10'000'000);
  state->end_cpu_ns.store(1'000'000'000);
  registry.Retire(state);
  drain.RunCycle();
  drain.ChargeLiveThreadTails();
  EXPECT_EQ(drain.cumulative().samples().begin()->second.time_ns, 10'000'000u);
}

TEST_F(DrainFixture, PartialWalkKeepsTheOuterFramesUnderAMarker) {
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(104, 16, 8));
  TaskTag tag{1, 0, 4};
  Push(state, tag, {3, 2, 1}, 1, 10'000'000, /*partial_walk_error=*/-5);
  drain.RunCycle();
  const Profile& profile = drain.cumulative();
  ASSERT_EQ(profile.stacks().size(), 1u);
  const auto& stack = profile.stacks()[0];
  ASSERT_EQ(stack.size(), 4u);
  EXPECT_EQ(drain.strings().Get(stack.front()),
            "org.apache.spark.executor.Executor$TaskRunner.run");
  EXPECT_EQ(drain.strings().Get(stack.back()), "[unknown_Java]");  // where the walk broke
  // Classified by the frames that were walked.
  EXPECT_EQ(profile.samples().begin()->second.category, Category::kSerialization);
}

TEST_F(DrainFixture, CapsDistinctStacksIntoOverflow) {
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(101, 16, 8));
  Push(state, TaskTag{}, {1});
  Push(state, TaskTag{}, {2});
  Push(state, TaskTag{}, {3});
  Push(state, TaskTag{}, {4});
  Push(state, TaskTag{}, {5});
  drain.RunCycle();
  const Profile& profile = drain.cumulative();
  EXPECT_EQ(profile.total_samples(), 5u);
  EXPECT_EQ(profile.stacks_dropped_cap(), 2u);
  EXPECT_EQ(profile.stacks().size(), 4u);  // 3 real + [overflow]
  EXPECT_EQ(drain.strings().Get(profile.stacks().back()[0]), "[overflow]");
}

// An executor runs tasks for days: neither profile may grow with their number. The pending one
// (never drained here, as without a plugin) and the cumulative one stop adding task keys at the
// bound and fold the rest into keys without a task; no time is lost, and the folds are counted.
TEST(DrainBoundsTest, ProfilesDoNotGrowWithTheTasksRun) {
  ThreadRegistry registry;
  FakeResolver resolver;
  resolver.names = {{1, "org.apache.spark.executor.Executor$TaskRunner.run"}, {5, "Work.compute"}};
  GcMonitor gc;
  TaskTimeline timeline;
  Drain drain(DrainConfig{.interval_ns = 10'000'000, .max_stacks = 100, .max_profile_entries = 16},
              registry, resolver, gc, timeline);
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(105, 16, 8));
  const uint64_t folded_before = g_counters.profile_entries_folded.load();
  constexpr int kTasks = 500;
  for (int task = 0; task < kTasks; ++task) {
    Push(state, TaskTag{task / 100, 0, task}, {5, 1});
    Push(state, TaskTag{task / 100, 0, task}, {5, 1});
    if (task % 8 == 7) drain.RunCycle();
  }
  drain.RunCycle();
  const Profile* profiles[] = {&drain.cumulative(), &drain.pending()};
  for (const Profile* profile : profiles) {
    EXPECT_LE(profile->task_times().size(), 17u);  // 16 tasks' keys, then one without a task
    EXPECT_LE(profile->samples().size(), 17u);
    uint64_t task_ns = 0;
    for (const auto& [key, total] : profile->task_times()) task_ns += total.time_ns;
    EXPECT_EQ(task_ns, uint64_t{kTasks} * 2 * 10'000'000);
    EXPECT_EQ(profile->total_samples(), uint64_t{kTasks} * 2);
  }
  // The cumulative profile keeps no task in its samples (nothing reads them per task).
  EXPECT_EQ(drain.cumulative().samples().size(), 1u);
  EXPECT_GT(drain.pending().entries_folded(), 0u);
  EXPECT_EQ(g_counters.profile_entries_folded.load() - folded_before,
            drain.pending().entries_folded() + drain.cumulative().entries_folded());
  EXPECT_EQ(drain.category_time_ns()[static_cast<size_t>(Category::kCompute)],
            uint64_t{kTasks} * 2 * 10'000'000);
}

TEST(DrainBoundsTest, WithoutOutputFilesThereIsNoCumulativeProfile) {
  ThreadRegistry registry;
  FakeResolver resolver;
  resolver.names = {{5, "Work.compute"}};
  GcMonitor gc;
  TaskTimeline timeline;
  Drain drain(DrainConfig{.keep_cumulative = false}, registry, resolver, gc, timeline);
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(106, 16, 8));
  Push(state, TaskTag{1, 0, 3}, {5});
  drain.RunCycle();
  EXPECT_TRUE(drain.cumulative().empty());
  EXPECT_EQ(drain.pending().total_samples(), 1u);
  EXPECT_EQ(drain.category_time_ns()[static_cast<size_t>(Category::kCompute)], 10'000'000u);
}

TEST_F(DrainFixture, StaleMethodIdsAreNamedAndRetiredThreadsFreedAfterDraining) {
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(102, 16, 8));
  Push(state, TaskTag{1, 0, 5}, {99, 1});
  registry.Retire(state);
  int freed = 0;
  drain.RunCycle([&](ThreadState* s) {
    EXPECT_EQ(s, state);
    ++freed;
  });
  EXPECT_EQ(freed, 1);
  EXPECT_EQ(drain.stale_methods(), 1u);
  EXPECT_EQ(drain.cumulative().total_samples(), 1u);
  EXPECT_EQ(registry.LiveCount(), 0u);
  const auto& stack = drain.cumulative().stacks()[0];
  EXPECT_EQ(drain.strings().Get(stack.back()), "[stale_jmethodID]");
}

TEST_F(DrainFixture, ChargesGcPausesToTasksRunningDuringThem) {
  int key = 0;
  int64_t now = MonotonicNowNs();
  timeline.Begin(&key, TaskTag{3, 1, 42}, now - 1'000'000'000);
  gc.OnGarbageCollectionStart();
  gc.OnGarbageCollectionFinish();
  drain.RunCycle();
  EXPECT_EQ(drain.gc_summary().pauses, 1u);
  auto it = drain.cumulative().task_times().find(TaskCategoryKey{TaskTag{3, 1, 42}, Category::kGc});
  ASSERT_NE(it, drain.cumulative().task_times().end());
  EXPECT_EQ(static_cast<int64_t>(it->second.time_ns), drain.recent_pauses().front().duration_ns);
  EXPECT_EQ(drain.TakePendingPauses().size(), 1u);
  EXPECT_TRUE(drain.TakePendingPauses().empty());
}

// Mode cpu+wall: one wall sample of a task thread becomes up to three parts with one stack.
TEST_F(DrainFixture, AWallSampleSplitsIntoOnCpuWaitAndRunDelay) {
  resolver.names[10] = "java.lang.Thread.sleep";
  resolver.names[11] = "jdk.internal.misc.Unsafe.park";
  resolver.names[12] = "java.util.concurrent.LinkedBlockingQueue.take";
  resolver.names[13] = "org.apache.spark.storage.ShuffleBlockFetcherIterator.next";
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(106, 16, 8));
  TaskTag tag{3, 0, 42};
  // Records are written directly so their off-CPU fields can be set.
  auto write = [&](std::initializer_list<uintptr_t> innermost_first, int64_t on_ns, int64_t off_ns,
                   int64_t starved_ns, int32_t jvm_state) {
    SampleRecord* record = state->ring.TryReserve();
    ASSERT_NE(record, nullptr);
    record->tag = tag;
    record->weight_ns = on_ns;
    record->off_cpu_ns = off_ns;
    record->cpu_starved_ns = starved_ns;
    record->jvm_thread_state = jvm_state;
    record->idle_before_us = 0;
    record->partial_walk_error = 0;
    int i = 0;
    for (uintptr_t id : innermost_first) record->frames[i++] = RawFrame{0, Id(id)};
    record->num_frames = i;
    state->ring.Commit();
  };
  write({10, 5, 1}, 1'000'000, 9'000'000, 2'000'000, -1);  // mostly asleep
  write({11, 12, 13, 1}, 0, 10'000'000, 0, -1);            // waiting for shuffle blocks
  write({5, 1}, 2'000'000, 8'000'000, 0, kThreadBlocked);  // blocked entering a monitor
  write({4, 5, 1}, 3'000'000, 7'000'000, 7'000'000, -1);   // runnable, no CPU free
  drain.RunCycle();
  const Profile& profile = drain.cumulative();
  auto time_of = [&](Category category) {
    auto it = profile.task_times().find(TaskCategoryKey{tag, category});
    return it == profile.task_times().end() ? TaskCategoryTotal{} : it->second;
  };
  EXPECT_EQ(time_of(Category::kSleep).time_ns, 7'000'000u);
  EXPECT_EQ(time_of(Category::kShuffleFetchWait).time_ns, 10'000'000u);
  EXPECT_EQ(time_of(Category::kLockWait).time_ns, 8'000'000u);
  EXPECT_EQ(time_of(Category::kCpuStarved).time_ns, 9'000'000u);
  EXPECT_EQ(time_of(Category::kCompute).time_ns, 6'000'000u);  // the on-CPU parts
  // Each record stays one sample, counted in its largest part.
  EXPECT_EQ(profile.total_samples(), 4u);
  EXPECT_EQ(time_of(Category::kSleep).samples, 1u);
  EXPECT_EQ(time_of(Category::kCpuStarved).samples, 1u);
  EXPECT_EQ(time_of(Category::kCompute).samples, 0u);
  // One stack, on-CPU and off-CPU entries side by side.
  size_t entries_of_sleep_stack = 0;
  for (const auto& [key, count] : profile.samples()) {
    if (drain.strings().Get(profile.stacks()[key.stack].back()) == "java.lang.Thread.sleep") {
      ++entries_of_sleep_stack;
      EXPECT_EQ(key.category, count.category);
    }
  }
  EXPECT_EQ(entries_of_sleep_stack, 3u);  // compute, sleep, cpu_starved
}

// Time a task thread spent unsignalled in its last sample's wait (the timer thread saw it idle)
// goes to that sample's stack and wait kind: carried by the next sample, or by an idle-only
// record the thread writes as its tag changes.
TEST_F(DrainFixture, IdleTimeGoesToThePreviousSamplesWait) {
  resolver.names[10] = "java.lang.Thread.sleep";
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(107, 16, 8));
  TaskTag tag{3, 0, 43};
  auto write = [&](std::initializer_list<uintptr_t> innermost_first, int64_t on_ns, int64_t off_ns,
                   int32_t idle_before_us, int32_t num_frames = 0) {
    SampleRecord* record = state->ring.TryReserve();
    ASSERT_NE(record, nullptr);
    record->tag = tag;
    record->weight_ns = on_ns;
    record->off_cpu_ns = off_ns;
    record->cpu_starved_ns = 0;
    record->jvm_thread_state = -1;
    record->idle_before_us = idle_before_us;
    record->partial_walk_error = 0;
    int i = 0;
    for (uintptr_t id : innermost_first) record->frames[i++] = RawFrame{0, Id(id)};
    record->num_frames = num_frames != 0 ? num_frames : i;
    state->ring.Commit();
  };
  write({10, 5, 1}, 0, 10'000'000, 0);        // asleep
  write({4, 5, 1}, 2'000'000, 0, 500'000);    // woke after 500 ms unsignalled: computing now
  write({10, 5, 1}, 0, 10'000'000, 0);        // asleep again
  write({}, 0, 0, 300'000, kIdleOnlyRecord);  // the tag changed after 300 ms more asleep
  drain.RunCycle();
  const Profile& profile = drain.cumulative();
  auto sleep = profile.task_times().find(TaskCategoryKey{tag, Category::kSleep});
  ASSERT_NE(sleep, profile.task_times().end());
  EXPECT_EQ(sleep->second.time_ns, 820'000'000u);  // 10 + 500 + 10 + 300 ms
  EXPECT_EQ(sleep->second.samples, 2u);            // idle time is time, not samples
  auto compute = profile.task_times().find(TaskCategoryKey{tag, Category::kCompute});
  ASSERT_NE(compute, profile.task_times().end());
  EXPECT_EQ(compute->second.time_ns, 2'000'000u);
  EXPECT_EQ(profile.total_samples(), 3u);  // the idle-only record is no sample
}

TEST(DrainSplitTest, PartsAddUpAndNeverGoNegative) {
  auto parts = Drain::SplitSample(Category::kSerialization, Category::kIoWait, 4, 6, 9);
  EXPECT_EQ(parts[0].time_ns, 4u);
  EXPECT_EQ(parts[1].time_ns, 0u);  // run delay is capped at the off-CPU time
  EXPECT_EQ(parts[2].time_ns, 6u);
  EXPECT_EQ(parts[0].samples + parts[1].samples + parts[2].samples, 1u);
  EXPECT_EQ(parts[2].samples, 1u);
  parts = Drain::SplitSample(Category::kCompute, Category::kSleep, -5, -1, -1);
  EXPECT_EQ(parts[0].time_ns + parts[1].time_ns + parts[2].time_ns, 0u);
  EXPECT_EQ(parts[0].samples, 1u);  // a sample that used no time is still a sample
}

}  // namespace
}  // namespace sparkprof::agent
