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

  void OnLogStart(const eventlog::LogStartEvent& event) override;
  void OnDatabricksMetadata(const eventlog::DatabricksMetadataEvent& event) override;
  void OnApplicationStart(const eventlog::ApplicationStartEvent& event) override;
  void OnApplicationEnd(const eventlog::ApplicationEndEvent& event) override;
  void OnEnvironmentUpdate(const eventlog::EnvironmentUpdateEvent& event) override;
  void OnResourceProfileAdded(const eventlog::ResourceProfileAddedEvent& event) override;
  void OnExecutorAdded(const eventlog::ExecutorAddedEvent& event) override;
  void OnExecutorRemoved(const eventlog::ExecutorRemovedEvent& event) override;
  void OnExclusion(const eventlog::ExclusionEvent& event) override;
  void OnBlockManager(const eventlog::BlockManagerEvent& event) override;
  void OnJobStart(const eventlog::JobStartEvent& event) override;
  void OnJobEnd(const eventlog::JobEndEvent& event) override;
  void OnStageSubmitted(const eventlog::StageSubmittedEvent& event) override;
  void OnStageCompleted(const eventlog::StageCompletedEvent& event) override;
  void OnTaskStart(const eventlog::TaskStartEvent& event) override;
  void OnTaskEnd(const eventlog::TaskEndEvent& event) override;
  void OnStageExecutorMetrics(const eventlog::StageExecutorMetricsEvent& event) override;
  void OnSqlExecutionStart(const eventlog::SqlExecutionStartEvent& event) override;
  void OnSqlExecutionEnd(const eventlog::SqlExecutionEndEvent& event) override;
  void OnSqlAdaptiveUpdate(const eventlog::SqlAdaptiveUpdateEvent& event) override;
  void OnSqlDriverAccumUpdates(const eventlog::SqlDriverAccumUpdatesEvent& event) override;
  void OnOtherEvent(std::string_view event_name, int64_t timestamp_ms) override;

  // Completes derived fields (stage task index, SQL metric values, end time) and hands the
  // model over. The builder is empty afterwards.
  ApplicationModel Finish();

  const ApplicationModel& model() const { return model_; }

 private:
  void SeeTime(int64_t timestamp_ms);
  Executor& ExecutorById(std::string_view executor_id);
  StageAttempt& Stage(int32_t stage_id, int32_t attempt);
  uint32_t TaskIndex(int64_t task_id, int32_t attempt, bool* created);
  void BuildSqlWrites();
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
  // Driver updates with exactly five ids (a write's driver-side metrics; see SqlWrite): the smallest
  // id -> execution id, kept only when the five ids are those of the write layout.
  std::unordered_map<int64_t, int64_t> write_driver_updates_;
  int64_t live_executors_ = 0;
};

}  // namespace sparkprof::model
