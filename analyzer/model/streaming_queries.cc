#include "analyzer/model/streaming_queries.h"

#include <algorithm>

namespace sparkprof::model {

namespace {

// A batch may have waited for a trigger when it started this long after the previous batch
// ended: the stream thread starts the next batch at once when there is no wait (a ms or two later
// on an idle driver). Which of these starts did wait is decided per candidate interval
// (InferTriggerInterval): after an overrunning batch the thread's own work (the progress event,
// the next trigger's bookkeeping) took 28 ms on a busy driver (Spark 3.5.9) and 108 ms (4.2.0).
constexpr int64_t kWaitedGapMs = 5;

StreamingQueryRun* NewRun(StreamingModel& model, std::string_view query_id,
                          std::string_view run_id) {
  if (model.runs.size() >= kMaxStreamingRuns) {
    ++model.runs_not_kept;
    return nullptr;
  }
  StreamingQueryRun& run = model.runs.emplace_back();
  run.query_id = std::string(query_id);
  run.run_id = std::string(run_id);
  return &run;
}

void AddDescription(std::vector<std::string>& into, const std::string& text) {
  if (text.empty() || into.size() >= kMaxDescriptionsPerRun) return;
  if (std::find(into.begin(), into.end(), text) == into.end()) into.push_back(text);
}

int64_t Part(int64_t ms) { return ms > 0 ? ms : 0; }

StreamingBatch BatchOf(const eventlog::StreamingQueryProgressEvent& event) {
  StreamingBatch batch;
  batch.first_batch_id = event.batch_id;
  batch.timestamp_ms = event.timestamp_ms;
  batch.last_timestamp_ms = event.timestamp_ms;
  for (const eventlog::StreamingSourceProgress& source : event.sources) {
    batch.input_rows += Part(source.num_input_rows);
    for (const auto& [name, value] : source.metrics) {
      if (name != "avgOffsetsBehindLatest") continue;
      batch.offsets_behind_latest = std::max(batch.offsets_behind_latest, 0.0) + value;
    }
  }
  batch.trigger_execution_ms = Part(event.trigger_execution_ms);
  batch.latest_offset_ms = Part(event.latest_offset_ms) + Part(event.get_offset_ms);
  batch.get_batch_ms = Part(event.get_batch_ms);
  batch.query_planning_ms = Part(event.query_planning_ms);
  batch.add_batch_ms = Part(event.add_batch_ms);
  batch.wal_commit_ms = Part(event.wal_commit_ms);
  batch.commit_offsets_ms = Part(event.commit_offsets_ms);
  for (const eventlog::StreamingStateOperator& op : event.state_operators) {
    batch.state_rows_total = std::max<int64_t>(batch.state_rows_total, 0) + Part(op.num_rows_total);
    batch.state_memory_bytes =
        std::max<int64_t>(batch.state_memory_bytes, 0) + Part(op.memory_used_bytes);
    batch.state_rows_updated += Part(op.num_rows_updated);
    batch.state_rows_removed += Part(op.num_rows_removed);
    batch.state_commit_ms += Part(op.commit_time_ms);
  }
  // Spark writes no "watermark" until the query has one, and 1970-01-01T00:00:00Z (0) until the
  // first event time passed it.
  batch.watermark_ms = event.watermark_ms > 0 ? event.watermark_ms : -1;
  return batch;
}

}  // namespace

void MergeBatches(StreamingBatch& into, const StreamingBatch& later) {
  into.last_timestamp_ms = later.last_timestamp_ms;
  into.input_rows += later.input_rows;
  into.trigger_execution_ms += later.trigger_execution_ms;
  into.latest_offset_ms += later.latest_offset_ms;
  into.get_batch_ms += later.get_batch_ms;
  into.query_planning_ms += later.query_planning_ms;
  into.add_batch_ms += later.add_batch_ms;
  into.wal_commit_ms += later.wal_commit_ms;
  into.commit_offsets_ms += later.commit_offsets_ms;
  into.state_rows_total = later.state_rows_total;
  into.state_memory_bytes = later.state_memory_bytes;
  into.state_rows_updated += later.state_rows_updated;
  into.state_rows_removed += later.state_rows_removed;
  into.state_commit_ms += later.state_commit_ms;
  into.watermark_ms = later.watermark_ms;
  into.offsets_behind_latest = later.offsets_behind_latest;
  into.jobs += later.jobs;
  into.batches += later.batches;
  into.tasks += later.tasks;
  into.task_run_time_ms += later.task_run_time_ms;
  into.job_wall_ms += later.job_wall_ms;
}

namespace {

void Append(StreamingQueryRun& run, const StreamingBatch& batch) {
  if (!run.batches.empty() && run.batches.back().batches < run.records_merge_factor) {
    MergeBatches(run.batches.back(), batch);
    return;
  }
  if (run.batches.size() >= kMaxBatchRecords) {
    // Pairs merged in place: half the records, each twice the batches.
    size_t kept = 0;
    for (size_t i = 0; i < run.batches.size(); i += 2) {
      StreamingBatch pair = run.batches[i];
      if (i + 1 < run.batches.size()) MergeBatches(pair, run.batches[i + 1]);
      run.batches[kept++] = pair;
    }
    run.batches.resize(kept);
    run.records_merge_factor *= 2;
    if (run.batches.back().batches < run.records_merge_factor) {
      MergeBatches(run.batches.back(), batch);
      return;
    }
  }
  run.batches.push_back(batch);
}

void KeepIfWorst(StreamingQueryRun& run, const StreamingBatch& batch) {
  auto slower = [](const StreamingBatch& a, const StreamingBatch& b) {
    return a.trigger_execution_ms > b.trigger_execution_ms;
  };
  if (run.worst_batches.size() == kWorstBatches && !slower(batch, run.worst_batches.back())) {
    return;
  }
  auto at = std::upper_bound(run.worst_batches.begin(), run.worst_batches.end(), batch, slower);
  run.worst_batches.insert(at, batch);
  if (run.worst_batches.size() > kWorstBatches) run.worst_batches.pop_back();
}

void NoteSchedule(StreamingQueryRun& run, const StreamingBatch& batch) {
  const int64_t start = batch.timestamp_ms;
  if (start < 0) return;
  const bool waited = run.previous_end_ms >= 0 && start >= run.previous_end_ms + kWaitedGapMs;
  if (waited && run.waited_starts.size() < StreamingQueryRun::kScheduleSamples) {
    run.waited_starts.push_back({start, run.previous_start_ms, run.previous_end_ms});
  }
  run.previous_waited = waited;
  run.previous_start_ms = start;
  run.previous_end_ms = start + batch.trigger_execution_ms;
}

}  // namespace

StreamingQueryRun* StreamingModel::FindRun(std::string_view run_id) {
  // Runs are few (one per query start); the newest is the likeliest.
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (it->run_id == run_id) return &*it;
  }
  return nullptr;
}

