// falling-behind: a streaming query whose recent batches took longer than their data took to
// arrive: its processing rate is below its input rate, so each batch is larger and later than the
// one before and the data it outputs grows older without bound.
//
// Figures (streaming_batches.h, the run's recent batches): input rate, processing rate and their
// ratio, the busy share = busy time / span. The query falls behind by (busy share - 1) s every
// second, its backlog grows by (input rate - processing rate) rows every second. Per batch: its
// backlog (the rows waiting when it started: everything that arrived since the batch before took
// its offsets) and its lag (how old its oldest row was when it ended: its end - the previous
// batch's start).
// Pattern, from first principles: the processing rate below the input rate over the recent
// batches (busy time > span: the query spent more time on the rows than they took to arrive),
// and growth that no single batch's variation explains -- either of:
//   * the query fell further behind over the window than one batch takes. A query at capacity
//     (busy share near 1, no trigger) lets one batch run long and the next catch up: its lag
//     moves by up to one batch duration either way;
//   * backlog and lag grew in each of the last kGrowingBatches (3) consecutive batches: a query
//     at capacity catches up in the batch after a slow one (a larger backlog takes longer, the one
//     after it is smaller again), so a backlog and lag rising batch after batch, with the window
//     short of capacity, is the query falling behind, not a slow batch. This needs only 3 batches
//     after the run's first (a run with fewer than the usual window's 4 is judged on its last 3):
//     a query falling behind has few, ever longer batches (each lasts the busy share times the
//     one before), so a short run -- or a slower host -- may hold only a handful.
// Fix: processing capacity for busy share / 0.8 times the rows: a query busy 80% of the time has
// a fifth of its time left for a burst of input or a slow batch, and one at 100% has none.
// Sources with a per-trigger cap (Kafka's maxOffsetsPerTrigger, files' maxFilesPerTrigger)
// bound the batch so its duration stays steady while the backlog waits in the source.
// Impact: the lag the query gained over the window: the delay a query with enough capacity would
// not have added to its output. Critical: the pattern never corrects itself while the input
// rate holds (the saving's share of the run caps it, severity.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/streaming_batches.h"
#include "common/human_format.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kTargetBusyShare = 0.8;
constexpr double kHourMs = 3600.0 * 1000.0;

std::string Rate(double rows_per_s) {
  return std::to_string(static_cast<int64_t>(std::llround(rows_per_s))) + " rows/s";
}
}  // namespace

