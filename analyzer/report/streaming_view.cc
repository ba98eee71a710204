#include "analyzer/report/streaming_view.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/human_format.h"

namespace sparkprof::report {

namespace {

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "0%";
  return std::to_string(static_cast<int64_t>(std::llround(100.0 * part / whole))) + "%";
}

std::string Rate(double rows_per_s) {
  return std::to_string(static_cast<int64_t>(std::llround(rows_per_s))) + " rows/s";
}

}  // namespace

std::vector<StreamingRunView> StreamingViews(const model::ApplicationModel& model) {
  std::vector<StreamingRunView> views;
  for (const model::StreamingQueryRun& run : model.streaming.runs) {
    StreamingRunView view;
    view.run = &run;
    view.label = diagnosis::QueryLabel(run);
    view.status = !run.terminated              ? "no end in the log"
                  : run.exception_head.empty() ? "stopped"
                                               : "failed: " + run.exception_head;
    if (!run.batches.empty()) {
      view.all = run.batches.front();
      for (size_t i = 1; i < run.batches.size(); ++i) {
        model::MergeBatches(view.all, run.batches[i]);
      }
      view.first_state_rows = run.batches.front().state_rows_total;
      const size_t group = (run.batches.size() + kTimelinePoints - 1) / kTimelinePoints;
      for (size_t i = 0; i < run.batches.size(); i += group) {
        model::StreamingBatch point = run.batches[i];
        for (size_t j = i + 1; j < std::min(i + group, run.batches.size()); ++j) {
          model::MergeBatches(point, run.batches[j]);
        }
        view.timeline.push_back(point);
      }
    }
    view.recent = diagnosis::RecentBatches(run);
    views.push_back(std::move(view));
  }
  return views;
}

std::string StreamingHeading(const StreamingRunView& view) {
  const model::StreamingQueryRun& run = *view.run;
  return view.label + " (run " + run.run_id + "): " + std::to_string(run.batches_total) +
         " batches, " + view.status;
}

std::vector<std::string> StreamingLines(const StreamingRunView& view) {
  const model::StreamingQueryRun& run = *view.run;
  const model::StreamingBatch& all = view.all;
  std::vector<std::string> lines;
  std::string sources;
  for (const std::string& source : run.sources) sources += (sources.empty() ? "" : "; ") + source;
  lines.push_back("sources: " + (sources.empty() ? std::string("none reported") : sources) +
                  "; sink: " + (run.sink.empty() ? std::string("none reported") : run.sink));
  lines.push_back("trigger: " + (run.trigger_interval_ms > 0
                                     ? "every " + HumanDurationMs(run.trigger_interval_ms) +
                                           " (read from the batches that waited for it)"
                                     : std::string("not shown by the batches (none, or every "
                                                   "batch longer than it)")));
  lines.push_back(
      std::to_string(run.input_rows_total) + " rows in " + std::to_string(run.batches_total) +
      " batches; the batches ran " + HumanDurationMs(all.trigger_execution_ms) + ": addBatch " +
      Percent(all.add_batch_ms, all.trigger_execution_ms) + ", queryPlanning " +
      Percent(all.query_planning_ms, all.trigger_execution_ms) + ", walCommit " +
      Percent(all.wal_commit_ms, all.trigger_execution_ms) + ", commitOffsets " +
      Percent(all.commit_offsets_ms, all.trigger_execution_ms) + ", latestOffset + getBatch " +
      Percent(all.latest_offset_ms + all.get_batch_ms, all.trigger_execution_ms) + "; " +
      std::to_string(all.jobs) + " jobs, " + std::to_string(all.tasks) + " tasks");
  const diagnosis::StreamingWindow& w = view.recent;
  if (w.valid()) {
    lines.push_back("recent batches " + std::to_string(w.first_batch_id) + "-" +
                    std::to_string(w.last_batch_id) + ": input " + Rate(w.input_rows_per_s()) +
                    ", processed " + Rate(w.processed_rows_per_s()) + ", busy " +
                    Percent(w.busy_ms, w.span_ms) + " of " + HumanDurationMs(w.span_ms) +
                    ", mean batch " + HumanDurationMs(w.mean_batch_ms()) + ", " +
                    std::to_string(w.tasks / w.batches) + " tasks a batch");
  } else {
    lines.push_back("too few batches for recent rates (fewer than " +
                    std::to_string(diagnosis::kMinWindowBatches) + " after the first)");
  }
  if (!run.state_operators.empty()) {
    std::string operators;
    for (const std::string& op : run.state_operators) {
      operators += (operators.empty() ? "" : ", ") + op;
    }
    lines.push_back("state (" + operators + "): " + std::to_string(view.first_state_rows) +
                    " rows after the first batch, " + std::to_string(all.state_rows_total) +
                    " at the last (" + HumanBytes(std::max<int64_t>(all.state_memory_bytes, 0)) +
                    "), " + std::to_string(all.state_rows_removed) + " removed; " +
                    (run.watermark_seen ? "watermark set" : "no watermark") +
                    (run.state_shuffle_partitions > 0
                         ? "; " + std::to_string(run.state_shuffle_partitions) + " state partitions"
                         : std::string()));
  }
  if (all.offsets_behind_latest >= 0) {
    lines.push_back("source offsets behind latest (avgOffsetsBehindLatest) at the last batch: " +
                    std::to_string(static_cast<int64_t>(std::llround(all.offsets_behind_latest))));
  }
  if (!run.worst_batches.empty()) {
    std::string worst;
    for (const model::StreamingBatch& b : run.worst_batches) {
      worst += (worst.empty() ? "" : ", ") + std::to_string(b.first_batch_id) + " (" +
               HumanDurationMs(b.trigger_execution_ms) + ", " + std::to_string(b.input_rows) +
               " rows)";
    }
    lines.push_back("slowest batches: " + worst);
  }
  if (run.cancelled_jobs > 0) {
    lines.push_back(std::to_string(run.cancelled_jobs) +
                    (run.cancelled_jobs == 1 ? " job was" : " jobs were") +
                    " cancelled when the query stopped (the batch in progress; not a failure)");
  }
  if (run.records_merge_factor > 1) {
    lines.push_back("batches kept as " + std::to_string(run.batches.size()) + " records of up to " +
                    std::to_string(run.records_merge_factor) + " batches (docs/limits.md)");
  }
  return lines;
}

}  // namespace sparkprof::report
