#include "analyzer/diagnosis/phase_breakdown.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "analyzer/testing/analysis_test_util.h"
#include "analyzer/testing/synthetic_app.h"

namespace sparkprof::diagnosis {
namespace {

int64_t Sum(const PhaseBreakdown& p) {
  int64_t sum = 0;
  for (int64_t ms : PhaseMs(p)) sum += ms;
  EXPECT_EQ(sum, p.resource_wait_ms + p.driver_only_ms + p.compute_ms + p.task_wait_ms +
                     p.shuffle_ms + p.io_write_ms + p.gc_ms + p.idle_slots_ms);
  return sum;
}

// The synthetic generator logs an executor CPU time of 80% of each task's run time; this makes
// it `cpu_share` of it (0: as Spark before 2.1, which logs none).
std::string WithCpuTime(const std::string& log, double cpu_share) {
  static const std::regex kRunAndCpuTime(
      "\"Executor Run Time\":([0-9]+),\"Executor CPU Time\":[0-9]+");
  std::string out;
  size_t last = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), kRunAndCpuTime);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const auto cpu_ns = static_cast<int64_t>(std::stod(m[1].str()) * cpu_share * 1e6);
    out.append(log, last, static_cast<size_t>(m.position(0)) - last);
    out +=
        "\"Executor Run Time\":" + m[1].str() + ",\"Executor CPU Time\":" + std::to_string(cpu_ns);
    last = static_cast<size_t>(m.position(0) + m.length(0));
  }
  EXPECT_GT(last, 0u) << "no task metrics with a CPU time in the log";
  out.append(log, last, std::string::npos);
  return out;
}

// An application running 0..end_ms with one executor of `cores` cores from executor_added_ms.
model::ApplicationModel OneExecutorModel(int32_t cores, int64_t end_ms,
                                         int64_t executor_added_ms = 0) {
  model::ApplicationModel model;
  model.start_time_ms = 0;
  model.end_time_ms = end_ms;
  model::Executor executor;
  executor.executor_id = "1";
  executor.total_cores = cores;
  executor.added_time_ms = executor_added_ms;
  model.executors.push_back(executor);
  return model;
}

// A successful attempt of stage 0 with metrics.
model::TaskAttempt MeasuredTask(int64_t task_id, int64_t launch_ms, int64_t finish_ms,
                                int64_t gc_ms, int64_t cpu_ms) {
  model::TaskAttempt task;
  task.task_id = task_id;
  task.launch_time_ms = launch_ms;
  task.finish_time_ms = finish_ms;
  task.end = model::TaskEndKind::kSuccess;
  task.has_metrics = true;
  task.metrics.jvm_gc_time_ms = gc_ms;
  task.metrics.executor_cpu_time_ns = cpu_ms * 1'000'000;
  return task;
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
  EXPECT_EQ(p.compute_slot_ms + p.task_wait_slot_ms + p.gc_slot_ms + p.shuffle_slot_ms +
                p.io_write_slot_ms,
            p.task_slot_ms);
  EXPECT_TRUE(p.cpu_measured);  // the generator logs CPU time
  EXPECT_GT(p.task_wait_ms, 0);
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
  model::ApplicationModel model = OneExecutorModel(2, 100, 10);
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

// Tasks on CPU for half their run time: the old compute (task work) splits about in halves, the
// other phases stay as they were.
TEST(PhaseBreakdown, CpuTimeSplitsTaskWorkIntoComputeAndTaskWait) {
  const std::string log = sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp());
  const PhaseBreakdown before = test_util::AnalyzeText(WithCpuTime(log, 0)).phases;
  const PhaseBreakdown p = test_util::AnalyzeText(WithCpuTime(log, 0.5)).phases;
  // No CPU time logged: no split, and the flag says so.
  ASSERT_FALSE(before.cpu_measured);
  EXPECT_EQ(before.task_wait_ms, 0);
  EXPECT_EQ(before.task_wait_slot_ms, 0);
  EXPECT_EQ(Sum(before), before.wall_ms);
  ASSERT_TRUE(p.cpu_measured);
  EXPECT_EQ(Sum(p), p.wall_ms);
  EXPECT_EQ(p.wall_ms, before.wall_ms);
  for (int64_t PhaseBreakdown::*unchanged :
       {&PhaseBreakdown::resource_wait_ms, &PhaseBreakdown::driver_only_ms,
        &PhaseBreakdown::shuffle_ms, &PhaseBreakdown::io_write_ms, &PhaseBreakdown::gc_ms,
        &PhaseBreakdown::idle_slots_ms, &PhaseBreakdown::gc_slot_ms,
        &PhaseBreakdown::shuffle_slot_ms, &PhaseBreakdown::io_write_slot_ms}) {
    EXPECT_EQ(p.*unchanged, before.*unchanged);
  }
  EXPECT_EQ(p.compute_slot_ms + p.task_wait_slot_ms, before.compute_slot_ms);
  EXPECT_EQ(p.compute_ms + p.task_wait_ms, before.compute_ms);
  // Half of the run time is a little more than half of the task work (the run time less GC and
  // shuffle); the demo's tasks spend ~3% in GC and a few in shuffle.
  EXPECT_NEAR(static_cast<double>(p.compute_ms), 0.5 * static_cast<double>(before.compute_ms),
              0.1 * static_cast<double>(before.compute_ms));
  EXPECT_NEAR(static_cast<double>(p.task_wait_ms), 0.5 * static_cast<double>(before.compute_ms),
              0.1 * static_cast<double>(before.compute_ms));
  EXPECT_GT(p.task_wait_ms, 0);
}

