// Figures computed from an ApplicationModel, with exact definitions (docs/report-schema.md):
// what both the JSON and the text report print, and what the diagnosis rules start from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyzer/model/application_model.h"

namespace sparkprof::report {

// Sums over every TaskEnd that carries metrics, failed attempts included.
struct Totals {
  int64_t task_attempts_with_metrics = 0;
  int64_t executor_run_time_ms = 0;
  int64_t executor_cpu_time_ns = 0;
  int64_t executor_deserialize_time_ms = 0;
  int64_t result_serialization_time_ms = 0;
  int64_t jvm_gc_time_ms = 0;
  int64_t memory_bytes_spilled = 0;
  int64_t disk_bytes_spilled = 0;
  int64_t shuffle_read_bytes = 0;  // remote + local
  int64_t shuffle_remote_bytes_read = 0;
  int64_t shuffle_fetch_wait_time_ms = 0;
  int64_t shuffle_write_bytes = 0;
  int64_t shuffle_write_time_ns = 0;
  int64_t input_bytes = 0;
  int64_t output_bytes = 0;
  // Of one task. Photon tasks: their operators' peaks summed (an upper bound; the next field has
  // the largest operator's, a lower bound); counts.photon_peak_memory_tasks says how many.
  int64_t peak_execution_memory_bytes_max = 0;
  int64_t photon_peak_memory_largest_operator_bytes_max = 0;

  void Add(const model::TaskAttempt& task);
};

// Nearest-rank percentiles: the value at position ceil(p * n) in ascending order.
struct Percentiles {
  int64_t p50 = 0;
  int64_t p95 = 0;
  int64_t max = 0;
  int64_t count = 0;
};
Percentiles ComputePercentiles(std::vector<int64_t> values);

struct StageSummary {
  int32_t stage_id = -1;
  int32_t attempt = 0;
  // The job that ran the attempt (JobSummary's rule below); -1 when no reported job lists it.
  int32_t job_id = -1;
  std::string name;
  int32_t num_tasks = 0;
  std::string status;
  int64_t submission_ms = -1;
  int64_t completion_ms = -1;
  int64_t duration_ms = -1;  // completion - submission when both are known
  std::string failure_reason;
  int64_t task_attempts = 0;         // ended attempts in this stage attempt
  int64_t failed_task_attempts = 0;  // ended with anything but Success
  Percentiles task_duration_ms;      // over ended attempts (launch to finish)
  Totals totals;
};

struct Counts {
  int64_t jobs = 0;                   // distinct job ids started
  int64_t stages = 0;                 // distinct stage ids submitted
  int64_t stage_attempts = 0;         // distinct (stage id, attempt) submitted
  int64_t failed_stage_attempts = 0;  // StageCompleted with a "Failure Reason"
  int64_t task_attempts = 0;          // distinct (task id, attempt) with a TaskEnd
  int64_t speculative_task_attempts = 0;
  int64_t sql_executions = 0;  // distinct SQLExecutionStart ids
  int64_t failed_jobs = 0;
  int64_t task_start_without_end = 0;
  int64_t task_end_without_start = 0;
  int64_t resubmitted_tasks = 0;  // successful attempts whose shuffle output was lost (Resubmitted)
  int64_t photon_peak_memory_tasks = 0;    // peak memory from Photon's operator peaks (model)
  int64_t photon_shuffle_write_tasks = 0;  // shuffle write time from Photon's timings (model)
};

struct ExecutorCounts {
  int64_t added = 0;    // ExecutorAdded events
  int64_t removed = 0;  // ExecutorRemoved events
  int64_t max_concurrent = 0;
  std::map<std::string, int64_t> removal_reasons;  // first line of the reason: count
};

// One job, as JobStart/JobEnd describe it, with the figures of the stage attempts it ran. A stage
// attempt belongs to one job: the latest job listing its stage id that was submitted before it
// (a stage reused by a later job is skipped there and runs no tasks).
struct JobSummary {
  int32_t job_id = -1;
  std::string description;  // spark.job.description (setJobDescription), else ""
  std::string job_group;
  int64_t sql_execution_id = -1;
  std::vector<int32_t> stage_ids;  // as JobStart lists them (skipped stages included)
  int64_t submission_ms = -1;
  int64_t completion_ms = -1;
  int64_t duration_ms = -1;
  std::string result;          // "succeeded", "failed", "unknown" (no JobEnd)
  std::string failure_reason;  // first line of the JobFailed exception message
  int64_t task_attempts = 0;
  int64_t failed_task_attempts = 0;
  Totals totals;
};

// One SQL execution (SQLExecutionStart/End) with the figures of its jobs' stage attempts.
struct SqlExecutionSummary {
  int64_t execution_id = -1;
  int64_t duration_ms = -1;
  std::string result;  // "succeeded", "failed" (an error message), "unknown" (no end event)
  int64_t task_attempts = 0;
  int64_t failed_task_attempts = 0;
  Totals totals;
};

struct ApplicationSummary {
  Counts counts;
  ExecutorCounts executors;
  std::map<std::string, int64_t> task_end_reasons;
  Totals totals;
  std::vector<StageSummary> stages;                       // by (stage id, attempt)
  std::vector<JobSummary> jobs;                           // by job id
  std::map<int64_t, SqlExecutionSummary> sql_executions;  // by execution id
};

ApplicationSummary Summarize(const model::ApplicationModel& model);

}  // namespace sparkprof::report
