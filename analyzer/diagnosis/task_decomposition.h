// Per stage attempt with a profile: its slowest task attempts and its median task by the event
// log's durations, each with the agent's time of that very task by category
// (profile::TaskTime, joined on Spark's task id), and in words how the slowest differs from the
// median. Computed once from the model's task records (which the reports free afterwards), read
// by the data-skew and straggler findings and by every report format.
//
// Definitions (docs/report-schema.md, `stages[].profile.tasks`):
//   * the tasks are the stage attempt's successful task attempts, as StageStats counts them for
//     the median and the longest task (a duration the log lacks counts as 0);
//   * slowest: the longest kSlowestTasksShown of them, ties by task id; median: the nearest-rank
//     median (position ceil(n / 2) of the durations in ascending order, ties by task id);
//   * a task's time by category is sampled (gc also holds the GC pauses measured while it ran):
//     on CPU by what the code did, off CPU by what it waited in (cpu+wall mode only), and its
//     Python worker's time (python, python_off_cpu) apart, as in the stage's profile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/model/application_model.h"
#include "analyzer/profile/stage_profiles.h"

namespace sparkprof::diagnosis {

inline constexpr size_t kSlowestTasksShown = 3;

struct DecomposedTask {
  int64_t task_id = -1;
  int32_t index = -1;    // the partition
  int32_t attempt = 0;   // the task's attempt number
  std::string executor;  // "" when the log does not name it
  int64_t duration_ms = 0;
  bool sampled = false;    // the profile holds time of this task attempt
  profile::TaskTime time;  // zeros when not sampled
};

struct StageTaskDecomposition {
  int32_t stage_id = -1;
  int32_t stage_attempt = 0;
  int64_t successful_tasks = 0;
  std::vector<DecomposedTask> slowest;  // slowest first (at most kSlowestTasksShown)
  DecomposedTask median;
  // The profile left task-time rows out (its per-task limit): a task without samples may have
  // had some.
  bool profile_left_tasks_out = false;
};

// The stage attempts that have a profile summary and successful tasks in the model, ordered by
// (stage id, attempt) as FindTaskDecomposition expects. Reads the model's task records: call
// before ReleaseTaskRecords.
std::vector<StageTaskDecomposition> DecomposeTasks(const model::ApplicationModel& model,
                                                   const profile::ApplicationProfile& profile);
const StageTaskDecomposition* FindTaskDecomposition(
    const std::vector<StageTaskDecomposition>& decompositions, int32_t stage_id,
    int32_t stage_attempt);

// A category in which the slowest task spent more sampled time than the median task.
struct CategoryExcess {
  ::sparkprof::Category category = ::sparkprof::Category::kCompute;
  uint64_t extra_ns = 0;
};
// The task-thread categories (python and python_off_cpu aside) with more time in `slow` than in
// `median`, most first: at most `count`, each after the first at least a quarter of the first.
std::vector<CategoryExcess> LargestExcess(const DecomposedTask& slow, const DecomposedTask& median,
                                          size_t count = 2);

// "task 412 (executor 3) ran 10.3 s against a median of 251 ms (task 77): 8.1 s more of it in
// serialization, 1.2 s more in gc"; "" when the stage has no slower task than its median.
std::string SlowestVsMedianText(const StageTaskDecomposition& decomposition);

// "serialization 8.2 s, compute 1.1 s, gc 310 ms" (a task's largest task-thread categories, at
// most `count`; "no samples" when the profile holds none of it).
std::string TaskCategoriesText(const DecomposedTask& task, size_t count = 3);

}  // namespace sparkprof::diagnosis
