#include "analyzer/diagnosis/phase_breakdown.h"

#include <gtest/gtest.h>

#include "analyzer/diagnosis/test_util.h"
#include "analyzer/testing/synthetic_app.h"

namespace sparkprof::diagnosis {
namespace {

int64_t Sum(const PhaseBreakdown& p) {
  return p.resource_wait_ms + p.driver_only_ms + p.compute_ms + p.shuffle_ms + p.io_write_ms +
         p.gc_ms + p.idle_slots_ms;
}

TEST(PhaseBreakdown, DemoAppPartitionsWallTime) {
  sparkprof::testing::SyntheticApp app = sparkprof::testing::DemoApp();
  report::Analysis a = test_util::AnalyzeText(sparkprof::testing::GenerateEventLog(app));
  const PhaseBreakdown& p = a.phases;
  EXPECT_EQ(p.wall_ms, a.model.duration_ms());
  EXPECT_EQ(Sum(p), p.wall_ms);
  // Executors register 20 s + 300 ms after the start (generator: delay + 300 ms per executor).
  EXPECT_EQ(p.resource_wait_ms, app.executor_start_delay_ms + 300);
  EXPECT_EQ(p.peak_slots, app.executors * app.cores_per_executor);
  // The write job's 45 s commit runs after its last task: I/O write, not driver-only.
  EXPECT_GE(p.commit_gap_ms, app.stages[2].job_commit_ms);
  EXPECT_LE(p.commit_gap_ms, app.stages[2].job_commit_ms + 100);
  EXPECT_GE(p.io_write_ms, p.commit_gap_ms);
  // Slot accounting is internally consistent.
  EXPECT_EQ(p.idle_slot_ms, p.capacity_slot_ms - p.task_slot_ms);
  EXPECT_EQ(p.compute_slot_ms + p.gc_slot_ms + p.shuffle_slot_ms + p.io_write_slot_ms,
            p.task_slot_ms);
  EXPECT_GT(p.idle_slots_ms, 0);    // the skewed tail leaves 15 of 16 slots idle
  EXPECT_GT(p.starved_task_ms, 0);  // 200 join tasks queue for 16 slots
  EXPECT_NEAR(p.Ratio(p.resource_wait_ms), static_cast<double>(p.resource_wait_ms) / p.wall_ms,
              1e-9);
}

TEST(PhaseBreakdown, EmptyModelIsAllZero) {
  model::ApplicationModel model;
  PhaseBreakdown p = ComputePhaseBreakdown(model);
  EXPECT_EQ(p.wall_ms, 0);
  EXPECT_EQ(Sum(p), 0);
}

TEST(PhaseBreakdown, SharedLogsAlwaysSumToWallTime) {
  for (const char* label : {
           "linkedin+dr-elephant/test/resources/spark_event_logs/event_log_1",
           "groupon+sparklint/src/test/resources/spark_event_log_example",
           "apache+spark/core/src/test/resources/spark-events/app-20161115172038-0000",
       }) {
    std::optional<report::Analysis> a = test_util::AnalyzeShared(label);
    if (!a) continue;
    EXPECT_EQ(Sum(a->phases), a->phases.wall_ms) << label;
    EXPECT_GE(a->phases.resource_wait_ms, 0) << label;
    EXPECT_GE(a->phases.idle_slots_ms, 0) << label;
  }
}

}  // namespace
}  // namespace sparkprof::diagnosis
