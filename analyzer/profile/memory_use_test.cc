#include "analyzer/profile/memory_use.h"

#include <gtest/gtest.h>

namespace sparkprof::profile {
namespace {

flamegraph::MemoryUseRow Row(const char* executor, int64_t end_ms, uint64_t heap_used) {
  flamegraph::MemoryUseRow row;
  row.executor_id = executor;
  row.pid = 7;
  row.end_epoch_ns = end_ms * 1'000'000;
  row.rss_bytes = 1000 + heap_used;
  row.heap_used_bytes = heap_used;
  row.heap_max_bytes = 4096;
  return row;
}

TEST(ApplicationMemoryUseTest, KeepsTheJvmsOwnAccountsAsPeaksAndTheLastReading) {
  ApplicationMemoryUse memory;
  flamegraph::MemoryUseRow first = Row("1", 1'000, 100);
  first.heap_used_peak_bytes = 900;  // the window's peak beyond its end
  first.heap_used_after_gc_bytes = 50;
  first.old_used_after_gc_bytes = 40;
  first.direct_buffer_bytes = 64;
  first.direct_buffer_max_bytes = 128;
  const flamegraph::HeapPoolRow pools[] = {{"eden", 10, 20, 30}, {"old", 60, 70, 80}};
  first.heap_pools = pools;
  memory.Add(first);
  flamegraph::MemoryUseRow second = Row("1", 2'000, 300);
  second.spark_execution_bytes = 11;
  second.spark_storage_bytes = 22;
  memory.Add(second);
  const JvmMemory* jvm = memory.Find("1");
  ASSERT_NE(jvm, nullptr);
  EXPECT_TRUE(jvm->jvm_accounts);
  EXPECT_EQ(jvm->readings, 2u);
  EXPECT_EQ(jvm->max_heap_used_bytes, 900u);
  EXPECT_EQ(jvm->max_heap_after_gc_bytes, 50u);
  EXPECT_EQ(jvm->max_old_after_gc_bytes, 40u);
  EXPECT_EQ(jvm->max_direct_buffer_bytes, 64u);
  EXPECT_EQ(jvm->max_spark_execution_bytes, 11u);
  EXPECT_EQ(jvm->max_spark_storage_bytes, 22u);
  EXPECT_EQ(jvm->last.heap_used_bytes, 300u);
  EXPECT_EQ(jvm->last.heap_max_bytes, 4096u);
  EXPECT_EQ(jvm->last.old_used_bytes, 0u);  // the last reading had no pools
  ASSERT_EQ(jvm->timeline.size(), 2u);
  EXPECT_EQ(jvm->timeline[0].heap_used_bytes, 900u);
  EXPECT_EQ(jvm->timeline[1].time_ms, 2'000);
}

TEST(ApplicationMemoryUseTest, TimelinesStayBoundedAndKeepTheSpikes) {
  ApplicationMemoryUse memory;
  const size_t readings = 10 * ApplicationMemoryUse::kMaxTimelinePoints;
  for (size_t i = 0; i < readings; ++i) {
    // One spike in the middle; a reading out of order at the end.
    const uint64_t heap = i == readings / 2 ? 1'000'000 : 100 + i;
    memory.Add(Row("2", static_cast<int64_t>(1'000 * (i + 1)), heap));
  }
  memory.Add(Row("2", 500, 1));
  const JvmMemory* jvm = memory.Find("2");
  ASSERT_NE(jvm, nullptr);
  EXPECT_LE(jvm->timeline.size(), ApplicationMemoryUse::kMaxTimelinePoints);
  EXPECT_GE(jvm->timeline.size(), ApplicationMemoryUse::kMaxTimelinePoints / 2);
  uint64_t most = 0;
  for (size_t i = 0; i < jvm->timeline.size(); ++i) {
    most = std::max(most, jvm->timeline[i].heap_used_bytes);
    if (i > 0) EXPECT_LE(jvm->timeline[i - 1].time_ms, jvm->timeline[i].time_ms);
  }
  EXPECT_EQ(most, 1'000'000u);
  EXPECT_EQ(jvm->timeline.back().time_ms, static_cast<int64_t>(1'000 * readings));
  EXPECT_EQ(jvm->last.time_ms, static_cast<int64_t>(1'000 * readings));  // not the late one
}

TEST(ApplicationMemoryUseTest, AgentsWithoutTheAccountsSayNothingOfThem) {
  ApplicationMemoryUse memory;
  flamegraph::MemoryUseRow row = Row("3", 1'000, 0);
  row.heap_max_bytes = 0;
  memory.Add(row);
  EXPECT_FALSE(memory.Find("3")->jvm_accounts);
}

}  // namespace
}  // namespace sparkprof::profile
