// slow-source and slow-commit: a busy streaming query whose batches spend most of their time in
// one step that is not their work -- asking the source what is new, or committing the batch --
// so its owner, not the batch's rows, sets the query's pace.
//
// What each of Spark's durationMs parts times, and who owns it: streaming_batches.h (BatchStep).
// The source: latestOffset + getBatch. The commit: the checkpoint's offset and commit logs
// (walCommit + commitOffsets) and the sink's own time on the driver inside addBatch (addBatch -
// the wall time of the batch's jobs).
// Pattern, from first principles (DominantBatchStep): the query busy at least half of its time
// (below that its batches mostly wait for their trigger, and a slow step only delays their
// output) and the step holding at least half of the recent batches' time: they spend more on it
// than on everything else, their rows included. Such bookkeeping is reported here, by owner,
// instead of by batch-overhead (whose fix, a longer trigger, only pays the step less often).
// Fixes: the owner's -- for a file source, fewer files in the directory it lists every batch
// (cleanSource); for Kafka, fewer offset lookups per row (minOffsetsPerTrigger with
// maxTriggerDelay); for the checkpoint, a store with fast small writes (each batch writes two
// files of under 1 KB and renames them: their time is the store's per-operation latency, an
// object store's PUT and COPY) or, with a Kafka sink, asyncProgressTrackingEnabled; for the sink,
// its driver-side commit (fewer files for a file sink's manifest) -- and, for any of them, a
// trigger of 4 x the step a batch pays, so that it takes at most a quarter of each interval (the
// share severity.h counts as critical).
// Impact: the step's time over the recent batches: the owner's fix removes up to all of it, half
// of it low.
#include <algorithm>
#include <cmath>
#include <string>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/streaming_batches.h"
#include "common/human_format.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kTriggerPerStep = 4;

bool AnyStartsWith(const std::vector<std::string>& descriptions, std::string_view prefix) {
  return std::any_of(descriptions.begin(), descriptions.end(),
                     [&](const std::string& d) { return d.starts_with(prefix); });
}

std::string TriggerFor(int64_t step_per_batch_ms, int64_t cadence_ms) {
  const int64_t interval = std::max(kTriggerPerStep * step_per_batch_ms, cadence_ms);
  return "processingTime=\"" + std::to_string((interval + 999) / 1000) + " seconds\"";
}

void SlowSource(const model::StreamingQueryRun& run, const StreamingWindow& w,
                std::vector<Finding>& out) {
  const int64_t per_batch = w.source_ms / w.batches;
  const double share = static_cast<double>(w.source_ms) / w.busy_ms;
  Finding f = NewFinding("slow-source");
  f.severity = Severity::kWarning;
  f.confidence = {ConfidenceLevel::kHigh,
                  "latestOffset and getBatch are Spark's own timings of the source's calls"};
  f.title = QueryLabel(run) + " spends " + Percent(share) +
            " of each batch asking its source for new data (" + HumanDurationMs(per_batch) +
            " a batch)";
  f.evidence = {
      {"batches", static_cast<double>(w.batches), "count"},
      {"busy_ms", static_cast<double>(w.busy_ms), "ms"},
      {"busy_share", std::round(w.busy_share() * 1000) / 1000, "ratio"},
      {"source_ms", static_cast<double>(w.source_ms), "ms"},
      {"source_share", std::round(share * 1000) / 1000, "ratio"},
      {"add_batch_ms", static_cast<double>(w.add_batch_ms), "ms"},
      {"input_rows", static_cast<double>(w.input_rows), "count"},
  };
  const std::string source = run.sources.empty() ? "its source" : run.sources.front();
  f.explanation =
      "Over its last " + std::to_string(w.batches) + " batches the query was busy " +
      Percent(w.busy_share()) + " of the time, and " + HumanDurationMs(w.source_ms) + " of the " +
      HumanDurationMs(w.busy_ms) +
      " its batches took went to the source's steps: latestOffset (asking " + source +
      " for its newest offsets: a Kafka source asks the brokers for every partition's, a file "
      "source lists its directory) and getBatch (building the batch's input from them). The "
      "batches' own work, addBatch, took " +
      HumanDurationMs(w.add_batch_ms) + " for " + std::to_string(w.input_rows) +
      " rows. Each batch pays the source's " + HumanDurationMs(per_batch) +
      " before it reads a row, so the source, not the rows, sets how fast the query goes.";
  if (AnyStartsWith(run.sources, "FileStreamSource")) {
    f.recommendations.push_back(
        {"cleanSource", "archive (with sourceArchiveDir) or delete",
         "a file source lists its whole directory in every batch's latestOffset; processed files "
         "moved out of it leave only new ones to list"});
  } else if (AnyStartsWith(run.sources, "Kafka")) {
    f.recommendations.push_back(
        {"minOffsetsPerTrigger", "the rows a batch should at least read, with maxTriggerDelay",
         "each batch asks the brokers for every partition's latest offset; batches that wait "
         "for enough rows ask less often per row"});
  }
  f.recommendations.push_back(
      {"trigger", TriggerFor(per_batch, w.span_ms / w.batches),
       "4 x the " + HumanDurationMs(per_batch) +
           " the source takes a batch: it then takes at most a quarter of each interval"});
  f.impact = WallTimeSaving(w.source_ms / 2, w.source_ms, 0,
                            "the source's steps over the recent batches (latestOffset + "
                            "getBatch): a faster listing or lookup saves up to all of it; half "
                            "of it low");
  AddCostingItsSaving(std::move(f), out);
}

