#include "analyzer/eventlog/value_bounds.h"

#include <algorithm>

namespace sparkprof::eventlog {
namespace {

void Time(int64_t& t) { t = std::clamp<int64_t>(t, -1, kMaxTimeMs); }
void Amount(int64_t& v) { v = std::clamp<int64_t>(v, -kMaxAmount, kMaxAmount); }
void Count(int32_t& v) { v = std::clamp<int32_t>(v, 0, kMaxDeclaredCount); }
// Rates and source metrics Spark writes as doubles: within +-kMaxAmount, like the amounts.
void Amount(double& v) {
  v = std::clamp<double>(v, -static_cast<double>(kMaxAmount), static_cast<double>(kMaxAmount));
}

void Bound(StreamingQueryProgressEvent& e) {
  Time(e.timestamp_ms);
  Time(e.watermark_ms);
  Time(e.event_time_min_ms);
  Time(e.event_time_max_ms);
  // Batch ids and durations count up from 0 (-1: absent); a duration is an amount of ms.
  e.batch_id = std::clamp<int64_t>(e.batch_id, -1, kMaxAmount);
  for (int64_t* v : {&e.batch_duration_ms, &e.latest_offset_ms, &e.get_offset_ms, &e.get_batch_ms,
                     &e.query_planning_ms, &e.add_batch_ms, &e.wal_commit_ms, &e.commit_offsets_ms,
                     &e.trigger_execution_ms, &e.sink_num_output_rows}) {
    *v = std::clamp<int64_t>(*v, -1, kMaxAmount);
  }
  for (StreamingStateOperator& op : e.state_operators) {
    for (int64_t* v :
         {&op.num_rows_total, &op.num_rows_updated, &op.num_rows_removed,
          &op.num_rows_dropped_by_watermark, &op.memory_used_bytes, &op.commit_time_ms,
          &op.all_updates_time_ms, &op.num_shuffle_partitions, &op.num_state_store_instances}) {
      *v = std::clamp<int64_t>(*v, -1, kMaxAmount);
    }
    for (auto& metric : op.custom_metrics) Amount(metric.second);
  }
  for (StreamingSourceProgress& source : e.sources) {
    source.num_input_rows = std::clamp<int64_t>(source.num_input_rows, -1, kMaxAmount);
    source.input_rows_per_second =
        std::clamp<double>(source.input_rows_per_second, -1, static_cast<double>(kMaxAmount));
    source.processed_rows_per_second =
        std::clamp<double>(source.processed_rows_per_second, -1, static_cast<double>(kMaxAmount));
    for (auto& metric : source.metrics) Amount(metric.second);
  }
}

void Bound(TaskInfo& info) {
  Time(info.launch_time_ms);
  Time(info.getting_result_time_ms);
  Time(info.finish_time_ms);
  Amount(info.photon_peak_memory_bytes);
  Amount(info.photon_peak_memory_largest_operator_bytes);
  Amount(info.photon_shuffle_write_ns);
}

void Bound(StageInfo& stage) {
  Count(stage.num_tasks);
  Time(stage.submission_time_ms);
  Time(stage.completion_time_ms);
  for (CachedRddInfo& rdd : stage.cached_rdds) {
    Amount(rdd.memory_bytes);
    Amount(rdd.disk_bytes);
  }
}

void Bound(ExecutorMetricPeaks& p) {
  for (int64_t* v :
       {&p.jvm_heap_memory_bytes, &p.jvm_off_heap_memory_bytes, &p.on_heap_execution_memory_bytes,
        &p.off_heap_execution_memory_bytes, &p.on_heap_storage_memory_bytes,
        &p.on_heap_unified_memory_bytes, &p.direct_pool_memory_bytes,
        &p.process_tree_jvm_rss_memory_bytes, &p.process_tree_python_rss_memory_bytes,
        &p.minor_gc_count, &p.minor_gc_time_ms, &p.major_gc_count, &p.major_gc_time_ms,
        &p.total_gc_time_ms}) {
    Amount(*v);
  }
}

void Bound(TaskMetrics& m) {
  for (int64_t* v : {&m.executor_deserialize_time_ms,
                     &m.executor_deserialize_cpu_time_ns,
                     &m.executor_run_time_ms,
                     &m.executor_cpu_time_ns,
                     &m.peak_execution_memory_bytes,
                     &m.result_size_bytes,
                     &m.jvm_gc_time_ms,
                     &m.result_serialization_time_ms,
                     &m.memory_bytes_spilled,
                     &m.disk_bytes_spilled,
                     &m.shuffle_remote_blocks_fetched,
                     &m.shuffle_local_blocks_fetched,
                     &m.shuffle_fetch_wait_time_ms,
                     &m.shuffle_remote_bytes_read,
                     &m.shuffle_remote_bytes_read_to_disk,
                     &m.shuffle_local_bytes_read,
                     &m.shuffle_records_read,
                     &m.shuffle_remote_requests_duration_ms,
                     &m.shuffle_push_merged_remote_bytes_read,
                     &m.shuffle_push_merged_local_bytes_read,
                     &m.shuffle_push_merged_fetch_fallback_count,
                     &m.shuffle_push_corrupt_merged_block_chunks,
                     &m.shuffle_bytes_written,
                     &m.shuffle_write_time_ns,
                     &m.shuffle_records_written,
                     &m.input_bytes_read,
                     &m.input_records_read,
                     &m.output_bytes_written,
                     &m.output_records_written}) {
    Amount(*v);
  }
}

}  // namespace

void BoundValues(Event& event) {
  std::visit(Overloaded{
                 [](LogStartEvent&) {},
                 [](DatabricksMetadataEvent& e) { Time(e.timestamp_ms); },
                 [](ApplicationStartEvent& e) { Time(e.timestamp_ms); },
                 [](ApplicationEndEvent& e) { Time(e.timestamp_ms); },
                 [](EnvironmentUpdateEvent&) {},
                 [](ResourceProfileAddedEvent&) {},  // cores and sizes: kMaxInteger, as read
                 [](ExecutorAddedEvent& e) {
                   Time(e.timestamp_ms);
                   Time(e.request_time_ms);
                   Count(e.total_cores);
                 },
                 [](ExecutorRemovedEvent& e) { Time(e.timestamp_ms); },
                 [](ExclusionEvent& e) { Time(e.timestamp_ms); },
                 [](BlockManagerEvent& e) {
                   Time(e.timestamp_ms);
                   Amount(e.max_memory_bytes);
                 },
                 [](JobStartEvent& e) {
                   Time(e.submission_time_ms);
                   e.streaming_batch_id = std::clamp<int64_t>(e.streaming_batch_id, -1, kMaxAmount);
                   for (StageInfo& stage : e.stage_infos) Bound(stage);
                 },
                 [](JobEndEvent& e) { Time(e.completion_time_ms); },
                 [](StageSubmittedEvent& e) { Bound(e.stage); },
                 [](StageCompletedEvent& e) { Bound(e.stage); },
                 [](TaskStartEvent& e) { Bound(e.info); },
                 [](TaskEndEvent& e) {
                   Bound(e.info);
                   Bound(e.metrics);
                   Bound(e.executor_metrics);
                 },
                 [](StageExecutorMetricsEvent& e) { Bound(e.peaks); },
                 [](SqlExecutionStartEvent& e) { Time(e.time_ms); },
                 [](SqlExecutionEndEvent& e) { Time(e.time_ms); },
                 [](SqlAdaptiveUpdateEvent&) {},
                 [](SqlDriverAccumUpdatesEvent&) {},  // accumulator values: kMaxInteger
                 [](StreamingQueryStartedEvent& e) { Time(e.timestamp_ms); },
                 [](StreamingQueryProgressEvent& e) { Bound(e); },
                 [](StreamingQueryIdleEvent& e) { Time(e.timestamp_ms); },
                 [](StreamingQueryTerminatedEvent&) {},
                 [](OtherEvent& e) { Time(e.timestamp_ms); },
             },
             event);
}

}  // namespace sparkprof::eventlog