// Two slots, two tasks of 100 ms each with 10 ms of GC, on CPU for 50 and 200 ms (the second
// beyond its task work of 90 ms: capped).
TEST(PhaseBreakdown, ComputeIsTheOnCpuPartOfTaskWork) {
  model::ApplicationModel model = OneExecutorModel(2, 100);
  model.tasks.push_back(MeasuredTask(0, 0, 100, 10, 50));
  model.tasks.push_back(MeasuredTask(1, 0, 100, 10, 200));
  PhaseBreakdown p = ComputePhaseBreakdown(model);
  EXPECT_TRUE(p.cpu_measured);
  EXPECT_EQ(p.gc_slot_ms, 20);
  EXPECT_EQ(p.compute_slot_ms, 50 + 90);
  EXPECT_EQ(p.task_wait_slot_ms, 40);
  EXPECT_EQ(p.gc_ms, 10);
  EXPECT_EQ(p.task_wait_ms, 20);
  EXPECT_EQ(p.compute_ms, 70);
  EXPECT_EQ(Sum(p), p.wall_ms);

  // No attempt with a CPU time (Spark before 2.1): no split, the flag says so.
  for (model::TaskAttempt& task : model.tasks) task.metrics.executor_cpu_time_ns = 0;
  p = ComputePhaseBreakdown(model);
  EXPECT_FALSE(p.cpu_measured);
  EXPECT_EQ(p.compute_slot_ms, 180);
  EXPECT_EQ(p.task_wait_slot_ms, 0);
  EXPECT_EQ(p.compute_ms, 90);
  EXPECT_EQ(p.task_wait_ms, 0);
  EXPECT_EQ(Sum(p), p.wall_ms);
}

// An attempt still running at the end (no metrics yet, as live) is on CPU for the share the
// measured attempts were, not all wait.
TEST(PhaseBreakdown, AttemptsWithoutMetricsSplitLikeTheMeasuredOnes) {
  model::ApplicationModel model = OneExecutorModel(2, 100);
  model.tasks.push_back(MeasuredTask(0, 0, 100, 0, 25));  // on CPU a quarter of its 100 ms
  model::TaskAttempt running;
  running.task_id = 1;
  running.launch_time_ms = 20;
  model.tasks.push_back(running);
  PhaseBreakdown p = ComputePhaseBreakdown(model);
  EXPECT_EQ(p.task_slot_ms, 180);
  EXPECT_EQ(p.compute_slot_ms, 25 + 20);
  EXPECT_EQ(p.task_wait_slot_ms, 75 + 60);
  EXPECT_EQ(Sum(p), p.wall_ms);
}

TEST(PhaseBreakdown, TaskWaitByKindFollowsTheProfilesOffCpuTimeBesideShuffleFetches) {
  using C = sparkprof::Category;
  auto ns = [](profile::StageProfile& stage, C category) -> uint64_t& {
    return stage.category_ns[CategoryIndex(category)];
  };
  PhaseBreakdown phases;
  phases.task_wait_ms = 1000;
  profile::ApplicationProfile profile;
  profile.modes = {"cpu+wall"};
  for (int stage_id : {0, 1}) {
    profile::StageProfile stage;
    stage.stage_id = stage_id;
    ns(stage, C::kCompute) = 9'000'000'000;
    ns(stage, C::kPythonWait) = 300'000'000;          // 2 stages: 600 ms of 800
    ns(stage, C::kIoWait) = 100'000'000;              // 200 ms of 800
    ns(stage, C::kShuffleFetchWait) = 5'000'000'000;  // in the shuffle phase
    ns(stage, C::kPython) = 7'000'000'000;            // on CPU, in the worker
    profile.stages.push_back(stage);
  }
  const auto by_kind = TaskWaitByKind(phases, &profile);
  ASSERT_EQ(by_kind.size(), 2u);
  EXPECT_EQ(by_kind[0], std::make_pair(C::kPythonWait, int64_t{750}));
  EXPECT_EQ(by_kind[1], std::make_pair(C::kIoWait, int64_t{250}));

  // Thirds: the largest (first in category order among equals) takes the rounding remainder.
  profile.stages.resize(1);
  ns(profile.stages[0], C::kPythonWait) = 100;
  ns(profile.stages[0], C::kIoWait) = 100;
  ns(profile.stages[0], C::kSleep) = 100;
  const auto thirds = TaskWaitByKind(phases, &profile);
  ASSERT_EQ(thirds.size(), 3u);
  EXPECT_EQ(thirds[0], std::make_pair(C::kPythonWait, int64_t{334}));
  EXPECT_EQ(thirds[1], std::make_pair(C::kIoWait, int64_t{333}));
  EXPECT_EQ(thirds[2], std::make_pair(C::kSleep, int64_t{333}));

  // Unattributed: no profile, a CPU-only profile, or no task wait.
  EXPECT_TRUE(TaskWaitByKind(phases, nullptr).empty());
  PhaseBreakdown no_wait;
  EXPECT_TRUE(TaskWaitByKind(no_wait, &profile).empty());
  profile.modes = {"cpu"};
  EXPECT_TRUE(TaskWaitByKind(phases, &profile).empty());
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
    EXPECT_GE(a->phases.task_wait_ms, 0) << label;
    EXPECT_GE(a->phases.compute_ms, 0) << label;
  }
}

}  // namespace
}  // namespace sparkprof::diagnosis
