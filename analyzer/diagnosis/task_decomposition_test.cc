// How the slowest task's sampled time is put against the median task's, in words a user can check
// against the two tasks' categories.
#include "analyzer/diagnosis/task_decomposition.h"

#include <gtest/gtest.h>

namespace sparkprof::diagnosis {
namespace {

using TimeCategory = ::sparkprof::Category;
constexpr uint64_t kMs = 1'000'000;

DecomposedTask Task(int64_t id, int64_t duration_ms,
                    const std::vector<std::pair<TimeCategory, uint64_t>>& ms_by_category) {
  DecomposedTask task;
  task.task_id = id;
  task.executor = "3";
  task.duration_ms = duration_ms;
  task.sampled = !ms_by_category.empty();
  for (auto [category, ms] : ms_by_category) {
    task.time.category_ns[CategoryIndex(category)] = ms * kMs;
  }
  return task;
}

StageTaskDecomposition Stage(DecomposedTask slowest, DecomposedTask median) {
  StageTaskDecomposition stage;
  stage.successful_tasks = 100;
  stage.slowest = {std::move(slowest)};
  stage.median = std::move(median);
  return stage;
}

TEST(TaskDecompositionTest, NamesTheCategoriesHoldingTheExtraTime) {
  const StageTaskDecomposition stage =
      Stage(Task(412, 10'300,
                 {{TimeCategory::kSerialization, 8'300},
                  {TimeCategory::kGc, 2'100},
                  {TimeCategory::kCompute, 200}}),
            Task(77, 251, {{TimeCategory::kSerialization, 200}, {TimeCategory::kCompute, 40}}));
  EXPECT_EQ(SlowestVsMedianText(stage),
            "task 412 (executor 3) ran 10.3 s against a median of 251 ms (task 77): 8.1 s more "
            "of it in serialization, 2.1 s more in gc");
  // compute's 160 ms more is under a quarter of serialization's 8.1 s: not named.
  const std::vector<CategoryExcess> excess = LargestExcess(stage.slowest[0], stage.median, 3);
  ASSERT_EQ(excess.size(), 2u);
  EXPECT_EQ(excess[1].category, TimeCategory::kGc);
  EXPECT_EQ(excess[1].extra_ns, 2'100 * kMs);
  EXPECT_EQ(TaskCategoriesText(stage.slowest[0], 2), "serialization 8.3 s, gc 2.1 s");
}

TEST(TaskDecompositionTest, PythonWorkersUnsampledTasksAndNoSlowerTask) {
  // The task thread waited on its worker; the worker's own extra time is said beside it.
  StageTaskDecomposition python =
      Stage(Task(5, 6'000, {{TimeCategory::kPythonWait, 5'000}, {TimeCategory::kPython, 4'000}}),
            Task(2, 1'000, {{TimeCategory::kPythonWait, 800}, {TimeCategory::kPython, 700}}));
  EXPECT_EQ(SlowestVsMedianText(python),
            "task 5 (executor 3) ran 6.0 s against a median of 1.0 s (task 2): 4.2 s more of it "
            "in python_wait; its Python worker ran 3.3 s more");
  EXPECT_EQ(TaskCategoriesText(python.median), "python_wait 800 ms; Python worker 700 ms");

  StageTaskDecomposition unsampled = Stage(Task(5, 6'000, {}), Task(2, 1'000, {}));
  EXPECT_EQ(SlowestVsMedianText(unsampled),
            "task 5 (executor 3) ran 6.0 s against a median of 1.0 s (task 2); the profile "
            "holds no samples of it");
  unsampled.profile_left_tasks_out = true;
  EXPECT_NE(SlowestVsMedianText(unsampled).find("beyond its per-task limit"), std::string::npos);
  EXPECT_EQ(TaskCategoriesText(unsampled.median), "no samples");

  const StageTaskDecomposition median_unsampled =
      Stage(Task(5, 6'000, {{TimeCategory::kCompute, 5'000}}), Task(2, 1'000, {}));
  EXPECT_EQ(SlowestVsMedianText(median_unsampled),
            "task 5 (executor 3) ran 6.0 s against a median of 1.0 s (task 2): 5.0 s more of it "
            "in compute (the median task has no samples)");

  // One task: it is its own median; equal durations: nothing slower to explain.
  const DecomposedTask only = Task(1, 500, {{TimeCategory::kCompute, 400}});
  EXPECT_EQ(SlowestVsMedianText(Stage(only, only)), "");
  EXPECT_EQ(SlowestVsMedianText(Stage(Task(1, 500, {}), Task(2, 500, {}))), "");
  EXPECT_EQ(SlowestVsMedianText(StageTaskDecomposition{}), "");
}

}  // namespace
}  // namespace sparkprof::diagnosis
