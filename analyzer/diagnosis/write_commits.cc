#include "analyzer/diagnosis/write_commits.h"

#include <algorithm>
#include <map>

namespace sparkprof::diagnosis {

std::vector<WriteCommit> ComputeWriteCommits(const model::ApplicationModel& model,
                                             const std::vector<StageStats>& stages) {
  std::map<int32_t, const StageStats*> write_stage;
  for (const StageStats& s : stages) {
    if (s.write_stage) write_stage[s.stage_id] = &s;
  }
  std::map<int32_t, int64_t> last_task_end;
  for (const model::TaskAttempt& task : model.tasks) {
    if (task.ended())
      last_task_end[task.stage_id] = std::max(last_task_end[task.stage_id], task.finish_time_ms);
  }
  // A SQL write belongs to the first job that lists one of its stages (later jobs list it as
  // skipped).
  std::map<int32_t, const model::SqlWrite*> write_of_job;
  for (const model::SqlWrite& write : model.sql_writes) {
    for (const auto& entry : model.jobs) {
      const int32_t job_id = entry.first;
      const model::Job& job = entry.second;
      bool lists = std::any_of(write.stage_ids.begin(), write.stage_ids.end(), [&](int32_t id) {
        return std::find(job.stage_ids.begin(), job.stage_ids.end(), id) != job.stage_ids.end();
      });
      if (!lists) continue;
      write_of_job.emplace(job_id, &write);
      break;
    }
  }
  std::vector<WriteCommit> out;
  for (const auto& [job_id, job] : model.jobs) {
    if (job.completion_time_ms < 0) continue;
    WriteCommit c;
    c.job_id = job_id;
    c.job_end_ms = job.completion_time_ms;
    bool writes = false;
    for (int32_t id : job.stage_ids) {
      auto stage = write_stage.find(id);
      if (stage != write_stage.end()) {
        writes = true;
        if (stage->second->successful_tasks > 0) c.write_stage_id = id;
      }
      auto end = last_task_end.find(id);
      if (end != last_task_end.end())
        c.last_task_end_ms = std::max(c.last_task_end_ms, end->second);
    }
    if (!writes || c.last_task_end_ms < 0) continue;
    c.in_job_gap_ms = std::max<int64_t>(c.job_end_ms - c.last_task_end_ms, 0);
    c.commit_end_ms = c.job_end_ms;
    auto write = write_of_job.find(job_id);
    if (write != write_of_job.end()) {
      c.write = write->second;
      if (c.write->job_commit_ms > 0) {
        int64_t end = c.job_end_ms + c.write->job_commit_ms;
        auto sql = model.sql_executions.find(c.write->execution_id);
        if (sql != model.sql_executions.end() && sql->second.end_time_ms >= c.job_end_ms)
          end = std::min(end, sql->second.end_time_ms);
        c.after_job_ms = end - c.job_end_ms;
        c.commit_end_ms = end;
      }
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace sparkprof::diagnosis