const StreamingQueryRun* StreamingModel::FindRun(std::string_view run_id) const {
  return const_cast<StreamingModel*>(this)->FindRun(run_id);
}

void RecordQueryStarted(StreamingModel& model, const eventlog::StreamingQueryStartedEvent& event) {
  StreamingQueryRun* run = model.FindRun(event.run_id);
  if (run == nullptr) run = NewRun(model, event.query_id, event.run_id);
  if (run == nullptr) return;
  run->name = event.name;
  run->start_time_ms = event.timestamp_ms;
}

void RecordQueryProgress(StreamingModel& model,
                         const eventlog::StreamingQueryProgressEvent& event) {
  ++model.progress_events;
  StreamingQueryRun* run = model.FindRun(event.run_id);
  if (run == nullptr) run = NewRun(model, event.query_id, event.run_id);
  if (run == nullptr) return;
  if (run->name.empty()) run->name = event.name;
  const StreamingBatch batch = BatchOf(event);
  ++run->batches_total;
  run->input_rows_total += batch.input_rows;
  run->last_progress_time_ms = std::max(run->last_progress_time_ms, batch.end_ms());
  for (const eventlog::StreamingSourceProgress& source : event.sources) {
    AddDescription(run->sources, source.description);
  }
  for (const eventlog::StreamingStateOperator& op : event.state_operators) {
    AddDescription(run->state_operators, op.operator_name);
    if (op.num_shuffle_partitions > 0) run->state_shuffle_partitions = op.num_shuffle_partitions;
  }
  if (!event.sink_description.empty()) run->sink = event.sink_description;
  if (batch.watermark_ms > 0) run->watermark_seen = true;
  run->latest_input_span_ms = run->latest.timestamp_ms >= 0 && batch.timestamp_ms >= 0
                                  ? batch.timestamp_ms - run->latest.timestamp_ms
                                  : -1;
  run->latest = batch;
  NoteSchedule(*run, batch);
  KeepIfWorst(*run, batch);
  Append(*run, batch);
}

void RecordQueryIdle(StreamingModel& model, const eventlog::StreamingQueryIdleEvent& event) {
  if (StreamingQueryRun* run = model.FindRun(event.run_id)) ++run->idle_events;
}

void RecordQueryTerminated(StreamingModel& model,
                           const eventlog::StreamingQueryTerminatedEvent& event) {
  StreamingQueryRun* run = model.FindRun(event.run_id);
  if (run == nullptr) return;
  run->terminated = true;
  run->exception_head = event.exception_head;
}

int64_t InferTriggerInterval(const StreamingQueryRun& run) {
  constexpr size_t kMinWaitedStarts = 3;
  if (run.waited_starts.size() < kMinWaitedStarts) return -1;
  // Candidates: the gaps between a waited start and the start before it, to 10 ms.
  std::vector<int64_t> candidates;
  for (const StreamingQueryRun::ScheduleSample& sample : run.waited_starts) {
    if (sample.previous_start_ms < 0) continue;
    const int64_t gap = sample.start_ms - sample.previous_start_ms;
    if (gap >= 100) candidates.push_back((gap + 5) / 10 * 10);
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  // The largest interval nearly every waited start is aligned to: within a tenth of the interval
  // (at most 50 ms) after a multiple of it. A schedule of T is also one of T / 2, so the largest
  // that fits is the trigger's; a source whose data arrives at its own pace aligns to none.
  for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
    const int64_t interval = *it;
    const int64_t tolerance = std::min<int64_t>(50, interval / 10);
    // The previous batch must have ended this long before the tick for its successor to wait for
    // it: the thread's own work after a batch (up to 108 ms measured on a busy driver) cannot
    // then push the start past the tick. A quarter of a short interval keeps most of its starts.
    const int64_t room = std::min<int64_t>(250, interval / 4);
    size_t scheduled = 0, aligned = 0;
    for (const StreamingQueryRun::ScheduleSample& sample : run.waited_starts) {
      if (sample.previous_start_ms < 0) continue;
      const int64_t tick = (sample.previous_start_ms / interval + 1) * interval;
      if (sample.previous_end_ms + room > tick) continue;  // ran into the tick: started late
      ++scheduled;
      if (sample.start_ms % interval <= tolerance) ++aligned;
    }
    // 9 in 10: one start delayed by a GC pause or a busy driver does not hide the schedule.
    if (scheduled >= kMinWaitedStarts && aligned * 10 >= scheduled * 9) return interval;
  }
  return -1;
}

}  // namespace sparkprof::model
