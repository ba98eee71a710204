// state-growth: a stateful streaming query whose state only grows: no watermark, and no state
// row ever removed, so every key it has seen stays in the state store for good. The state's
// memory (the default store keeps it on the executors' heap), its checkpoint and each batch's
// commit grow with it until the executors run out of memory.
//
// Pattern: state rows at the end of the recent batches above those at their start, none removed
// in the run, no watermark in any batch. (A watermark, or a timeout in flatMapGroupsWithState,
// removes rows: the query then has a bound.)
// Figures: growth in rows and bytes per hour over the recent batches; the time until the state's
// memory reaches the heap of the JVMs that run tasks (spark.executor.memory x executors, the
// driver's in local mode) at that pace: the point past which the query must fail.
// Severity: a warning when that point is within a day (a streaming query is meant to run for
// days), else information; capped by its saving like any finding. Impact: how much longer the
// recent batches' second half took than their first (the cost the growing state already adds),
// half of it low.
#include <algorithm>
#include <cmath>
#include <string>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/streaming_batches.h"
#include "analyzer/model/spark_values.h"
#include "common/human_format.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kDayMs = 24LL * 3600 * 1000;
constexpr int64_t kMiB = 1 << 20;

// Heap of the JVMs that run tasks, summed; 0 when the log does not say.
int64_t TaskHeapBytes(const DiagnosisInput& input) {
  const int64_t heap = model::ParseSizeBytes(input.Property(input.TaskHeapKey(), "1g"), kMiB);
  if (heap <= 0) return 0;
  if (input.LocalMode()) return heap;
  int64_t executors = 0;
  for (const model::Executor& e : input.model->executors) executors += e.is_driver() ? 0 : 1;
  return heap * std::max<int64_t>(executors, 1);
}
}  // namespace

void StateGrowth(const DiagnosisInput& input, std::vector<Finding>& out) {
  for (const model::StreamingQueryRun& run : input.model->streaming.runs) {
    if (run.watermark_seen || run.state_operators.empty()) continue;
    const StreamingWindow w = RecentBatches(run);
    if (!w.valid()) continue;
    int64_t removed = 0;
    for (const model::StreamingBatch& b : run.batches) removed += b.state_rows_removed;
    if (removed > 0) continue;
    const model::StreamingBatch& anchor = run.batches[w.first_record - 1];
    const model::StreamingBatch& last = run.batches.back();
    if (anchor.state_rows_total < 0 || last.state_rows_total <= anchor.state_rows_total) continue;
    const int64_t rows_grown = last.state_rows_total - anchor.state_rows_total;
    const int64_t bytes_grown =
        std::max<int64_t>(last.state_memory_bytes - anchor.state_memory_bytes, 0);
    const double per_hour = 3600.0 * 1000.0 / w.span_ms;
    const int64_t heap = TaskHeapBytes(input);
    int64_t until_heap_ms = -1;
    if (heap > last.state_memory_bytes && bytes_grown > 0) {
      until_heap_ms = static_cast<int64_t>(static_cast<double>(heap - last.state_memory_bytes) *
                                           w.span_ms / bytes_grown);
    }
    // The cost already visible: the recent batches' second half against their first.
    int64_t first_half_ms = 0, second_half_ms = 0, first_half_batches = 0, second_half_batches = 0;
    const size_t middle = w.first_record + (w.end_record - w.first_record) / 2;
    for (size_t i = w.first_record; i < w.end_record; ++i) {
      const model::StreamingBatch& b = run.batches[i];
      (i < middle ? first_half_ms : second_half_ms) += b.trigger_execution_ms;
      (i < middle ? first_half_batches : second_half_batches) += b.batches;
    }
    int64_t slower_ms = 0;
    if (first_half_batches > 0 && second_half_batches > 0) {
      const int64_t mean_first = first_half_ms / first_half_batches;
      const int64_t mean_second = second_half_ms / second_half_batches;
      slower_ms = std::max<int64_t>(mean_second - mean_first, 0) * second_half_batches;
    }

    Finding f = NewFinding("state-growth");
    f.severity =
        until_heap_ms >= 0 && until_heap_ms <= kDayMs ? Severity::kWarning : Severity::kInfo;
    f.confidence = {ConfidenceLevel::kHigh,
                    "state rows, removals and memory are Spark's own state operator figures"};
    f.title = QueryLabel(run) +
              "'s state grows without bound: " + std::to_string(last.state_rows_total) +
              " rows, none ever removed, no watermark";
    f.evidence = {
        {"state_rows", static_cast<double>(last.state_rows_total), "count"},
        {"state_rows_grown", static_cast<double>(rows_grown), "count"},
        {"state_memory_bytes", static_cast<double>(last.state_memory_bytes), "bytes"},
        {"state_memory_grown_bytes", static_cast<double>(bytes_grown), "bytes"},
        {"span_ms", static_cast<double>(w.span_ms), "ms"},
        {"state_rows_per_hour", std::round(rows_grown * per_hour), "count"},
        {"task_heap_bytes", static_cast<double>(heap), "bytes"},
        {"until_heap_ms", static_cast<double>(until_heap_ms), "ms"},
    };
    const std::string operators = StateOperatorList(run);
    f.explanation =
        "The query keeps state (" + operators +
        ") and has no watermark, and no batch removed a "
        "state row: every key it has seen stays in the state store. Over its last " +
        std::to_string(w.batches) + " batches (" + HumanDurationMs(w.span_ms) +
        ") the state grew by " + std::to_string(rows_grown) + " rows and " +
        HumanBytes(bytes_grown) + " to " + std::to_string(last.state_rows_total) + " rows in " +
        HumanBytes(last.state_memory_bytes) + " (" +
        std::to_string(static_cast<int64_t>(std::llround(rows_grown * per_hour))) +
        " rows an hour)." +
        (until_heap_ms >= 0 ? " At this pace it fills the " + HumanBytes(heap) +
                                  " of task heap in " + HumanDurationMs(until_heap_ms) + "."
                            : std::string());
    f.recommendations.push_back(
        {"",
         "add .withWatermark(\"<event time column>\", \"<how late data may arrive>\") before "
         "the aggregation, and aggregate by a window of that column",
         "with a watermark Spark drops the state of windows the watermark has passed"});
    f.recommendations.push_back(
        {"spark.sql.streaming.stateStore.providerClass",
         "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
         "keeps the state off the heap (on local disk) while it must stay; it still grows"});
    f.impact = WallTimeSaving(slower_ms / 2, slower_ms, 0,
                              "how much longer the recent batches' second half took than their "
                              "first (mean batch time difference x batches), half of it low");
    AddCostingItsSaving(std::move(f), out);
  }
}

}  // namespace sparkprof::diagnosis::rules