void SlowCommit(const model::StreamingQueryRun& run, const StreamingWindow& w,
                std::vector<Finding>& out) {
  const int64_t commit_ms = CommitMs(w);
  const int64_t per_batch = commit_ms / w.batches;
  const double share = static_cast<double>(commit_ms) / w.busy_ms;
  const bool checkpoint = w.checkpoint_ms >= w.sink_driver_ms;
  Finding f = NewFinding("slow-commit");
  f.severity = Severity::kWarning;
  f.confidence = {checkpoint ? ConfidenceLevel::kHigh : ConfidenceLevel::kMedium,
                  checkpoint ? "walCommit and commitOffsets are Spark's own timings of the "
                               "checkpoint's writes"
                             : "the sink's driver time is addBatch less the wall time of the "
                               "jobs joined to the batch by their streaming.sql.batchId"};
  f.title = QueryLabel(run) + " spends " + Percent(share) + " of each batch committing it (" +
            HumanDurationMs(per_batch) + " a batch" +
            (checkpoint ? ", most in its checkpoint's writes)" : ", most in its sink's commit)");
  f.evidence = {
      {"batches", static_cast<double>(w.batches), "count"},
      {"busy_ms", static_cast<double>(w.busy_ms), "ms"},
      {"busy_share", std::round(w.busy_share() * 1000) / 1000, "ratio"},
      {"checkpoint_ms", static_cast<double>(w.checkpoint_ms), "ms"},
      {"sink_driver_ms", static_cast<double>(w.sink_driver_ms), "ms"},
      {"commit_ms", static_cast<double>(commit_ms), "ms"},
      {"commit_share", std::round(share * 1000) / 1000, "ratio"},
      {"add_batch_ms", static_cast<double>(w.add_batch_ms), "ms"},
  };
  f.explanation =
      "Over its last " + std::to_string(w.batches) + " batches the query was busy " +
      Percent(w.busy_share()) + " of the time, and " + HumanDurationMs(commit_ms) + " of the " +
      HumanDurationMs(w.busy_ms) +
      " its batches took went to committing them: " + HumanDurationMs(w.checkpoint_ms) +
      " writing the checkpoint's offset and commit logs (walCommit, commitOffsets: two files of "
      "under 1 KB a batch, each written and renamed) and " +
      HumanDurationMs(w.sink_driver_ms) + " in the sink's addBatch outside the batch's jobs (" +
      (run.sink.empty() ? std::string("the sink") : run.sink) +
      " committing on the driver). Each batch pays " + HumanDurationMs(per_batch) +
      " of it whatever its rows.";
  if (checkpoint) {
    f.recommendations.push_back(
        {"checkpointLocation",
         "a file system with fast small writes (HDFS, a local or network disk)",
         "the logs' files are tiny: their time is the store's latency per operation (on an object "
         "store a write is a PUT and the rename a COPY and a DELETE)"});
    if (run.sink.find("Kafka") != std::string::npos) {
      f.recommendations.push_back(
          {"asyncProgressTrackingEnabled", "true",
           "with a Kafka sink (Spark 3.4+) the logs are written beside the next batches, off "
           "their path"});
    }
  } else {
    f.recommendations.push_back(
        {"",
         "make the sink's commit cheaper: fewer, larger output files per batch (a file "
         "sink's manifest and a table format's commit grow with them), or less driver work "
         "in a foreachBatch function",
         "the sink commits on the driver after the batch's jobs, while the next batch waits"});
  }
  f.recommendations.push_back(
      {"trigger", TriggerFor(per_batch, w.span_ms / w.batches),
       "4 x the " + HumanDurationMs(per_batch) +
           " a batch spends committing: it then takes at most a quarter of each interval"});
  f.impact = WallTimeSaving(commit_ms / 2, commit_ms, 0,
                            "the commit's time over the recent batches (checkpoint writes + the "
                            "sink's driver time): a faster store or commit saves up to all of "
                            "it; half of it low");
  AddCostingItsSaving(std::move(f), out);
}
}  // namespace

void SlowBatchStep(const DiagnosisInput& input, std::vector<Finding>& out) {
  for (const model::StreamingQueryRun& run : input.model->streaming.runs) {
    const StreamingWindow w = RecentBatches(run);
    switch (DominantBatchStep(w)) {
      case BatchStep::kSource:
        SlowSource(run, w, out);
        break;
      case BatchStep::kCommit:
        SlowCommit(run, w, out);
        break;
      case BatchStep::kNone:
        break;
    }
  }
}

}  // namespace sparkprof::diagnosis::rules
