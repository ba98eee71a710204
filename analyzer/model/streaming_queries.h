// Structured Streaming in the model: each run of a streaming query and its micro-batches, from
// the StreamingQueryListener events (events.h) and joined to the jobs each batch ran.
//
// Bounded for a query that runs for weeks (docs/limits.md): a run keeps at most
// kMaxBatchRecords batch records. When a run reaches that many, neighbouring records are merged
// in pairs and every later record holds twice as many batches: sums (rows, durations, jobs, tasks)
// stay exact, levels (state rows, memory, watermark) are the last batch's of the record. A week of
// 1 s batches (604,800) is kept as 18,900 records of 32 batches (~2.4 MB). The slowest
// kWorstBatches batches of a run are kept whole beside them; at most kMaxStreamingRuns runs are
// kept (later ones are counted).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/eventlog/events.h"

namespace sparkprof::model {

inline constexpr size_t kMaxBatchRecords = 32768;
inline constexpr size_t kWorstBatches = 5;
inline constexpr size_t kMaxStreamingRuns = 1024;
inline constexpr size_t kMaxDescriptionsPerRun = 8;  // distinct sources, state operators kept

// One micro-batch, or `batches` consecutive ones merged (their sums; the last one's levels).
// Durations are Spark's "durationMs" parts, summed; an absent part counts 0.
struct StreamingBatch {
  int64_t first_batch_id = -1;
  int64_t timestamp_ms = -1;  // the first batch's trigger start
  int64_t last_timestamp_ms = -1;
  int64_t input_rows = 0;  // over all sources
  int64_t trigger_execution_ms = 0;
  int64_t latest_offset_ms = 0;  // latestOffset + getOffset (a DSv1 source's name for it)
  int64_t get_batch_ms = 0;
  int64_t query_planning_ms = 0;
  int64_t add_batch_ms = 0;
  int64_t wal_commit_ms = 0;
  int64_t commit_offsets_ms = 0;
  // State, over all stateful operators: rows and memory at the last batch (-1: no stateful
  // operator), rows updated and removed and the commit time summed.
  int64_t state_rows_total = -1;
  int64_t state_memory_bytes = -1;
  int64_t state_rows_updated = 0;
  int64_t state_rows_removed = 0;
  int64_t state_commit_ms = 0;
  int64_t watermark_ms = -1;  // at the last batch; -1: no watermark (or 0 before any event time)
  // The sources' "avgOffsetsBehindLatest" summed (Kafka), at the last batch; -1: not reported.
  double offsets_behind_latest = -1;
  // Joined from the jobs (Finish()): the jobs the batches ran, their tasks, the tasks' run time,
  // and the jobs' wall time (submission to completion, summed: a batch's jobs run one after
  // another from the stream thread, inside its addBatch).
  int32_t jobs = 0;
  int32_t batches = 1;
  int64_t tasks = 0;
  int64_t task_run_time_ms = 0;
  int64_t job_wall_ms = 0;

  int64_t end_ms() const { return last_timestamp_ms + trigger_execution_ms / batches; }
  // Fixed per-batch bookkeeping: everything but addBatch (the batch's own work).
  int64_t bookkeeping_ms() const {
    return latest_offset_ms + get_batch_ms + query_planning_ms + wal_commit_ms + commit_offsets_ms;
  }
};

// One run of a streaming query: a start of its query id (a restart from the checkpoint is a new
// run with the same query id).
struct StreamingQueryRun {
  std::string query_id;
  std::string run_id;
  std::string name;
  int64_t start_time_ms = -1;
  int64_t last_progress_time_ms = -1;
  bool terminated = false;
  std::string exception_head;                // the error that ended it, "" when it stopped cleanly
  std::vector<std::string> sources;          // descriptions, first seen first
  std::vector<std::string> state_operators;  // operator names
  std::string sink;
  int64_t state_shuffle_partitions = -1;  // the state's partitions (fixed by the checkpoint)
  bool watermark_seen = false;            // some batch had a watermark above 0
  int64_t batches_total = 0;              // progress events of this run
  int64_t input_rows_total = 0;
  int64_t idle_events = 0;
  int32_t records_merge_factor = 1;  // batches per record for records added from now on
  std::vector<StreamingBatch> batches;
  std::vector<StreamingBatch> worst_batches;  // slowest first, whole batches
  // The latest batch whole (batches == 1; first_batch_id -1 before any), whatever `batches` merged:
  // the live metrics read it. Its input span: its start - the previous batch's start, the time its
  // rows took to arrive (Spark's inputRowsPerSecond divides by it); -1 for the run's first batch.
  StreamingBatch latest;
  int64_t latest_input_span_ms = -1;
  // The processing-time trigger's interval as Spark's schedule shows it (see
  // streaming_queries.cc, InferTriggerInterval), -1 when the batches do not show one.
  int64_t trigger_interval_ms = -1;
  // Jobs of this run cancelled with its job group (failure_causes.h, IsJobGroupCancellation): the
  // batch that query.stop() (or the query's failure) interrupted.
  int32_t cancelled_jobs = 0;

  // Trigger schedule evidence, kept while batches arrive (bounded; InferTriggerInterval reads it).
  struct ScheduleSample {
    int64_t start_ms;
    int64_t previous_start_ms;
    int64_t previous_end_ms;  // previous start + its triggerExecution
  };
  std::vector<ScheduleSample> waited_starts;  // at most kScheduleSamples
  static constexpr size_t kScheduleSamples = 256;
  int64_t previous_start_ms = -1;
  int64_t previous_end_ms = -1;
  bool previous_waited = false;
};

struct StreamingModel {
  std::vector<StreamingQueryRun> runs;  // in order of first appearance
  int64_t runs_not_kept = 0;            // runs beyond kMaxStreamingRuns (their events counted)
  int64_t progress_events = 0;

  StreamingQueryRun* FindRun(std::string_view run_id);
  const StreamingQueryRun* FindRun(std::string_view run_id) const;
};

// `later` folded into `into` (consecutive batches): sums add, levels are the later batch's.
void MergeBatches(StreamingBatch& into, const StreamingBatch& later);

// What the model builder calls for each streaming event.
void RecordQueryStarted(StreamingModel& model, const eventlog::StreamingQueryStartedEvent& event);
void RecordQueryProgress(StreamingModel& model, const eventlog::StreamingQueryProgressEvent& event);
void RecordQueryIdle(StreamingModel& model, const eventlog::StreamingQueryIdleEvent& event);
void RecordQueryTerminated(StreamingModel& model,
                           const eventlog::StreamingQueryTerminatedEvent& event);

// The interval of a processing-time trigger, from the batches that waited for it: Spark's
// ProcessingTimeExecutor starts the next batch at the first multiple of the interval (since the
// epoch) after the previous batch's start, or at once when the previous batch ran past that
// tick. So for a candidate interval, each batch whose predecessor ended well before the next tick
// must start within a few ms after it; a batch whose predecessor ran into the tick started late,
// off the schedule, and shows nothing about it. -1 unless at least 3 such starts agree on one
// interval.
int64_t InferTriggerInterval(const StreamingQueryRun& run);

}  // namespace sparkprof::model
