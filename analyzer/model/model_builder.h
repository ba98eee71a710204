// Builds an ApplicationModel from typed events in log order. Tolerates what real logs do:
// TaskEnd without TaskStart (rolling-log continuations), TaskStart without TaskEnd (incomplete
// logs), stage retries, duplicate events and events for stages it never saw submitted.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "analyzer/eventlog/events.h"
#include "analyzer/model/application_model.h"

namespace sparkprof::model {

class ModelBuilder final : public eventlog::EventSink {
 public:
  ModelBuilder();

  // Room for about `expected` task attempts (at most kMaxReservedTaskAttempts, <= 61 MB of
  // address space), so that the task vector is allocated once instead of grown by doubling: each
  // growth copies it into fresh pages. An over-estimate costs address space only (pages never
  // written are never faulted in); a reservation that cannot be had is skipped.
  static constexpr size_t kMaxReservedTaskAttempts = size_t{1} << 18;
  void ReserveTaskAttempts(size_t expected);

  void OnEvent(const eventlog::Event& event) override;

  // Completes derived fields (stage task index, SQL metric values, end time) and hands the
  // model over. The builder is empty afterwards.
  ApplicationModel Finish();

  const ApplicationModel& model() const { return model_; }

 private:
  // One per event type (a type without one does not compile); values are within value_bounds.h's
  // bounds.
  void On(const eventlog::LogStartEvent& event);
  void On(const eventlog::DatabricksMetadataEvent& event);
  void On(const eventlog::ApplicationStartEvent& event);
  void On(const eventlog::ApplicationEndEvent& event);
  void On(const eventlog::EnvironmentUpdateEvent& event);
  void On(const eventlog::ResourceProfileAddedEvent& event);
  void On(const eventlog::ExecutorAddedEvent& event);
  void On(const eventlog::ExecutorRemovedEvent& event);
  void On(const eventlog::ExclusionEvent& event);
  void On(const eventlog::BlockManagerEvent& event);
  void On(const eventlog::JobStartEvent& event);
  void On(const eventlog::JobEndEvent& event);
  void On(const eventlog::StageSubmittedEvent& event);
  void On(const eventlog::StageCompletedEvent& event);
  void On(const eventlog::TaskStartEvent& event);
  void On(const eventlog::TaskEndEvent& event);
  void On(const eventlog::StageExecutorMetricsEvent& event);
  void On(const eventlog::SqlExecutionStartEvent& event);
  void On(const eventlog::SqlExecutionEndEvent& event);
  void On(const eventlog::SqlAdaptiveUpdateEvent& event);
  void On(const eventlog::SqlDriverAccumUpdatesEvent& event);
  void On(const eventlog::StreamingQueryStartedEvent& event);
  void On(const eventlog::StreamingQueryProgressEvent& event);
  void On(const eventlog::StreamingQueryIdleEvent& event);
  void On(const eventlog::StreamingQueryTerminatedEvent& event);
  void On(const eventlog::OtherEvent& event);
  void SeeTime(int64_t timestamp_ms);
  Executor& ExecutorById(std::string_view executor_id);
  StageAttempt& Stage(int32_t stage_id, int32_t attempt);
  uint32_t TaskIndex(int64_t task_id, int32_t attempt, bool* created);
  void BuildSqlWrites();
  void JoinStreamingJobs();
  void RegisterSqlMetrics(int64_t execution_id,
                          const std::vector<eventlog::SqlExecutionStartEvent::Metric>& metrics);

  ApplicationModel model_;
  std::unordered_map<std::string, uint32_t> executor_index_;
  // Task ids are dense from 0 in practice: a vector is the fast path, a map the fallback.
  std::vector<uint32_t> task_by_id_;
  std::unordered_map<uint64_t, uint32_t> task_by_key_;
  std::unordered_map<uint64_t, uint32_t> sparse_task_by_key_;
  std::unordered_map<int64_t, int64_t> sql_metric_values_;  // accumulator id -> latest value
  std::unordered_map<int64_t, std::pair<int64_t, size_t>> sql_metric_owner_;  // id -> (exec, slot)
  // Driver updates with exactly five ids (a write's driver-side metrics; see SqlWrite): the
  // smallest id -> execution id, kept only when the five ids are those of the write layout.
  std::unordered_map<int64_t, int64_t> write_driver_updates_;
  int64_t live_executors_ = 0;
};

}  // namespace sparkprof::model
