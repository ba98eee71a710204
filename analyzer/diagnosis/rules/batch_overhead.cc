// batch-overhead: a busy streaming query whose batches spend their time on per-batch costs
// rather than on their rows: the fixed bookkeeping of every batch (latestOffset, getBatch,
// queryPlanning, walCommit, commitOffsets: offsets, planning and the checkpoint writes, on the
// driver), or far more tasks than rows (a shuffle's spark.sql.shuffle.partitions on tiny batches:
// every partition is a task, and for a stateful operator a state store loaded and committed).
//
// Only when the batches fill at least half of the query's time (busy share >= 0.5, see
// streaming_batches.h): below that the query waits for its trigger most of the time and its
// per-batch cost delays nothing a user sees. Bookkeeping that one owner holds -- the source's
// offsets or the commit, at least half of the batches' time -- is slow-source's or slow-commit's
// (slow_batch_step.cc), which name that owner's fix.
// Thresholds, from first principles:
//   * bookkeeping >= half of the batches' time: the batches spend more on running a batch than
//     on its rows. Fix: a trigger interval of 4 x the bookkeeping a batch pays, so that it takes
//     at most a quarter of each interval (the share severity.h counts as critical).
//   * more than 2 tasks per slot a batch (the partitions that keep every slot busy with one to
//     balance, as too-many-small-tasks) and fewer rows than tasks: most tasks have no row at
//     all (pigeonhole). Fix: spark.sql.shuffle.partitions = 2 x slots (for a stateful query
//     only with a new checkpoint: the state's partitioning is fixed by its first run).
// Impact: the bookkeeping the longer trigger saves (fewer batches over the same span), or the
// addBatch time of the tasks beyond 2 x slots (addBatch grows with the waves of tasks); half low.
#include <algorithm>
#include <cmath>
#include <string>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/streaming_batches.h"
#include "common/human_format.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kBookkeepingShare = 0.5;
constexpr int64_t kTriggerPerBookkeeping = 4;
}  // namespace

void BatchOverhead(const DiagnosisInput& input, std::vector<Finding>& out) {
  const int64_t slots = input.slots();
  for (const model::StreamingQueryRun& run : input.model->streaming.runs) {
    const StreamingWindow w = RecentBatches(run);
    if (!w.valid() || w.busy_share() < kOverheadBusyShare) continue;
    const double bookkeeping_share = static_cast<double>(w.bookkeeping_ms) / w.busy_ms;
    const int64_t tasks_per_batch = w.tasks / w.batches;
    const int64_t rows_per_batch = w.input_rows / w.batches;
    const int64_t target_tasks = 2 * slots;
    const bool bookkeeping =
        bookkeeping_share >= kBookkeepingShare && DominantBatchStep(w) == BatchStep::kNone;
    const bool empty_tasks = tasks_per_batch > target_tasks && rows_per_batch < tasks_per_batch;
    if (!bookkeeping && !empty_tasks) continue;

    Finding f = NewFinding("batch-overhead");
    f.severity = Severity::kWarning;
    f.confidence = {ConfidenceLevel::kHigh,
                    "batch parts are Spark's own durations; tasks are joined to their batch by "
                    "the jobs' streaming.sql.batchId"};
    f.evidence = {
        {"batches", static_cast<double>(w.batches), "count"},
        {"busy_share", std::round(w.busy_share() * 1000) / 1000, "ratio"},
        {"busy_ms", static_cast<double>(w.busy_ms), "ms"},
        {"bookkeeping_ms", static_cast<double>(w.bookkeeping_ms), "ms"},
        {"add_batch_ms", static_cast<double>(w.add_batch_ms), "ms"},
        {"tasks_per_batch", static_cast<double>(tasks_per_batch), "tasks"},
        {"rows_per_batch", static_cast<double>(rows_per_batch), "count"},
        {"slots", static_cast<double>(slots), "cores"},
    };
    const std::string window = "its last " + std::to_string(w.batches) + " batches";
    int64_t saved_ms = 0;
    std::string method;
    if (empty_tasks) {
      const int64_t partitions =
          run.state_shuffle_partitions > 0 ? run.state_shuffle_partitions : tasks_per_batch;
      f.title = QueryLabel(run) + " runs " + std::to_string(tasks_per_batch) +
                " tasks a batch for " + std::to_string(rows_per_batch) + " rows";
      f.explanation =
          "Each of " + window + " ran " + std::to_string(tasks_per_batch) + " tasks on " +
          std::to_string(slots) + " slots for " + std::to_string(rows_per_batch) +
          " input rows (mean): most tasks had no row, yet each was scheduled, started and, for a "
          "stateful operator, loaded and committed its state store. The batches spent " +
          HumanDurationMs(w.add_batch_ms) + " in addBatch, " +
          std::to_string(static_cast<int64_t>(std::llround(w.busy_share() * 100))) +
          "% of the query's time.";
      std::string reason = std::to_string(slots) + " slots x 2; the shuffle now has " +
                           std::to_string(partitions) + " partitions";
      if (run.state_shuffle_partitions > 0) {
        reason +=
            ". The state's partitions are fixed by the checkpoint: this applies only when the "
            "query starts from a new checkpoint location (its state is rebuilt from there on)";
      }
      f.recommendations.push_back(
          {"spark.sql.shuffle.partitions", std::to_string(target_tasks), reason});
      saved_ms = w.add_batch_ms * (tasks_per_batch - target_tasks) / tasks_per_batch;
      method =
          "addBatch time x the share of tasks beyond 2 x slots (addBatch grows with the "
          "waves of tasks); half of it low";
      f.evidence.push_back({"recommended_partitions", static_cast<double>(target_tasks), "count"});
    } else {
      const int64_t per_batch = w.bookkeeping_ms / w.batches;
      const int64_t cadence = w.span_ms / w.batches;
      const int64_t trigger = std::max(kTriggerPerBookkeeping * per_batch, cadence);
      f.title = QueryLabel(run) + " spends " +
                std::to_string(static_cast<int64_t>(std::llround(bookkeeping_share * 100))) +
                "% of each batch on per-batch bookkeeping";
      f.explanation =
          "Over " + window + ", " + HumanDurationMs(w.bookkeeping_ms) + " of the " +
          HumanDurationMs(w.busy_ms) +
          " they took went to each batch's fixed steps -- finding the new offsets "
          "(latestOffset, getBatch), planning the batch (queryPlanning) and writing the "
          "checkpoint's offset and commit logs (walCommit, commitOffsets) -- and " +
          HumanDurationMs(w.add_batch_ms) +
          " to the batch's own work (addBatch). A batch starts every " + HumanDurationMs(cadence) +
          "; each pays " + HumanDurationMs(per_batch) + " of bookkeeping whatever its rows.";
      f.recommendations.push_back(
          {"trigger", "processingTime=\"" + std::to_string((trigger + 999) / 1000) + " seconds\"",
           "4 x the " + HumanDurationMs(per_batch) +
               " of bookkeeping a batch pays: it then takes at most a quarter of each interval"});
      saved_ms = w.bookkeeping_ms - w.bookkeeping_ms * cadence / std::max<int64_t>(trigger, 1);
      method =
          "the bookkeeping of the batches a longer trigger leaves out (batches over the same "
          "span drop by cadence / new interval); half of it low";
      f.evidence.push_back(
          {"bookkeeping_share", std::round(bookkeeping_share * 1000) / 1000, "ratio"});
    }
    f.impact = WallTimeSaving(saved_ms / 2, saved_ms, 0, method);
    AddCostingItsSaving(std::move(f), out);
  }
}

}  // namespace sparkprof::diagnosis::rules
