// batch-over-trigger: a query with a processing-time trigger whose recent batches take longer
// than the trigger's interval: the next batch starts late, as soon as the previous one ends
// (Spark logs "Current batch is falling behind" on the driver), so the output's cadence is the
// batch time, not the trigger the query asked for.
//
// The interval: the schedule the run's waiting batches show (model::InferTriggerInterval; the
// event log does not record the trigger). Silent when the batches show none: a query whose
// batches overran the trigger from its first one never waits, and its log cannot tell a 3 s
// trigger from none; what it shows is the batches' own cadence (falling-behind judges that).
// Threshold: half the recent batches' time over the interval (the median batch is over it):
// from then on the trigger no longer paces the query; a minority of slow batches is variation.
// Fix: an interval the batches fit (their 90th percentile, rounded up to a second) -- larger
// batches amortise each batch's fixed cost -- or cheaper batches (batch-overhead names the fixed
// part). Impact: the time the batches ran past their interval, summed: how late their output
// came against the schedule. At most a warning: the query still keeps up (else falling-behind).
#include <algorithm>
#include <string>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/streaming_batches.h"
#include "common/human_format.h"

namespace sparkprof::diagnosis::rules {

void BatchOverTrigger(const DiagnosisInput& input, std::vector<Finding>& out) {
  for (const model::StreamingQueryRun& run : input.model->streaming.runs) {
    const int64_t interval = run.trigger_interval_ms;
    if (interval <= 0) continue;
    const StreamingWindow w = RecentBatches(run);
    if (!w.valid()) continue;
    const int64_t median = BatchDurationPercentileMs(run, w, 50);
    if (median <= interval) continue;
    int64_t over_batches = 0, overrun_ms = 0;
    for (size_t i = w.first_record; i < w.end_record; ++i) {
      const model::StreamingBatch& b = run.batches[i];
      const int64_t mean = b.trigger_execution_ms / b.batches;
      if (mean <= interval) continue;
      over_batches += b.batches;
      overrun_ms += (mean - interval) * b.batches;
    }
    const int64_t p90 = BatchDurationPercentileMs(run, w, 90);
    const int64_t suggested = (p90 + 999) / 1000 * 1000;

    Finding f = NewFinding("batch-over-trigger");
    f.severity = Severity::kWarning;
    f.confidence = {ConfidenceLevel::kMedium,
                    "the trigger interval is read from the batches' start times (the log does "
                    "not record it); batch durations are Spark's own"};
    f.title = QueryLabel(run) + ": batches take " + HumanDurationMs(median) +
              " (median) against a " + HumanDurationMs(interval) + " trigger";
    f.evidence = {
        {"trigger_interval_ms", static_cast<double>(interval), "ms"},
        {"batches", static_cast<double>(w.batches), "count"},
        {"batches_over_trigger", static_cast<double>(over_batches), "count"},
        {"median_batch_ms", static_cast<double>(median), "ms"},
        {"p90_batch_ms", static_cast<double>(p90), "ms"},
        {"overrun_ms", static_cast<double>(overrun_ms), "ms"},
    };
    f.explanation =
        "The query's batches start on a " + HumanDurationMs(interval) +
        " schedule when they can (the batches that waited for their trigger started on "
        "multiples of it), but " +
        std::to_string(over_batches) + " of its last " + std::to_string(w.batches) +
        " batches took longer (median " + HumanDurationMs(median) + ", 90th percentile " +
        HumanDurationMs(p90) +
        "): each of those started the next batch late, as soon as it ended, so the query "
        "runs batch after batch with no pause and its output comes every " +
        HumanDurationMs(median) + ", not every " + HumanDurationMs(interval) +
        ". Together they ran " + HumanDurationMs(overrun_ms) + " past their schedule.";
    f.recommendations.push_back(
        {"trigger", "processingTime=\"" + std::to_string(suggested / 1000) + " seconds\"",
         "the batches' 90th percentile (" + HumanDurationMs(p90) +
             ") rounded up to a second: the schedule the query can keep, and fewer, larger "
             "batches pay the per-batch cost less often"});
    f.recommendations.push_back(
        {"", "or make each batch cheaper (see batch-overhead if it is reported)",
         "a batch within the interval restores the schedule"});
    f.impact = WallTimeSaving(overrun_ms / 2, overrun_ms, 0,
                              "the time the recent batches ran past the trigger interval, "
                              "summed; half of it low");
    AddCostingItsSaving(std::move(f), out);
  }
}

}  // namespace sparkprof::diagnosis::rules