void FallingBehind(const DiagnosisInput& input, std::vector<Finding>& out) {
  for (const model::StreamingQueryRun& run : input.model->streaming.runs) {
    const FallingBehindPattern pattern = JudgeFallingBehind(run);
    if (!pattern.falling_behind) continue;
    const StreamingWindow& w = pattern.window;
    const int64_t lag_growth_ms = pattern.lag_growth_ms;
    const int64_t growing_batches = pattern.growing_batches;
    const double share = w.busy_share();
    const double input_rate = w.input_rows_per_s();
    const double processed_rate = w.processed_rows_per_s();
    const int64_t slots = input.slots();
    const int64_t target_slots =
        static_cast<int64_t>(std::ceil(slots * share / kTargetBusyShare - 1e-9));
    // At (share - 1) s of lag per s, an hour of lag after this long.
    const int64_t hour_of_lag_after_ms = static_cast<int64_t>(kHourMs / (share - 1));

    Finding f = NewFinding("falling-behind");
    f.severity = Severity::kCritical;
    f.confidence = {ConfidenceLevel::kHigh,
                    "rows and batch times are Spark's own progress figures for every batch"};
    f.title = QueryLabel(run) + " falls behind: it processes " + Rate(processed_rate) + " of the " +
              Rate(input_rate) + " arriving";
    f.evidence = {
        {"batches", static_cast<double>(w.batches), "count"},
        {"input_rows", static_cast<double>(w.input_rows), "count"},
        {"span_ms", static_cast<double>(w.span_ms), "ms"},
        {"busy_ms", static_cast<double>(w.busy_ms), "ms"},
        {"input_rows_per_second", std::round(input_rate), "count"},
        {"processed_rows_per_second", std::round(processed_rate), "count"},
        {"busy_share", std::round(share * 1000) / 1000, "ratio"},
        {"lag_growth_ms", static_cast<double>(lag_growth_ms), "ms"},
        {"backlog_growth_rows_per_second", std::round(input_rate - processed_rate), "count"},
        {"mean_batch_ms", static_cast<double>(w.mean_batch_ms()), "ms"},
        {"growing_batches", static_cast<double>(growing_batches), "count"},
        {"slots", static_cast<double>(slots), "cores"},
    };
    f.explanation =
        "Over batches " + std::to_string(w.first_batch_id) + " to " +
        std::to_string(w.last_batch_id) + " (" + std::to_string(w.batches) + " batches, " +
        std::to_string(w.input_rows) + " rows), " + HumanDurationMs(w.span_ms) + " of input took " +
        HumanDurationMs(w.busy_ms) + " to process: " + Rate(input_rate) + " arrived and " +
        Rate(processed_rate) + " were processed (" +
        std::to_string(static_cast<int64_t>(std::llround(share * 100))) +
        "% of the time needed). Each batch reads what arrived while the previous one ran, so "
        "every batch is larger and later than the one before: the query fell " +
        HumanDurationMs(lag_growth_ms) +
        " further behind in that window, and the backlog grows "
        "by " +
        Rate(input_rate - processed_rate) + "." +
        (growing_batches >= kGrowingBatches
             ? " Its last " + std::to_string(growing_batches) +
                   " batches each started with more rows waiting and ended with its oldest row "
                   "older than the batch before: no batch caught up."
             : std::string()) +
        " At this pace its output is an hour late after " + HumanDurationMs(hour_of_lag_after_ms) +
        " more.";
    const bool capped_source =
        std::any_of(run.sources.begin(), run.sources.end(), [](const std::string& d) {
          return d.starts_with("Kafka") || d.starts_with("FileStreamSource");
        });
    const char* cores_key = input.Manager() == ClusterManager::kStandalone ? "spark.cores.max"
                            : input.LocalMode()                            ? "spark.master"
                                                : "spark.executor.instances";
    const std::string cores_value =
        input.LocalMode() ? "local[" + std::to_string(target_slots) + "]"
        : input.Manager() == ClusterManager::kStandalone
            ? std::to_string(target_slots)
            : "executors for " + std::to_string(target_slots) + " task slots";
    f.recommendations.push_back(
        {cores_key, cores_value,
         std::to_string(slots) + " slots x busy share " +
             std::to_string(static_cast<int64_t>(std::llround(share * 100))) +
             "% / 80% target busy share (a fifth left for bursts)"});
    if (capped_source) {
      f.recommendations.push_back(
          {run.sources.front().starts_with("Kafka") ? "maxOffsetsPerTrigger" : "maxFilesPerTrigger",
           "a batch's worth at " + Rate(processed_rate),
           "bounds each batch so its duration stays steady; the backlog then waits in the source "
           "(visible as its lag) until capacity is added"});
    }
    f.recommendations.push_back(
        {"",
         "make each row cheaper: the batches' tasks ran " + HumanDurationMs(w.task_run_time_ms) +
             " in " + std::to_string(w.tasks) + " tasks; see the stages of its batch jobs",
         "processing capacity is task time per row; halving it doubles the rate"});
    f.impact = WallTimeSaving(lag_growth_ms / 2, lag_growth_ms, 0,
                              "the lag the query gained over the window (busy time - span), "
                              "which enough capacity would not have added; half of it low");
    AddCostingItsSaving(std::move(f), out);
  }
}

}  // namespace sparkprof::diagnosis::rules
