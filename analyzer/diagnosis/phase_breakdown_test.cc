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
  EXPECT_GT(p.slot_starved_wall_ms, 0);
  EXPECT_LE(p.slot_starved_wall_ms, p.tasks_running_ms);
  EXPECT_NEAR(p.Ratio(p.resource_wait_ms), static_cast<double>(p.resource_wait_ms) / p.wall_ms,
              1e-9);
}

// One executor with 2 cores from t=10; a 4-task stage submitted at 10: two tasks run 10..50
// while two wait, then those run 50..90. Slots are full with tasks pending for 40 ms.
TEST(PhaseBreakdown, SlotStarvedWallTimeCountsPendingTasksWithNoFreeSlot) {
  model::ApplicationModel model;
  model.start_time_ms = 0;
  model.end_time_ms = 100;
  model::Executor executor;
  executor.executor_id = "1";
  executor.total_cores = 2;
  executor.added_time_ms = 10;
  model.executors.push_back(executor);
  model::StageAttempt stage;
  stage.stage_id = 0;
  stage.num_tasks = 4;
  stage.submission_time_ms = 10;
  stage.completion_time_ms = 90;
  model.stages[{0, 0}] = stage;
  for (int i = 0; i < 4; ++i) {
    model::TaskAttempt task;
    task.task_id = i;
    task.stage_id = 0;
    task.launch_time_ms = i < 2 ? 10 : 50;
    task.finish_time_ms = i < 2 ? 50 : 90;
    task.end = model::TaskEndKind::kSuccess;
    model.tasks.push_back(task);
  }
  PhaseBreakdown p = ComputePhaseBreakdown(model);
  EXPECT_EQ(p.resource_wait_ms, 10);
  EXPECT_EQ(p.slot_starved_wall_ms, 40);
  EXPECT_EQ(p.starved_task_ms, 2 * 40);
  EXPECT_EQ(Sum(p), p.wall_ms);
}

TEST(PhaseBreakdown, LiveModelWithoutExecutorsYetIsResourceWait) {
  model::ApplicationModel model;
  model.start_time_ms = 1000;
  model.end_time_ms = 4000;
  EXPECT_EQ(ComputePhaseBreakdown(model).resource_wait_ms, 0);  // a log: unknown
  PhaseBreakdownOptions live;
  live.live_model = true;
  PhaseBreakdown p = ComputePhaseBreakdown(model, live);
  EXPECT_EQ(p.resource_wait_ms, 3000);
  EXPECT_EQ(Sum(p), p.wall_ms);
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
