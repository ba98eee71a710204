#include "analyzer/report/summary.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

namespace sparkprof::report {

void Totals::Add(const model::TaskAttempt& task) {
  if (!task.has_metrics) return;
  const model::TaskAttemptMetrics& m = task.metrics;
  ++task_attempts_with_metrics;
  executor_run_time_ms += m.executor_run_time_ms;
  executor_cpu_time_ns += m.executor_cpu_time_ns;
  executor_deserialize_time_ms += m.executor_deserialize_time_ms;
  result_serialization_time_ms += m.result_serialization_time_ms;
  jvm_gc_time_ms += m.jvm_gc_time_ms;
  memory_bytes_spilled += m.memory_bytes_spilled;
  disk_bytes_spilled += m.disk_bytes_spilled;
  shuffle_read_bytes += m.shuffle_bytes_read();
  shuffle_remote_bytes_read += m.shuffle_remote_bytes_read;
  shuffle_fetch_wait_time_ms += m.shuffle_fetch_wait_time_ms;
  shuffle_write_bytes += m.shuffle_bytes_written;
  shuffle_write_time_ns += m.shuffle_write_time_ns;
  input_bytes += m.input_bytes_read;
  output_bytes += m.output_bytes_written;
  peak_execution_memory_bytes_max =
      std::max(peak_execution_memory_bytes_max, m.peak_execution_memory_bytes);
  photon_peak_memory_largest_operator_bytes_max = std::max(
      photon_peak_memory_largest_operator_bytes_max, m.photon_peak_memory_largest_operator_bytes);
}

Percentiles ComputePercentiles(std::vector<int64_t> values) {
  Percentiles out;
  out.count = static_cast<int64_t>(values.size());
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  auto rank = [&](double p) {
    size_t position = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::clamp<size_t>(position, 1, values.size()) - 1];
  };
  out.p50 = rank(0.50);
  out.p95 = rank(0.95);
  out.max = values.back();
  return out;
}

