// The replay reproduces real runs (self-prediction on the shared logs) and moves the right way
// under each change on synthetic runs whose answer is known.
#include "analyzer/whatif/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/diagnosis/test_util.h"
#include "analyzer/testing/synthetic_app.h"

namespace sparkprof::whatif {
namespace {

using diagnosis::test_util::AnalyzeShared;
using diagnosis::test_util::AnalyzeText;

report::Analysis Synthetic(int tasks, int64_t task_ms, int skewed = 0, double skew = 1.0) {
  testing::SyntheticApp app;
  app.executors = 4;
  app.cores_per_executor = 2;
  app.executor_start_delay_ms = 1000;
  testing::SyntheticStage scan;
  scan.name = "scan";
  scan.tasks = tasks;
  scan.task_ms = task_ms;
  scan.jitter = 0;
  scan.input_bytes_per_task = 64 << 20;
  scan.shuffle_write_bytes_per_task = 8 << 20;
  app.stages.push_back(scan);
  testing::SyntheticStage agg;
  agg.name = "aggregate";
  agg.tasks = tasks;
  agg.task_ms = task_ms;
  agg.jitter = 0;
  agg.shuffle_read_bytes_per_task = 8 << 20;
  agg.skewed_tasks = skewed;
  agg.skew_factor = skew;
  agg.parents = {0};
  app.stages.push_back(agg);
  return AnalyzeText(testing::GenerateEventLog(app));
}

TEST(Simulator, ReproducesTheSyntheticRunAndScalesWithExecutors) {
  report::Analysis a = Synthetic(64, 4000);
  Prediction same = Simulate(a.model, Scenario{});
  EXPECT_LE(same.self_prediction_error, 0.02) << same.baseline_wall_ms << " vs " << same.actual_wall_ms;
  EXPECT_EQ(same.predicted_wall_ms, same.baseline_wall_ms);
  Scenario half;
  half.executors = 2;
  Prediction slower = Simulate(a.model, half);
  // 2 x 64 tasks of ~4 s on 8 slots is ~64 s of task waves; on 4 slots ~128 s.
  const int64_t waves_before = same.baseline_wall_ms;
  EXPECT_GT(slower.predicted_wall_ms, waves_before + 50'000);
  EXPECT_LT(slower.predicted_core_hours, same.baseline_core_hours * 1.2);
  Scenario more;
  more.executors = 8;
  EXPECT_LT(Simulate(a.model, more).predicted_wall_ms, waves_before - 25'000);
}

TEST(Simulator, FixingSkewShortensTheStageThePartitionCountDoesNotSplitAHotKey) {
  report::Analysis a = Synthetic(32, 2000, 1, 20.0);
  Prediction same = Simulate(a.model, Scenario{});
  Scenario fix;
  fix.fix_skew = true;
  Prediction fixed = Simulate(a.model, fix);
  EXPECT_LT(fixed.predicted_wall_ms, same.baseline_wall_ms - 25'000);
  auto aggregate = std::find_if(fixed.stages.begin(), fixed.stages.end(),
                                [](const StagePrediction& s) { return s.stage_id == 1; });
  ASSERT_NE(aggregate, fixed.stages.end());
  EXPECT_GT(aggregate->predicted_tasks, aggregate->actual_tasks);
  Scenario partitions;
  partitions.shuffle_partitions = 64;
  Prediction split = Simulate(a.model, partitions);
  auto re_split = std::find_if(split.stages.begin(), split.stages.end(),
                               [](const StagePrediction& s) { return s.stage_id == 1; });
  EXPECT_EQ(re_split->predicted_tasks, 64);
  // The hot partition's work lands in two halves of ~20 s: still far longer than the rest.
  EXPECT_GT(re_split->predicted_ms, 15'000);
}

TEST(Simulator, SettingsAreParsedOrRefused) {
  Scenario s;
  std::string error;
  EXPECT_TRUE(ApplySetting("spark.executor.instances=8", s, error));
  EXPECT_EQ(s.executors, 8);
  EXPECT_FALSE(ApplySetting("spark.executor.instances=-2", s, error));
  EXPECT_FALSE(ApplySetting("spark.executor.memory=8g", s, error));
  EXPECT_NE(error.find("cannot simulate spark.executor.memory"), std::string::npos);
  EXPECT_FALSE(ApplySetting("nonsense", s, error));
  EXPECT_TRUE(ApplyFix("skew", s, error));
  EXPECT_FALSE(ApplyFix("everything", s, error));
}

// The self-prediction over every shared log that is one complete application with tasks: the
// error distribution is printed; the median must stay within 5% and 80% of the logs too.
TEST(Simulator, SelfPredictionOnTheSharedLogs) {
  namespace fs = std::filesystem;
  const fs::path root = diagnosis::test_util::kEventLogs;
  if (!fs::exists(root)) GTEST_SKIP() << "no shared event logs";
  std::vector<std::pair<double, std::string>> errors;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (name.find('.') != std::string::npos && name.find(".zstd") == std::string::npos &&
        name.find(".lz4") == std::string::npos && name.find(".inprogress") == std::string::npos) {
      continue;  // json facts, zips, docs: only single plain or compressed logs here
    }
    const std::string label = fs::relative(entry.path(), root).string();
    std::optional<report::Analysis> a = AnalyzeShared(label);
    if (!a || !a->model.complete || a->model.tasks.size() < 10 || a->model.duration_ms() < 1000) {
      continue;
    }
    Prediction p = Simulate(a->model, Scenario{});
    errors.push_back({p.self_prediction_error, label});
  }
  if (errors.empty()) GTEST_SKIP() << "no complete shared logs with tasks";
  std::sort(errors.begin(), errors.end());
  const double median = errors[errors.size() / 2].first;
  size_t within = 0;
  for (const auto& [e, label] : errors) within += e <= 0.05;
  std::printf("self-prediction over %zu shared logs: median error %.2f%%, %zu within 5%%, worst:\n",
              errors.size(), 100 * median, within);
  for (size_t i = errors.size() >= 8 ? errors.size() - 8 : 0; i < errors.size(); ++i) {
    std::printf("  %6.2f%%  %s\n", 100 * errors[i].first, errors[i].second.c_str());
  }
  EXPECT_LE(median, 0.05);
  EXPECT_GE(static_cast<double>(within), 0.8 * static_cast<double>(errors.size()));
}

}  // namespace
}  // namespace sparkprof::whatif
