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

  bool valid() const { return batches > 0 && span_ms > 0 && busy_ms > 0; }
  double input_rows_per_s() const { return span_ms > 0 ? input_rows * 1000.0 / span_ms : 0; }
  double processed_rows_per_s() const { return busy_ms > 0 ? input_rows * 1000.0 / busy_ms : 0; }
  double busy_share() const { return span_ms > 0 ? static_cast<double>(busy_ms) / span_ms : 0; }
  int64_t mean_batch_ms() const { return batches > 0 ? busy_ms / batches : 0; }
};

// The recent batches of `run` (see above); an invalid window when the run has fewer than
// kMinWindowBatches batches after its first.
inline constexpr int64_t kMinWindowBatches = 4;
StreamingWindow RecentBatches(const model::StreamingQueryRun& run);

// The window's batches' durations at a percentile (0..100), per record (a merged record counts as
// its batches, each at the record's mean).
int64_t BatchDurationPercentileMs(const model::StreamingQueryRun& run,
                                  const StreamingWindow& window, int percentile);

// A run's label for titles: its name, else its query id.
std::string QueryLabel(const model::StreamingQueryRun& run);

}  // namespace sparkprof::diagnosis