ApplicationSummary Summarize(const model::ApplicationModel& model) {
  ApplicationSummary summary;
  Counts& counts = summary.counts;
  counts.jobs = 0;
  for (const auto& [id, job] : model.jobs) {
    if (job.submission_time_ms >= 0 || !job.stage_ids.empty()) ++counts.jobs;
    if (job.result == "JobFailed") ++counts.failed_jobs;
  }
  std::set<int32_t> submitted_stage_ids;
  for (const auto& [key, stage] : model.stages) {
    if (stage.submitted) {
      submitted_stage_ids.insert(stage.stage_id);
      ++counts.stage_attempts;
    }
    if (stage.status == model::StageStatus::kFailed) ++counts.failed_stage_attempts;
  }
  counts.stages = static_cast<int64_t>(submitted_stage_ids.size());
  counts.photon_peak_memory_tasks = model.photon_peak_memory_tasks;
  counts.photon_shuffle_write_tasks = model.photon_shuffle_write_tasks;
  for (const model::TaskAttempt& task : model.tasks) {
    if (task.ended()) {
      ++counts.task_attempts;
      if (task.speculative) ++counts.speculative_task_attempts;
      if (!task.has_start) ++counts.task_end_without_start;
      if (task.resubmitted) ++counts.resubmitted_tasks;
    } else {
      ++counts.task_start_without_end;
    }
  }
  for (const auto& [id, sql] : model.sql_executions) {
    if (sql.start_time_ms >= 0 || !sql.description.empty()) ++counts.sql_executions;
  }

  summary.executors.added = model.executor_added_events;
  summary.executors.removed = model.executor_removed_events;
  summary.executors.max_concurrent = model.max_concurrent_executors;
  summary.executors.removal_reasons = model.executor_removal_reasons;
  summary.task_end_reasons = model.task_end_reasons;

  // Totals count every TaskEnd with metrics; duplicates of the same attempt were merged into
  // one record by the builder, and their count is reported separately.
  for (const model::TaskAttempt& task : model.tasks) summary.totals.Add(task);

  for (const auto& [key, stage] : model.stages) {
    StageSummary& s = summary.stages.emplace_back();
    s.stage_id = stage.stage_id;
    s.attempt = stage.attempt;
    s.name = stage.name;
    s.num_tasks = stage.num_tasks;
    s.status = model::StageStatusName(stage.status);
    s.submission_ms = stage.submission_time_ms;
    s.completion_ms = stage.completion_time_ms;
    s.duration_ms = model::ElapsedMs(s.submission_ms, s.completion_ms);
    s.failure_reason = stage.failure_reason;
    std::vector<int64_t> durations;
    auto [begin, end] = model.TasksOf(stage);
    for (const uint32_t* it = begin; it != end; ++it) {
      const model::TaskAttempt& task = model.tasks[*it];
      if (!task.ended()) continue;
      ++s.task_attempts;
      if (task.end != model::TaskEndKind::kSuccess) ++s.failed_task_attempts;
      int64_t duration = task.duration_ms();
      if (duration >= 0) durations.push_back(duration);
      s.totals.Add(task);
    }
    s.task_duration_ms = ComputePercentiles(std::move(durations));
  }

  std::map<int32_t, size_t> job_index;
  for (const auto& [id, job] : model.jobs) {
    if (job.submission_time_ms < 0 && job.stage_ids.empty() && job.result.empty()) continue;
    JobSummary& j = summary.jobs.emplace_back();
    job_index[id] = summary.jobs.size() - 1;
    j.job_id = id;
    j.description = job.description;
    j.job_group = job.job_group;
    j.sql_execution_id = job.sql_execution_id;
    j.stage_ids = job.stage_ids;
    j.submission_ms = job.submission_time_ms;
    j.completion_ms = job.completion_time_ms;
    j.duration_ms = model::ElapsedMs(j.submission_ms, j.completion_ms);
    j.result = job.result == "JobSucceeded" ? "succeeded"
               : job.result.empty()         ? "unknown"
                                            : "failed";
    j.failure_reason = job.failure_message_head;
  }
  for (const auto& [id, sql] : model.sql_executions) {
    if (sql.start_time_ms < 0 && sql.description.empty()) continue;
    SqlExecutionSummary& q = summary.sql_executions[id];
    q.execution_id = id;
    q.duration_ms = model::ElapsedMs(sql.start_time_ms, sql.end_time_ms);
    q.result = !sql.error_message_head.empty() ? "failed"
               : sql.end_time_ms >= 0          ? "succeeded"
                                               : "unknown";
  }
  // Stage id -> the jobs listing it, in job id order.
  std::unordered_map<int32_t, std::vector<const model::Job*>> jobs_of_stage;
  for (const auto& [id, job] : model.jobs) {
    for (int32_t stage_id : job.stage_ids) jobs_of_stage[stage_id].push_back(&job);
  }
  size_t stage_index = 0;  // summary.stages is in model.stages order
  for (const auto& [key, stage] : model.stages) {
    StageSummary& stage_summary = summary.stages[stage_index++];
    // The latest job submitted before the attempt (a stage a later job reuses is skipped there);
    // the first job naming it when times are missing.
    int32_t job_id = -1;
    int64_t job_submission = -1;
    auto listed = jobs_of_stage.find(stage.stage_id);
    if (listed == jobs_of_stage.end()) continue;
    for (const model::Job* job : listed->second) {
      if (job_id < 0 || (stage.submission_time_ms >= 0 && job->submission_time_ms >= 0 &&
                         job->submission_time_ms <= stage.submission_time_ms &&
                         job->submission_time_ms >= job_submission)) {
        job_id = job->job_id;
        job_submission = job->submission_time_ms;
      }
    }
    auto found = job_index.find(job_id);
    if (found == job_index.end()) continue;
    JobSummary& j = summary.jobs[found->second];
    stage_summary.job_id = job_id;
    SqlExecutionSummary* sql = nullptr;
    if (j.sql_execution_id >= 0) {
      auto q = summary.sql_executions.find(j.sql_execution_id);
      if (q != summary.sql_executions.end()) sql = &q->second;
    }
    auto [begin, end] = model.TasksOf(stage);
    for (const uint32_t* it = begin; it != end; ++it) {
      const model::TaskAttempt& task = model.tasks[*it];
      if (!task.ended()) continue;
      const bool failed = task.end != model::TaskEndKind::kSuccess;
      ++j.task_attempts;
      j.failed_task_attempts += failed;
      j.totals.Add(task);
      if (sql != nullptr) {
        ++sql->task_attempts;
        sql->failed_task_attempts += failed;
        sql->totals.Add(task);
      }
    }
  }
  return summary;
}

}  // namespace sparkprof::report
