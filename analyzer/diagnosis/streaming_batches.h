// The figures the streaming rules and the report's streaming section read from a query run's
// recorded batches (model/streaming_queries.h), computed once here so every rule and every
// report says the same number.
//
// The recent batches: the second half of the run's batch records -- or its last kMinWindowBatches
// when the half holds fewer -- and never the run's first batch. The first batch plans the query,
// generates its code and (for a stateful query) creates its state stores -- a one-off the next
// batches do not pay -- and a query's current behaviour is what its recent batches show: a half
// keeps a long run's recent hours, and a short run still has several batches in it.
//
// Rates, as Spark defines its own per batch (progress.scala: inputRowsPerSecond is the batch's
// rows over the time since the previous trigger started, processedRowsPerSecond its rows over
// its own triggerExecution time), summed over the window: the rows of batches after the anchor
// (the record before the window) arrived between the anchor's start and the last batch's start.
//     input rate      = rows / (last start - anchor start)
//     processing rate = rows / (the batches' triggerExecution time, summed)
//     busy share      = input rate / processing rate = busy time / that span
// A busy share above 1 means each batch took longer than the data it read took to arrive: the
// query falls further behind by (busy share - 1) seconds every second.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/model/streaming_queries.h"

namespace sparkprof::diagnosis {

struct StreamingWindow {
  size_t first_record = 0;  // records [first_record, end_record) of run.batches
  size_t end_record = 0;
  int64_t batches = 0;
  int64_t first_batch_id = -1;
  int64_t last_batch_id = -1;
  int64_t input_rows = 0;
  int64_t span_ms = 0;  // anchor start to the last batch's start
  int64_t busy_ms = 0;  // triggerExecution summed
  int64_t add_batch_ms = 0;
  int64_t bookkeeping_ms =
      0;  // latestOffset + getBatch + queryPlanning + walCommit + commitOffsets
  int64_t tasks = 0;
  int64_t jobs = 0;
  int64_t task_run_time_ms = 0;
  // The batch steps' owners (see BatchStep below).
  int64_t source_ms = 0;      // latestOffset + getBatch
  int64_t checkpoint_ms = 0;  // walCommit + commitOffsets
  // addBatch outside the batch's jobs (addBatch - the jobs' wall time), over the records whose
  // jobs the log joined to them: the sink's own work on the driver.
  int64_t sink_driver_ms = 0;

  bool valid() const { return batches > 0 && span_ms > 0 && busy_ms > 0; }
  double input_rows_per_s() const { return span_ms > 0 ? input_rows * 1000.0 / span_ms : 0; }
  double processed_rows_per_s() const { return busy_ms > 0 ? input_rows * 1000.0 / busy_ms : 0; }
  double busy_share() const { return span_ms > 0 ? static_cast<double>(busy_ms) / span_ms : 0; }
  int64_t mean_batch_ms() const { return batches > 0 ? busy_ms / batches : 0; }
};

// The steps of a micro-batch by who owns them, as Spark's MicroBatchExecution times them
// (durationMs, the same parts in 3.5 and 4.x):
//   latestOffset (getOffset for a DSv1 Source in 4.x, which the model does not read): each source
//     asked for its newest offsets -- Kafka: the partitions' latest offsets from the brokers; a
//     file source: listing its directory;
//   getBatch: the sources building the batch's input (a DSv1 source's DataFrame; ~0 for DSv2);
//   walCommit: the batch's offsets written to the checkpoint's offset log, then the sources'
//     commit of the batch before (a file source's cleanSource) and old log entries purged;
//   queryPlanning: the batch planned (the driver);
//   addBatch: the batch's jobs run and written by the sink, its own commit on the driver included
//     (FileStreamSink's manifest, a table format's commit, a foreachBatch function's driver code);
//   commitOffsets: the batch's entry written to the checkpoint's commit log.
// So the source owns latestOffset + getBatch; the commit is the checkpoint's two writes (walCommit
// + commitOffsets) and the sink's time in addBatch outside the batch's jobs.
enum class BatchStep { kNone, kSource, kCommit };

// A query busy at least this share of its time pays for its batches' fixed steps in output it
// does not produce (batch-overhead, slow-source, slow-commit); below it the batches mostly wait
// for their trigger, and a step delays only when their output appears.
inline constexpr double kOverheadBusyShare = 0.5;

// The step that holds at least half of the window's batch time (the batches spend more on it than
// on everything else, their rows included), when the query is busy kOverheadBusyShare of its
// time; kNone otherwise. slow-source and slow-commit report it; batch-overhead leaves such
// bookkeeping to them.
BatchStep DominantBatchStep(const StreamingWindow& window);
inline int64_t CommitMs(const StreamingWindow& w) { return w.checkpoint_ms + w.sink_driver_ms; }

// The recent batches of `run` (see above); an invalid window when the run has fewer than
// `min_batches` batches after its first. A rule that can judge fewer batches (falling-behind's
// growth in every batch) asks for fewer; the others read at least kMinWindowBatches.
inline constexpr int64_t kMinWindowBatches = 4;
StreamingWindow RecentBatches(const model::StreamingQueryRun& run,
                              int64_t min_batches = kMinWindowBatches);

// The falling-behind pattern (rules/falling_behind.cc says why): over the recent batches (on a
// run too short for the usual window, its last kGrowingBatches), the batches took longer than
// their rows took to arrive, by more than one mean batch, or backlog and lag grew in each of the
// last kGrowingBatches. The rule and the driver's live gauge both read this.
inline constexpr int64_t kGrowingBatches = 3;
struct FallingBehindPattern {
  StreamingWindow window;     // the batches judged (invalid: too few)
  int64_t lag_growth_ms = 0;  // busy time - span: how much further behind the query fell
  int64_t growing_batches = 0;
  bool falling_behind = false;
};
FallingBehindPattern JudgeFallingBehind(const model::StreamingQueryRun& run);

// The window's batches' durations at a percentile (0..100), per record (a merged record counts as
// its batches, each at the record's mean).
int64_t BatchDurationPercentileMs(const model::StreamingQueryRun& run,
                                  const StreamingWindow& window, int percentile);

// A run's label for titles: its name, else its query id.
std::string QueryLabel(const model::StreamingQueryRun& run);

// When the application's streaming queries ran, as epoch-ms spans, sorted and disjoint: each run
// from its start to its last batch's end (or its last progress) when it terminated, to `end_ms`
// (the application's end) while it ran on. While a query runs, the time with no task is its
// trigger waits and its batches' driver steps, which the streaming rules judge (driver-bound
// leaves it to them).
std::vector<std::pair<int64_t, int64_t>> QueryLifetimes(const model::StreamingModel& streaming,
                                                        int64_t end_ms);

// A run's state operators' names, comma-separated ("stateStoreSave, dedupe").
std::string StateOperatorList(const model::StreamingQueryRun& run);

}  // namespace sparkprof::diagnosis
