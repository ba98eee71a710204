#include "analyzer/model/model_builder.h"

#include <algorithm>
#include <map>
#include <new>
#include <numeric>

#include "analyzer/eventlog/event_parser.h"
#include "analyzer/model/failure_causes.h"

namespace sparkprof::model {

namespace {

constexpr size_t kMaxReasonKeyBytes = 200;

uint32_t ClampMs(int64_t value) {
  if (value <= 0) return 0;
  return value > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(value);
}

uint64_t TaskKey(int64_t task_id, int32_t attempt) {
  return (static_cast<uint64_t>(task_id) << 16) ^ static_cast<uint16_t>(attempt);
}

}  // namespace

uint32_t StringTable::Intern(std::string_view text) {
  auto it = index_.find(std::string(text));
  if (it != index_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(text);
  index_.emplace(strings_.back(), id);
  return id;
}

const char* TaskEndKindName(TaskEndKind kind) {
  switch (kind) {
    case TaskEndKind::kNotEnded:
      return "NotEnded";
    case TaskEndKind::kSuccess:
      return "Success";
    case TaskEndKind::kExceptionFailure:
      return "ExceptionFailure";
    case TaskEndKind::kFetchFailed:
      return "FetchFailed";
    case TaskEndKind::kExecutorLostFailure:
      return "ExecutorLostFailure";
    case TaskEndKind::kTaskKilled:
      return "TaskKilled";
    case TaskEndKind::kResubmitted:
      return "Resubmitted";
    case TaskEndKind::kTaskCommitDenied:
      return "TaskCommitDenied";
    case TaskEndKind::kTaskResultLost:
      return "TaskResultLost";
    case TaskEndKind::kUnknownReason:
      return "UnknownReason";
    case TaskEndKind::kOther:
      return "Other";
  }
  return "Other";
}

TaskEndKind ParseTaskEndKind(std::string_view reason) {
  if (reason == "Success") return TaskEndKind::kSuccess;
  if (reason == "ExceptionFailure") return TaskEndKind::kExceptionFailure;
  if (reason == "FetchFailed") return TaskEndKind::kFetchFailed;
  if (reason == "ExecutorLostFailure") return TaskEndKind::kExecutorLostFailure;
  if (reason == "TaskKilled") return TaskEndKind::kTaskKilled;
  if (reason == "Resubmitted") return TaskEndKind::kResubmitted;
  if (reason == "TaskCommitDenied") return TaskEndKind::kTaskCommitDenied;
  if (reason == "TaskResultLost") return TaskEndKind::kTaskResultLost;
  if (reason == "UnknownReason") return TaskEndKind::kUnknownReason;
  return TaskEndKind::kOther;
}

const char* StageStatusName(StageStatus status) {
  switch (status) {
    case StageStatus::kActive:
      return "active";
    case StageStatus::kComplete:
      return "complete";
    case StageStatus::kFailed:
      return "failed";
    case StageStatus::kPending:
      return "pending";
  }
  return "pending";
}

TaskAttemptMetrics TaskAttemptMetrics::From(const eventlog::TaskMetrics& m) {
  TaskAttemptMetrics out;
  out.executor_cpu_time_ns = m.executor_cpu_time_ns;
  out.executor_deserialize_cpu_time_ns = m.executor_deserialize_cpu_time_ns;
  out.shuffle_write_time_ns = m.shuffle_write_time_ns;
  out.peak_execution_memory_bytes = m.peak_execution_memory_bytes;
  out.result_size_bytes = m.result_size_bytes;
  out.memory_bytes_spilled = m.memory_bytes_spilled;
  out.disk_bytes_spilled = m.disk_bytes_spilled;
  out.shuffle_remote_bytes_read = m.shuffle_remote_bytes_read;
  out.shuffle_local_bytes_read = m.shuffle_local_bytes_read;
  out.shuffle_remote_bytes_read_to_disk = m.shuffle_remote_bytes_read_to_disk;
  out.shuffle_records_read = m.shuffle_records_read;
  out.shuffle_bytes_written = m.shuffle_bytes_written;
  out.shuffle_records_written = m.shuffle_records_written;
  out.input_bytes_read = m.input_bytes_read;
  out.input_records_read = m.input_records_read;
  out.output_bytes_written = m.output_bytes_written;
  out.output_records_written = m.output_records_written;
  out.executor_run_time_ms = ClampMs(m.executor_run_time_ms);
  out.executor_deserialize_time_ms = ClampMs(m.executor_deserialize_time_ms);
  out.jvm_gc_time_ms = ClampMs(m.jvm_gc_time_ms);
  out.result_serialization_time_ms = ClampMs(m.result_serialization_time_ms);
  out.shuffle_fetch_wait_time_ms = ClampMs(m.shuffle_fetch_wait_time_ms);
  out.shuffle_remote_requests_duration_ms = ClampMs(m.shuffle_remote_requests_duration_ms);
  return out;
}

const std::string* ApplicationModel::SparkProperty(std::string_view key) const {
  for (const auto& [k, v] : spark_properties) {
    if (k == key) return &v;
  }
  return nullptr;
}

const Executor* ApplicationModel::FindExecutor(std::string_view executor_id) const {
  for (const Executor& executor : executors) {
    if (executor.executor_id == executor_id) return &executor;
  }
  return nullptr;
}

ModelBuilder::ModelBuilder() = default;

void ModelBuilder::ReserveTaskAttempts(size_t expected) {
  try {
    model_.tasks.reserve(std::min(expected, kMaxReservedTaskAttempts));
  } catch (const std::bad_alloc&) {
    // A hint only: the vector grows as it would have.
  }
}

void ModelBuilder::SeeTime(int64_t timestamp_ms) {
  if (timestamp_ms <= 0) return;
  if (model_.first_event_time_ms < 0 || timestamp_ms < model_.first_event_time_ms) {
    model_.first_event_time_ms = timestamp_ms;
  }
  model_.last_event_time_ms = std::max(model_.last_event_time_ms, timestamp_ms);
}

Executor& ModelBuilder::ExecutorById(std::string_view executor_id) {
  auto it = executor_index_.find(std::string(executor_id));
  if (it != executor_index_.end()) return model_.executors[it->second];
  executor_index_.emplace(std::string(executor_id), model_.executors.size());
  Executor& executor = model_.executors.emplace_back();
  executor.executor_id = std::string(executor_id);
  return executor;
}

StageAttempt& ModelBuilder::Stage(int32_t stage_id, int32_t attempt) {
  auto [it, inserted] = model_.stages.try_emplace({stage_id, attempt});
  if (inserted) {
    it->second.stage_id = stage_id;
    it->second.attempt = attempt;
  }
  return it->second;
}

uint32_t ModelBuilder::TaskIndex(int64_t task_id, int32_t attempt, bool* created) {
  *created = false;
  constexpr int64_t kDenseLimit = 64 << 20;
  bool dense = task_id >= 0 && task_id < kDenseLimit &&
               task_id < 4 * static_cast<int64_t>(model_.tasks.size()) + (1 << 20);
  if (dense) {
    if (static_cast<size_t>(task_id) < task_by_id_.size()) {
      uint32_t index = task_by_id_[task_id];
      if (index != kNone && model_.tasks[index].attempt == attempt) return index;
      if (index != kNone) {  // same TID, other attempt number: rare, keep it in the map
        auto it = sparse_task_by_key_.find(TaskKey(task_id, attempt));
        if (it != sparse_task_by_key_.end()) return it->second;
        uint32_t fresh = static_cast<uint32_t>(model_.tasks.size());
        sparse_task_by_key_.emplace(TaskKey(task_id, attempt), fresh);
        *created = true;
        return fresh;
      }
    } else {
      task_by_id_.resize(std::max<size_t>(task_id + 1, task_by_id_.size() * 2), kNone);
    }
    uint32_t fresh = static_cast<uint32_t>(model_.tasks.size());
    task_by_id_[task_id] = fresh;
    *created = true;
    return fresh;
  }
  auto [it, inserted] = task_by_key_.try_emplace(TaskKey(task_id, attempt),
                                                 static_cast<uint32_t>(model_.tasks.size()));
  *created = inserted;
  return it->second;
}

void ModelBuilder::On(const eventlog::LogStartEvent& event) {
  model_.spark_version = event.spark_version;
}

void ModelBuilder::On(const eventlog::DatabricksMetadataEvent& event) {
  model_.databricks = true;
  if (model_.spark_version.empty()) model_.spark_version = event.spark_version;
  SeeTime(event.timestamp_ms);
}

void ModelBuilder::On(const eventlog::ApplicationStartEvent& event) {
  model_.app_name = event.app_name;
  model_.app_id = event.app_id;
  model_.attempt_id = event.attempt_id;
  model_.user = event.user;
  model_.start_time_ms = event.timestamp_ms;
  model_.saw_application_start = true;
  SeeTime(event.timestamp_ms);
}

void ModelBuilder::On(const eventlog::ApplicationEndEvent& event) {
  model_.complete = true;
  model_.end_time_ms = event.timestamp_ms;
  model_.exit_code = event.exit_code;
  SeeTime(event.timestamp_ms);
}

void ModelBuilder::On(const eventlog::EnvironmentUpdateEvent& event) {
  model_.spark_properties = event.spark_properties;
  model_.jvm_information = event.jvm_information;
  // Logs without ApplicationStart (continuations) still name themselves in their properties.
  if (model_.app_id.empty()) {
    if (const std::string* id = model_.SparkProperty("spark.app.id")) model_.app_id = *id;
  }
  if (model_.app_name.empty()) {
    if (const std::string* name = model_.SparkProperty("spark.app.name")) model_.app_name = *name;
  }
}

void ModelBuilder::On(const eventlog::ResourceProfileAddedEvent& event) {
  ResourceProfile& profile = model_.resource_profiles[event.resource_profile_id];
  profile.id = event.resource_profile_id;
  profile.executor_cores = event.executor_cores;
  profile.executor_memory_mb = event.executor_memory_mb;
  profile.executor_memory_overhead_mb = event.executor_memory_overhead_mb;
  profile.executor_off_heap_mb = event.executor_off_heap_mb;
  profile.task_cpus = event.task_cpus;
}

void ModelBuilder::On(const eventlog::ExecutorAddedEvent& event) {
  ++model_.executor_added_events;
  Executor& executor = ExecutorById(event.executor_id);
  executor.host = event.host;
  executor.total_cores = event.total_cores;
  executor.resource_profile_id = event.resource_profile_id;
  executor.added_time_ms = event.timestamp_ms;
  executor.request_time_ms = event.request_time_ms;
  ++live_executors_;
  model_.max_concurrent_executors = std::max(model_.max_concurrent_executors, live_executors_);
  SeeTime(event.timestamp_ms);
}

void ModelBuilder::On(const eventlog::ExecutorRemovedEvent& event) {
  ++model_.executor_removed_events;
  Executor& executor = ExecutorById(event.executor_id);
  executor.removed_time_ms = event.timestamp_ms;
  executor.removed_reason = event.reason;
  if (live_executors_ > 0) --live_executors_;
  ++model_.executor_removal_reasons[eventlog::FirstLine(event.reason, kMaxReasonKeyBytes)];
  SeeTime(event.timestamp_ms);
}

void ModelBuilder::On(const eventlog::ExclusionEvent& event) {
  model_.exclusions.push_back({event.event_name, event.timestamp_ms, event.executor_or_host,
                               event.stage_id, event.excluded});
  SeeTime(event.timestamp_ms);
}

void ModelBuilder::On(const eventlog::BlockManagerEvent& event) {
  SeeTime(event.timestamp_ms);
  if (!event.added) return;
  // Spark 1.x has no ExecutorAdded for the driver; the block manager still names it.
  auto it = executor_index_.find(event.executor_id);
  if (it != executor_index_.end()) {
    Executor& executor = model_.executors[it->second];
    executor.max_memory_bytes = event.max_memory_bytes;
    if (executor.host.empty()) executor.host = event.host;
  }
}

void ModelBuilder::On(const eventlog::JobStartEvent& event) {
  Job& job = model_.jobs[event.job_id];
  job.job_id = event.job_id;
  job.submission_time_ms = event.submission_time_ms;
  job.stage_ids = event.stage_ids;
  job.sql_execution_id = event.sql_execution_id;
  job.job_group = event.job_group;
  job.description = event.description;
  job.streaming_query_id = event.streaming_query_id;
  job.streaming_batch_id = event.streaming_batch_id;
  for (const eventlog::StageInfo& info : event.stage_infos) {
    StageAttempt& stage = Stage(info.stage_id, info.attempt);
    if (stage.name.empty()) stage.name = info.name;
    if (stage.num_tasks == 0) stage.num_tasks = info.num_tasks;
    if (stage.parent_ids.empty()) stage.parent_ids = info.parent_ids;
    if (stage.details_head.empty()) stage.details_head = info.details_head;
    if (std::find(stage.job_ids.begin(), stage.job_ids.end(), event.job_id) ==
        stage.job_ids.end()) {
      stage.job_ids.push_back(event.job_id);
    }
  }
  if (event.sql_execution_id >= 0) {
    auto sql = model_.sql_executions.find(event.sql_execution_id);
    if (sql != model_.sql_executions.end()) sql->second.job_ids.push_back(event.job_id);
  }
  SeeTime(event.submission_time_ms);
}

void ModelBuilder::On(const eventlog::JobEndEvent& event) {
  Job& job = model_.jobs[event.job_id];
  job.job_id = event.job_id;
  job.completion_time_ms = event.completion_time_ms;
  job.result = event.result;
  job.failure_message_head = event.failure_message_head;
  SeeTime(event.completion_time_ms);
}

void ModelBuilder::On(const eventlog::StageSubmittedEvent& event) {
  const eventlog::StageInfo& info = event.stage;
  StageAttempt& stage = Stage(info.stage_id, info.attempt);
  stage.submitted = true;
  stage.name = info.name;
  stage.details_head = info.details_head;
  stage.num_tasks = info.num_tasks;
  stage.parent_ids = info.parent_ids;
  stage.resource_profile_id = info.resource_profile_id;
  stage.submission_time_ms = info.submission_time_ms;
  stage.scheduler_pool = event.scheduler_pool;
  if (stage.status == StageStatus::kPending) stage.status = StageStatus::kActive;
  SeeTime(info.submission_time_ms);
}

void ModelBuilder::On(const eventlog::StageCompletedEvent& event) {
  const eventlog::StageInfo& info = event.stage;
  StageAttempt& stage = Stage(info.stage_id, info.attempt);
  if (!stage.submitted) ++model_.stage_completions_without_submit;
  stage.completed_event = true;
  if (stage.name.empty()) stage.name = info.name;
  if (stage.num_tasks == 0) stage.num_tasks = info.num_tasks;
  if (stage.parent_ids.empty()) stage.parent_ids = info.parent_ids;
  if (info.submission_time_ms >= 0) stage.submission_time_ms = info.submission_time_ms;
  stage.completion_time_ms = info.completion_time_ms;
  if (info.has_failure_reason) {
    stage.status = StageStatus::kFailed;
    stage.failure_reason = info.failure_reason;
  } else {
    stage.status = StageStatus::kComplete;
  }
  for (const eventlog::CachedRddInfo& info_rdd : info.cached_rdds) {
    CachedRdd& rdd = model_.cached_rdds[info_rdd.rdd_id];
    rdd.rdd_id = info_rdd.rdd_id;
    if (rdd.name.empty()) rdd.name = info_rdd.name;
    rdd.partitions = std::max(rdd.partitions, info_rdd.partitions);
    rdd.max_cached_partitions = std::max(rdd.max_cached_partitions, info_rdd.cached_partitions);
    rdd.max_memory_bytes = std::max(rdd.max_memory_bytes, info_rdd.memory_bytes);
    rdd.max_disk_bytes = std::max(rdd.max_disk_bytes, info_rdd.disk_bytes);
    rdd.use_memory = rdd.use_memory || info_rdd.use_memory;
    rdd.use_disk = rdd.use_disk || info_rdd.use_disk;
    if (rdd.uses.size() < 10000) {
      rdd.uses.push_back({info.stage_id, info.attempt, info_rdd.cached_partitions});
    }
  }
  for (const eventlog::Accumulable& accumulable : info.accumulables) {
    if (!accumulable.has_value) continue;
    stage.accumulables[accumulable.id] = {accumulable.name, accumulable.value, accumulable.is_sql};
    if (accumulable.is_sql) {
      int64_t& latest = sql_metric_values_[accumulable.id];
      latest = std::max(latest, accumulable.value);
    }
  }
  SeeTime(info.completion_time_ms);
}

void ModelBuilder::On(const eventlog::TaskStartEvent& event) {
  ++model_.task_start_events;
  bool created = false;
  uint32_t index = TaskIndex(event.info.task_id, event.info.attempt, &created);
  if (created) model_.tasks.emplace_back();
  Stage(event.stage_id, event.stage_attempt);
  TaskAttempt& task = model_.tasks[index];
  task.task_id = event.info.task_id;
  task.attempt = static_cast<int16_t>(event.info.attempt);
  task.index = event.info.index;
  task.stage_id = event.stage_id;
  task.stage_attempt = static_cast<int16_t>(event.stage_attempt);
  task.launch_time_ms = event.info.launch_time_ms;
  task.executor = model_.strings.Intern(event.info.executor_id);
  task.host = model_.strings.Intern(event.info.host);
  task.locality = event.info.locality;
  task.speculative = event.info.speculative;
  task.has_start = true;
  SeeTime(event.info.launch_time_ms);
}

void ModelBuilder::On(const eventlog::TaskEndEvent& event) {
  ++model_.task_end_events;
  const std::string& reason =
      event.reason.reason.empty() ? std::string("Success") : event.reason.reason;
  ++model_.task_end_reasons[reason];
  bool created = false;
  uint32_t index = TaskIndex(event.info.task_id, event.info.attempt, &created);
  if (created) model_.tasks.emplace_back();
  Stage(event.stage_id, event.stage_attempt);
  TaskAttempt& task = model_.tasks[index];
  const TaskEndKind end = ParseTaskEndKind(reason);
  if (task.end == TaskEndKind::kSuccess && end != TaskEndKind::kSuccess) {
    // A later end for an attempt that already succeeded: "Resubmitted" (its executor's shuffle
    // output was lost, so the map output must be computed again by a new attempt) or a stray
    // duplicate. The work of the successful attempt was done: its record and metrics stay.
    if (end == TaskEndKind::kResubmitted) {
      task.resubmitted = true;
      ++model_.resubmitted_task_ends;
    } else {
      ++model_.duplicate_task_ends;
    }
    return;
  }
  const bool duplicate = task.ended();
  if (duplicate) ++model_.duplicate_task_ends;
  if (!task.has_start) ++model_.task_ends_without_start;
  task.task_id = event.info.task_id;
  task.attempt = static_cast<int16_t>(event.info.attempt);
  task.index = event.info.index;
  task.stage_id = event.stage_id;
  task.stage_attempt = static_cast<int16_t>(event.stage_attempt);
  task.launch_time_ms = event.info.launch_time_ms;
  task.finish_time_ms = event.info.finish_time_ms;
  task.getting_result_time_ms = event.info.getting_result_time_ms;
  task.executor = model_.strings.Intern(event.info.executor_id);
  task.host = model_.strings.Intern(event.info.host);
  task.locality = event.info.locality;
  task.speculative = event.info.speculative;
  task.end = end;
  if (task.end != TaskEndKind::kSuccess) {
    TaskFailure failure;
    failure.reason = reason;
    failure.exception_class = event.reason.exception_class;
    failure.message_head = event.reason.message_head;
    failure.root_cause = event.reason.root_cause;
    if (failure.exception_class.find("OutOfMemoryError") != std::string::npos) {
      auto known = executor_index_.find(event.info.executor_id);
      if (known != executor_index_.end()) {
        model_.executors[known->second].out_of_memory_message = failure.message_head;
      }
    }
    failure.lost_executor_id = event.reason.executor_id;
    failure.exit_caused_by_app = event.reason.exit_caused_by_app;
    failure.fetch_shuffle_id = event.reason.fetch_shuffle_id;
    failure.fetch_host = event.reason.fetch_host;
    task.failure = static_cast<uint32_t>(model_.task_failures.size());
    model_.task_failures.push_back(std::move(failure));
  }
  task.has_metrics = event.has_metrics;
  if (event.has_metrics) task.metrics = TaskAttemptMetrics::From(event.metrics);
  if (task.metrics.peak_execution_memory_bytes == 0 && event.info.photon_peak_memory_bytes > 0) {
    task.metrics.peak_execution_memory_bytes = event.info.photon_peak_memory_bytes;
    task.metrics.photon_peak_memory_largest_operator_bytes =
        event.info.photon_peak_memory_largest_operator_bytes;
    if (!duplicate) ++model_.photon_peak_memory_tasks;
  }
  if (task.metrics.shuffle_write_time_ns == 0 && event.info.photon_shuffle_write_ns > 0) {
    task.metrics.shuffle_write_time_ns = event.info.photon_shuffle_write_ns;
    if (!duplicate) ++model_.photon_shuffle_write_tasks;
  }
  if (event.executor_metrics.present && !event.info.executor_id.empty()) {
    ExecutorById(event.info.executor_id).peaks.MergeMax(event.executor_metrics);
  }
  SeeTime(event.info.finish_time_ms);
}

void ModelBuilder::On(const eventlog::StageExecutorMetricsEvent& event) {
  Stage(event.stage_id, event.stage_attempt)
      .executor_peaks[event.executor_id]
      .MergeMax(event.peaks);
  ExecutorById(event.executor_id).peaks.MergeMax(event.peaks);
}

void ModelBuilder::RegisterSqlMetrics(
    int64_t execution_id, const std::vector<eventlog::SqlExecutionStartEvent::Metric>& metrics) {
  SqlExecution& sql = model_.sql_executions[execution_id];
  for (const auto& metric : metrics) {
    if (sql_metric_owner_.count(metric.accumulator_id) != 0) continue;
    sql_metric_owner_[metric.accumulator_id] = {execution_id, sql.metrics.size()};
    sql.metrics.push_back(
        {metric.accumulator_id, metric.node_name, metric.name, metric.type, 0, false});
  }
}

void ModelBuilder::On(const eventlog::SqlExecutionStartEvent& event) {
  SqlExecution& sql = model_.sql_executions[event.execution_id];
  sql.execution_id = event.execution_id;
  sql.root_execution_id = event.root_execution_id;
  sql.description = event.description;
  sql.details_head = event.details_head;
  sql.physical_plan = event.physical_plan;
  sql.start_time_ms = event.time_ms;
  sql.plan = event.plan;
  RegisterSqlMetrics(event.execution_id, event.metrics);
  SeeTime(event.time_ms);
}

void ModelBuilder::On(const eventlog::SqlExecutionEndEvent& event) {
  SqlExecution& sql = model_.sql_executions[event.execution_id];
  sql.execution_id = event.execution_id;
  sql.end_time_ms = event.time_ms;
  sql.error_message_head = event.error_message_head;
  SeeTime(event.time_ms);
}

void ModelBuilder::On(const eventlog::SqlAdaptiveUpdateEvent& event) {
  SqlExecution& sql = model_.sql_executions[event.execution_id];
  sql.execution_id = event.execution_id;
  if (!event.physical_plan.empty()) sql.physical_plan = event.physical_plan;
  if (!event.plan.empty()) sql.plan = event.plan;
  RegisterSqlMetrics(event.execution_id, event.metrics);
}

void ModelBuilder::On(const eventlog::SqlDriverAccumUpdatesEvent& event) {
  for (const auto& [accumulator_id, value] : event.updates) {
    sql_metric_values_[accumulator_id] = value;
  }
  // A write's driver-side metrics (see SqlWrite): five ids t-4..t-1 and t+1 around the tasks' t.
  if (event.updates.size() == 5) {
    std::vector<int64_t> ids;
    for (const auto& update : event.updates) ids.push_back(update.first);
    std::sort(ids.begin(), ids.end());
    const int64_t first = ids[0];
    if (ids[1] == first + 1 && ids[2] == first + 2 && ids[3] == first + 3 && ids[4] == first + 5) {
      write_driver_updates_[first] = event.execution_id;
    }
  }
}

void ModelBuilder::On(const eventlog::StreamingQueryStartedEvent& event) {
  RecordQueryStarted(model_.streaming, event);
  SeeTime(event.timestamp_ms);
}

void ModelBuilder::On(const eventlog::StreamingQueryProgressEvent& event) {
  RecordQueryProgress(model_.streaming, event);
  SeeTime(event.timestamp_ms);
}

void ModelBuilder::On(const eventlog::StreamingQueryIdleEvent& event) {
  RecordQueryIdle(model_.streaming, event);
  SeeTime(event.timestamp_ms);
}

void ModelBuilder::On(const eventlog::StreamingQueryTerminatedEvent& event) {
  RecordQueryTerminated(model_.streaming, event);
}

void ModelBuilder::On(const eventlog::OtherEvent& event) { SeeTime(event.timestamp_ms); }

// Each micro-batch's jobs, their wall time, tasks and the tasks' run time, added to the record
// holding the batch; and each run's jobs that its stop cancelled. After the stage task index is
// built.
void ModelBuilder::JoinStreamingJobs() {
  ApplicationModel& m = model_;
  if (m.streaming.runs.empty()) return;
  std::unordered_map<std::string_view, StreamingQueryRun*> run_by_id;
  for (StreamingQueryRun& run : m.streaming.runs) run_by_id.emplace(run.run_id, &run);
  for (const auto& [job_id, job] : m.jobs) {
    if (job.job_group.empty()) continue;
    auto found = run_by_id.find(job.job_group);
    if (found == run_by_id.end()) continue;
    StreamingQueryRun& run = *found->second;
    if (job.result == "JobFailed" && IsJobGroupCancellation(job.failure_message_head)) {
      ++run.cancelled_jobs;
    }
    if (job.streaming_batch_id < 0 || run.batches.empty()) continue;
    auto record = std::upper_bound(
        run.batches.begin(), run.batches.end(), job.streaming_batch_id,
        [](int64_t batch_id, const StreamingBatch& b) { return batch_id < b.first_batch_id; });
    if (record == run.batches.begin()) continue;
    --record;
    if (job.streaming_batch_id >= record->first_batch_id + record->batches) continue;
    ++record->jobs;
    if (job.submission_time_ms >= 0 && job.completion_time_ms >= job.submission_time_ms) {
      record->job_wall_ms += job.completion_time_ms - job.submission_time_ms;
    }
    for (int32_t stage_id : job.stage_ids) {
      for (auto it = m.stages.lower_bound({stage_id, 0});
           it != m.stages.end() && it->first.first == stage_id; ++it) {
        const StageAttempt& stage = it->second;
        // A stage shared with an earlier job ran in that job (here it was skipped).
        if (stage.job_ids.empty() || stage.job_ids.front() != job_id) continue;
        auto [begin, end] = m.TasksOf(stage);
        record->tasks += end - begin;
        for (const uint32_t* t = begin; t != end; ++t) {
          record->task_run_time_ms += m.tasks[*t].metrics.executor_run_time_ms;
        }
      }
    }
  }
  for (StreamingQueryRun& run : m.streaming.runs)
    run.trigger_interval_ms = InferTriggerInterval(run);
}

void ModelBuilder::OnEvent(const eventlog::Event& event) {
  std::visit([this](const auto& e) { On(e); }, event);
}

void ModelBuilder::BuildSqlWrites() {
  ApplicationModel& m = model_;
  constexpr std::string_view kTaskCommit = "task commit time";
  std::map<int64_t, SqlWrite> by_task_commit_id;
  for (const auto& [execution_id, sql] : m.sql_executions) {
    for (const SqlMetric& metric : sql.metrics) {
      if (metric.name == kTaskCommit)
        by_task_commit_id[metric.accumulator_id].execution_id = execution_id;
    }
  }
  for (const auto& [key, stage] : m.stages) {
    for (const auto& [id, accumulable] : stage.accumulables) {
      if (accumulable.name != kTaskCommit) continue;
      std::vector<int32_t>& stage_ids = by_task_commit_id[id].stage_ids;
      if (std::find(stage_ids.begin(), stage_ids.end(), key.first) == stage_ids.end())
        stage_ids.push_back(key.first);
    }
  }
  auto value = [&](int64_t id) -> int64_t {
    auto found = sql_metric_values_.find(id);
    return found == sql_metric_values_.end() ? -1 : found->second;
  };
  auto plan_name = [&](int64_t id) -> std::string_view {
    auto owner = sql_metric_owner_.find(id);
    if (owner == sql_metric_owner_.end()) return {};
    return m.sql_executions[owner->second.first].metrics[owner->second.second].name;
  };
  // The SQL execution of the jobs that ran a stage (-1 when none says).
  auto stage_execution = [&](int32_t stage_id) -> int64_t {
    for (const auto& [key, stage] : m.stages) {
      if (key.first != stage_id) continue;
      for (int32_t job_id : stage.job_ids) {
        auto job = m.jobs.find(job_id);
        if (job != m.jobs.end() && job->second.sql_execution_id >= 0)
          return job->second.sql_execution_id;
      }
    }
    return -1;
  };
  for (auto& [task_commit_id, write] : by_task_commit_id) {
    write.task_commit_accumulator_id = task_commit_id;
    write.task_commit_ms = value(task_commit_id);
    int64_t job_execution = write.stage_ids.empty() ? -1 : stage_execution(write.stage_ids.front());
    if (write.execution_id < 0) write.execution_id = job_execution;
    const bool named = plan_name(task_commit_id - 4) == "number of written files" &&
                       plan_name(task_commit_id + 1) == "job commit time";
    bool by_layout = false;
    if (!named) {
      auto update = write_driver_updates_.find(task_commit_id - 4);
      by_layout = update != write_driver_updates_.end() &&
                  (write.execution_id < 0 || write.execution_id == update->second);
      if (by_layout) write.execution_id = update->second;
    }
    if (named || by_layout) {
      write.written_files = value(task_commit_id - 4);
      write.written_bytes = value(task_commit_id - 3);
      write.written_rows = value(task_commit_id - 2);
      write.job_commit_ms = value(task_commit_id + 1);
      write.names_from_layout = by_layout;
    }
    // Write nodes of a plan that AQE replaced before it ran carry no value at all.
    if (write.task_commit_ms < 0 && write.job_commit_ms < 0 && write.written_files < 0) continue;
    m.sql_writes.push_back(std::move(write));
  }
}

ApplicationModel ModelBuilder::Finish() {
  ApplicationModel& m = model_;
  if (m.start_time_ms < 0) m.start_time_ms = m.first_event_time_ms;
  if (m.end_time_ms < 0) m.end_time_ms = m.last_event_time_ms;
  if (m.app_id.empty()) {
    if (const std::string* id = m.SparkProperty("spark.app.id")) m.app_id = *id;
  }

  // SQL metric values: stage accumulables and driver updates, matched to their plan nodes.
  for (const auto& [accumulator_id, value] : sql_metric_values_) {
    auto owner = sql_metric_owner_.find(accumulator_id);
    if (owner == sql_metric_owner_.end()) continue;
    SqlMetric& metric = m.sql_executions[owner->second.first].metrics[owner->second.second];
    metric.value = value;
    metric.has_value = true;
  }

  BuildSqlWrites();

  // Group task indices by stage attempt, in launch order within each stage.
  m.stage_task_order.resize(m.tasks.size());
  std::iota(m.stage_task_order.begin(), m.stage_task_order.end(), 0u);
  std::stable_sort(m.stage_task_order.begin(), m.stage_task_order.end(),
                   [&](uint32_t a, uint32_t b) {
                     const TaskAttempt& x = m.tasks[a];
                     const TaskAttempt& y = m.tasks[b];
                     if (x.stage_id != y.stage_id) return x.stage_id < y.stage_id;
                     if (x.stage_attempt != y.stage_attempt)
                       return x.stage_attempt < y.stage_attempt;
                     return x.launch_time_ms < y.launch_time_ms;
                   });
  size_t position = 0;
  for (auto& [key, stage] : m.stages) {
    while (position < m.stage_task_order.size()) {
      const TaskAttempt& task = m.tasks[m.stage_task_order[position]];
      if (std::make_pair(task.stage_id, static_cast<int32_t>(task.stage_attempt)) >= key) break;
      ++position;
    }
    stage.tasks_begin = static_cast<uint32_t>(position);
    while (position < m.stage_task_order.size()) {
      const TaskAttempt& task = m.tasks[m.stage_task_order[position]];
      if (std::make_pair(task.stage_id, static_cast<int32_t>(task.stage_attempt)) != key) break;
      ++position;
    }
    stage.tasks_end = static_cast<uint32_t>(position);
  }
  JoinStreamingJobs();
  ApplicationModel out = std::move(model_);
  model_ = ApplicationModel{};
  return out;
}

}  // namespace sparkprof::model
