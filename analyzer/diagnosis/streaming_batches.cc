#include "analyzer/diagnosis/streaming_batches.h"

#include <algorithm>
#include <string>
#include <utility>

namespace sparkprof::diagnosis {

StreamingWindow RecentBatches(const model::StreamingQueryRun& run, int64_t min_batches) {
  StreamingWindow window;
  const std::vector<model::StreamingBatch>& records = run.batches;
  if (records.size() < 2) return window;
  // The anchor: the record before the window: the second half's, or earlier so the window holds
  // `min_batches` records when the run has that many after its first; at least record 0 (the
  // run's first batch, never in the window while records hold one batch each).
  const size_t min_records = static_cast<size_t>(std::max<int64_t>(min_batches, 1));
  const size_t half_anchor = std::max<size_t>(records.size() / 2, 1) - 1;
  const size_t min_anchor = records.size() > min_records + 1 ? records.size() - 1 - min_records : 0;
  const size_t anchor = std::min(half_anchor, min_anchor);
  const model::StreamingBatch& first = records[anchor];
  window.first_record = anchor + 1;
  window.end_record = records.size();
  model::StreamingBatch sum = records[window.first_record];
  for (size_t i = window.first_record + 1; i < window.end_record; ++i) {
    model::MergeBatches(sum, records[i]);
  }
  window.batches = sum.batches;
  window.input_rows = sum.input_rows;
  window.busy_ms = sum.trigger_execution_ms;
  window.add_batch_ms = sum.add_batch_ms;
  window.bookkeeping_ms = sum.bookkeeping_ms();
  window.tasks = sum.tasks;
  window.jobs = sum.jobs;
  window.task_run_time_ms = sum.task_run_time_ms;
  window.source_ms = sum.latest_offset_ms + sum.get_batch_ms;
  window.checkpoint_ms = sum.wal_commit_ms + sum.commit_offsets_ms;
  for (size_t i = window.first_record; i < window.end_record; ++i) {
    const model::StreamingBatch& b = records[i];
    if (b.jobs > 0) window.sink_driver_ms += std::max<int64_t>(b.add_batch_ms - b.job_wall_ms, 0);
  }
  window.first_batch_id = records[window.first_record].first_batch_id;
  const model::StreamingBatch& last = records.back();
  window.last_batch_id = last.first_batch_id + last.batches - 1;
  if (first.last_timestamp_ms >= 0 && last.last_timestamp_ms > first.last_timestamp_ms) {
    window.span_ms = last.last_timestamp_ms - first.last_timestamp_ms;
  }
  if (window.batches < min_batches) return StreamingWindow{};
  return window;
}

BatchStep DominantBatchStep(const StreamingWindow& window) {
  if (!window.valid() || window.busy_share() < kOverheadBusyShare) return BatchStep::kNone;
  if (2 * window.source_ms >= window.busy_ms) return BatchStep::kSource;
  if (2 * CommitMs(window) >= window.busy_ms) return BatchStep::kCommit;
  return BatchStep::kNone;
}

namespace {

// How many of the window's last records each had a larger backlog (rows a batch) and a larger lag
// (its end - the start of the record before it) than the record before them, counting the first
// of such a rising run: 3 means the last three rose batch after batch.
int64_t GrowingBatches(const model::StreamingQueryRun& run, const StreamingWindow& w) {
  const std::vector<model::StreamingBatch>& records = run.batches;
  auto lag_ms = [&](size_t i) { return records[i].end_ms() - records[i - 1].last_timestamp_ms; };
  auto backlog = [&](size_t i) { return records[i].input_rows / records[i].batches; };
  int64_t growing = 1;
  for (size_t i = w.end_record - 1; i > w.first_record; --i) {
    if (backlog(i) <= backlog(i - 1) || lag_ms(i) <= lag_ms(i - 1)) break;
    ++growing;
  }
  return growing;
}

}  // namespace

FallingBehindPattern JudgeFallingBehind(const model::StreamingQueryRun& run) {
  FallingBehindPattern pattern;
  // The window every streaming rule reads; on a run too short for it, its last 3 batches.
  pattern.window = RecentBatches(run);
  if (!pattern.window.valid()) pattern.window = RecentBatches(run, kGrowingBatches);
  const StreamingWindow& w = pattern.window;
  if (!w.valid() || w.input_rows == 0) return pattern;
  pattern.lag_growth_ms = w.busy_ms - w.span_ms;
  if (pattern.lag_growth_ms <= 0) return pattern;  // processed as fast as the rows arrived
  pattern.growing_batches = GrowingBatches(run, w);
  pattern.falling_behind =
      pattern.lag_growth_ms > w.mean_batch_ms() || pattern.growing_batches >= kGrowingBatches;
  return pattern;
}

int64_t BatchDurationPercentileMs(const model::StreamingQueryRun& run,
                                  const StreamingWindow& window, int percentile) {
  std::vector<std::pair<int64_t, int64_t>> durations;  // mean ms, batches
  int64_t batches = 0;
  for (size_t i = window.first_record; i < window.end_record; ++i) {
    const model::StreamingBatch& b = run.batches[i];
    durations.emplace_back(b.trigger_execution_ms / b.batches, b.batches);
    batches += b.batches;
  }
  if (batches == 0) return 0;
  std::sort(durations.begin(), durations.end());
  // The smallest duration at or below which `percentile` percent of the batches lie.
  const int64_t rank = std::max<int64_t>((batches * percentile + 99) / 100, 1);
  int64_t seen = 0;
  for (const auto& [ms, count] : durations) {
    seen += count;
    if (seen >= rank) return ms;
  }
  return durations.back().first;
}

std::string QueryLabel(const model::StreamingQueryRun& run) {
  return run.name.empty() ? "query " + run.query_id : "query \"" + run.name + "\"";
}

std::string StateOperatorList(const model::StreamingQueryRun& run) {
  std::string operators;
  for (const std::string& name : run.state_operators) {
    operators += (operators.empty() ? "" : ", ") + name;
  }
  return operators;
}

std::vector<std::pair<int64_t, int64_t>> QueryLifetimes(const model::StreamingModel& streaming,
                                                        int64_t end_ms) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const model::StreamingQueryRun& run : streaming.runs) {
    int64_t start = run.start_time_ms;
    if (!run.batches.empty() && (start < 0 || run.batches.front().timestamp_ms < start)) {
      start = run.batches.front().timestamp_ms;
    }
    if (start < 0) continue;
    int64_t end = end_ms;
    if (run.terminated) {
      end = std::max(run.last_progress_time_ms,
                     run.batches.empty() ? start : run.batches.back().end_ms());
    }
    end = std::min(end, end_ms);
    if (end > start) spans.emplace_back(start, end);
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& span : spans) {
    if (!merged.empty() && span.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, span.second);
    } else {
      merged.push_back(span);
    }
  }
  return merged;
}

}  // namespace sparkprof::diagnosis
