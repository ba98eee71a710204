#include "native-agent/gc_monitor.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "native-agent/agent_counters.h"

namespace sparkprof::agent {
namespace {

TEST(GcMonitorTest, RecordsMatchedPairsAndIgnoresAFinishWithoutStart) {
  GcMonitor monitor;
  monitor.OnGarbageCollectionFinish();
  monitor.OnGarbageCollectionStart();
  monitor.OnGarbageCollectionFinish();
  std::vector<GcPause> pauses;
  monitor.TakePauses(&pauses);
  ASSERT_EQ(pauses.size(), 1u);
  EXPECT_GE(pauses[0].duration_ns, 0);
  EXPECT_GT(pauses[0].start_epoch_ns, 1'600'000'000'000'000'000);
}

TEST(GcMonitorTest, DropsAndCountsWhenFull) {
  auto monitor = std::make_unique<GcMonitor>();
  uint64_t before = g_counters.gc_pauses_dropped.load();
  for (uint32_t i = 0; i < GcMonitor::kCapacity + 5; ++i) {
    monitor->OnGarbageCollectionStart();
    monitor->OnGarbageCollectionFinish();
  }
  EXPECT_EQ(g_counters.gc_pauses_dropped.load() - before, 5u);
  std::vector<GcPause> pauses;
  monitor->TakePauses(&pauses);
  EXPECT_EQ(pauses.size(), GcMonitor::kCapacity);
}

TEST(TaskTimelineTest, ChargesOnlyTheOverlap) {
  TaskTimeline timeline;
  int a = 0, b = 0;
  timeline.Begin(&a, TaskTag{1, 0, 10}, 100);
  timeline.End(&a, 200);
  timeline.Begin(&b, TaskTag{1, 0, 11}, 150);    // still running
  std::vector<GcPause> pauses = {{0, 180, 50}};  // 180..230
  std::map<int64_t, int64_t> charged;
  timeline.AttributePauses(
      pauses, [&](const TaskTag& tag, int64_t ns) { charged[tag.task_attempt_id] += ns; }, 0);
  EXPECT_EQ(charged[10], 20);
  EXPECT_EQ(charged[11], 50);
  // Forgetting closed intervals keeps running ones.
  charged.clear();
  timeline.AttributePauses(
      pauses, [&](const TaskTag& tag, int64_t ns) { charged[tag.task_attempt_id] += ns; }, 1000);
  timeline.AttributePauses(
      pauses, [&](const TaskTag& tag, int64_t ns) { charged[tag.task_attempt_id] += ns; }, 1000);
  EXPECT_EQ(charged.count(10), 1u);  // charged in the first call only, then forgotten
  EXPECT_EQ(charged[11], 100);
}

}  // namespace
}  // namespace sparkprof::agent
