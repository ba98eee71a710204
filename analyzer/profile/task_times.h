// The agent's per-task time (Batch.task_times) gathered while a profile is read: rows of the same
// (stage, stage attempt, task attempt) summed over batches and executors, for at most a given
// number of task attempts; rows past that limit, and rows of stage attempts that end up with no
// summary, are counted, never kept, and named as problems.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyzer/profile/stage_profiles.h"
#include "flamegraph/profile_file_reader.h"
#include "flamegraph/read_report.h"

namespace sparkprof::profile {

class TaskTimeTable {
 public:
  explicit TaskTimeTable(size_t max_tasks) : max_tasks_(max_tasks) {}

  // For ProfileFileReadOptions::task_times (context: the table).
  static void Receive(void* context, const flamegraph::TaskTimeRow& row);
  // Rows outside tasks (stage or task id < 0: the JVM's own threads) are not task time: ignored.
  void Add(const flamegraph::TaskTimeRow& row);

  // Moves each stage attempt's tasks into its summary in `stages` (sorted by stage id and
  // attempt), ordered by task id; counts what is left out in `profile` and warns in `report`
  // (named after `source_name`).
  void MoveInto(std::vector<StageProfile>& stages, const std::string& source_name,
                ApplicationProfile& profile, flamegraph::ReadReport& report);

 private:
  struct TaskKey {
    int32_t stage_id;
    int32_t stage_attempt;
    int64_t task_attempt_id;
    bool operator==(const TaskKey&) const = default;
  };
  struct TaskKeyHash {
    size_t operator()(const TaskKey& key) const;
  };

  size_t max_tasks_;
  std::unordered_map<TaskKey, CategoryNs, TaskKeyHash> tasks_;
  uint64_t rows_over_limit_ = 0;
  uint64_t ns_over_limit_ = 0;
};

}  // namespace sparkprof::profile
