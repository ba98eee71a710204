#include "analyzer/profile/task_times.h"

#include <algorithm>
#include <string>
#include <utility>

namespace sparkprof::profile {

void TaskTimeTable::Receive(void* context, const flamegraph::TaskTimeRow& row) {
  static_cast<TaskTimeTable*>(context)->Add(row);
}

size_t TaskTimeTable::TaskKeyHash::operator()(const TaskKey& key) const {
  const uint64_t stage = (static_cast<uint64_t>(static_cast<uint32_t>(key.stage_id)) << 32) |
                         static_cast<uint32_t>(key.stage_attempt);
  return std::hash<uint64_t>()(stage * 0x9E3779B97F4A7C15ULL ^
                               static_cast<uint64_t>(key.task_attempt_id));
}

void TaskTimeTable::Add(const flamegraph::TaskTimeRow& row) {
  if (row.stage_id < 0 || row.task_attempt_id < 0) return;
  const TaskKey key{row.stage_id, row.stage_attempt, row.task_attempt_id};
  auto it = tasks_.find(key);
  if (it == tasks_.end()) {
    if (tasks_.size() >= max_tasks_) {
      ++rows_over_limit_;
      ns_over_limit_ = flamegraph::SaturatingAdd(ns_over_limit_, row.time_ns);
      return;
    }
    it = tasks_.emplace(key, CategoryNs{}).first;
  }
  uint64_t& ns = it->second[CategoryIndex(row.category)];
  ns = flamegraph::SaturatingAdd(ns, row.time_ns);
}

void TaskTimeTable::MoveInto(std::vector<StageProfile>& stages, const std::string& source_name,
                             ApplicationProfile& profile, flamegraph::ReadReport& report) {
  uint64_t rows_without_stage = 0, ns_without_stage = 0;
  for (auto& [key, category_ns] : tasks_) {
    auto stage = std::lower_bound(
        stages.begin(), stages.end(), std::make_pair(key.stage_id, key.stage_attempt),
        [](const StageProfile& s, const std::pair<int32_t, int32_t>& wanted) {
          return std::make_pair(s.stage_id, s.stage_attempt) < wanted;
        });
    if (stage == stages.end() || stage->stage_id != key.stage_id ||
        stage->stage_attempt != key.stage_attempt) {
      for (uint64_t ns : category_ns) {
        if (ns > 0) ++rows_without_stage;
        ns_without_stage = flamegraph::SaturatingAdd(ns_without_stage, ns);
      }
      continue;
    }
    stage->tasks.push_back(TaskTime{key.task_attempt_id, category_ns});
  }
  tasks_.clear();
  for (StageProfile& stage : stages) {
    std::sort(stage.tasks.begin(), stage.tasks.end(), [](const TaskTime& a, const TaskTime& b) {
      return a.task_attempt_id < b.task_attempt_id;
    });
  }
  profile.max_profiled_tasks = max_tasks_;
  profile.task_rows_left_out = rows_over_limit_ + rows_without_stage;
  profile.task_ns_left_out = flamegraph::SaturatingAdd(ns_over_limit_, ns_without_stage);
  if (rows_over_limit_ > 0) {
    report.Warn(source_name + ": " + std::to_string(rows_over_limit_) + " task-time row(s) (" +
                std::to_string(ns_over_limit_ / 1'000'000) + " ms" +
                ") of task attempts beyond the first " + std::to_string(max_tasks_) +
                " are left out of the per-task view (the limit of docs/limits.md); the stage "
                "figures include them");
  }
  if (rows_without_stage > 0) {
    report.Warn(source_name + ": " + std::to_string(rows_without_stage) + " task-time row(s) (" +
                std::to_string(ns_without_stage / 1'000'000) + " ms" +
                ") belong to stage attempts without stack samples (GC pauses only) and are left "
                "out of the per-task view");
  }
}

}  // namespace sparkprof::profile
