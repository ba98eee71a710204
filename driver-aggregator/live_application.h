// The driver's live application model. The plugin's listener turns every Spark listener event
// into the JSON line Spark's JsonProtocol writes to the event log; those lines go through the
// SAME event-log parser (analyzer/eventlog) and ModelBuilder (analyzer/model) that
// `sparkprof analyze` uses, so the end-of-application report is the offline report, and the
// live metrics are the engine's numbers (ComputePhaseBreakdown, ComputeStageStats) on the model
// built so far.
//
// Two kinds of figures:
//   * counts that must be current at every scrape (running and pending tasks, executors, slots)
//     are kept incrementally as events pass, O(1) per event;
//   * figures that need the whole model (phases, spill, skew, completed stages' task durations)
//     come from Snapshot(): a copy of the builder, finished, then the engine functions. That is
//     O(tasks); the aggregator calls it at most once per refresh interval (default 1 s).
//
// Values outside physical bounds (times beyond 2^45 ms since the epoch, negative or >= 2^50
// amounts) are clamped before they reach the model, so the engine's sums stay within int64 on a
// broken event; Spark's real values are far inside the bounds (the live/offline equality tests
// use real logs).
//
// Thread safety: every method may be called from any thread (events arrive on Spark's listener
// thread, snapshots are taken on the exposer thread). One mutex guards the parser and builder;
// a snapshot holds it only while copying the builder.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/diagnosis/phase_breakdown.h"
#include "analyzer/eventlog/event_parser.h"
#include "analyzer/model/model_builder.h"
#include "analyzer/report/analysis.h"
#include "common/status.h"

namespace sparkprof::driver {

struct LiveOptions {
  // Longer lines are refused (counted) before parsing; Spark's own lines are a few KB, SQL
  // execution starts with big plans up to a few MB.
  size_t max_line_bytes = size_t{16} << 20;
  // A stage counts for the "current" skew while running and this long after it completed.
  int64_t skew_window_ms = 60'000;
  // Successful tasks a stage needs before its max/median ratio means anything.
  int64_t skew_min_tasks = 5;
  // Bad lines kept (with their error) for the report's input section.
  size_t max_bad_lines_kept = 1000;
};

// What is true right now, kept as events arrive.
struct LiveCounts {
  int64_t running_tasks = 0;   // TaskStart seen, TaskEnd not yet
  int64_t pending_tasks = 0;   // submitted, uncompleted stage attempts: tasks not launched yet
  int64_t executors = 0;       // added and not removed, the driver excluded
  int64_t task_slots = 0;      // cores of those executors (local mode: the driver's cores)
  int64_t events = 0;          // lines parsed into events
  int64_t rejected_lines = 0;  // lines that were not events (bad JSON, too long)
  int64_t stages_completed = 0;
  bool application_ended = false;
};

struct CompletedStage {
  int32_t stage_id = -1;
  int32_t attempt = 0;
  bool write_stage = false;  // diagnosis::StageStats::write_stage
  std::vector<int64_t> successful_task_ms;
  std::vector<std::string> successful_task_executor_ids;  // parallel to successful_task_ms
};

// One executor as the model knows it (the driver excluded).
struct ExecutorSnapshot {
  std::string executor_id;
  bool removed = false;
  std::string removed_reason;
  model::ExecutorMetricPeaks peaks;              // max over its tasks' and stages' peaks
  int64_t peak_task_execution_memory_bytes = 0;  // max "Peak Execution Memory" of its tasks
};

// One run of a streaming query as the live metrics read it (model/streaming_queries.h), with the
// engine's falling-behind judgement (diagnosis/streaming_batches.h) on its recent batches.
struct StreamingRunSnapshot {
  std::string label;    // its name, else its query id
  bool active = false;  // started or progressing, not terminated
  int64_t batches_total = 0;
  int64_t input_rows_total = 0;
  model::StreamingBatch latest;  // first_batch_id -1: no batch yet
  int64_t latest_input_span_ms = -1;
  int64_t trigger_interval_ms = -1;
  double busy_share = -1;  // of the recent batches; -1: too few batches to judge
  bool falling_behind = false;
};

struct LiveSnapshot {
  // False when the application was finished already: only `counts` is filled then.
  bool has_model_figures = false;
  std::string application_id;
  std::string application_name;
  LiveCounts counts;
  int64_t model_end_ms = -1;  // the time the figures run to
  diagnosis::PhaseBreakdown phases;
  int64_t memory_spill_bytes = 0;  // over all task attempts with metrics
  int64_t disk_spill_bytes = 0;
  // Worst max/median task duration over current stages (see LiveApplication::Snapshot); 0 when
  // no current stage has skew_min_tasks successful tasks.
  double worst_skew_ratio = 0;
  int32_t worst_skew_stage_id = -1;
  // Stage attempts that completed since the previous snapshot: each is reported exactly once.
  std::vector<CompletedStage> newly_completed;
  std::vector<ExecutorSnapshot> executors;  // in order of first appearance
  std::vector<std::pair<std::string, std::string>> spark_properties;
  std::vector<StreamingRunSnapshot> streaming_runs;  // in order of first appearance
};

class LiveApplication {
 public:
  explicit LiveApplication(LiveOptions options = {});
  ~LiveApplication();
  LiveApplication(const LiveApplication&) = delete;
  LiveApplication& operator=(const LiveApplication&) = delete;

  // One event-log JSON line (without its newline). A line that is not an event is counted and
  // its error returned; nothing else happens. Lines after Finish() are refused.
  Status OnEventLine(std::string_view line);

  LiveCounts Counts() const;
  // From ApplicationStart (else spark.app.id); empty before either arrived.
  std::string ApplicationId() const;

  // The engine's figures on the model built so far. For an application that has not ended, the
  // model's end is extended to `now_ms` when that is later than the last event (tasks still run
  // and executors are still waited for while no event arrives); pass -1 for the model as the
  // events alone describe it (what `sparkprof analyze` would compute on the lines so far).
  LiveSnapshot Snapshot(int64_t now_ms);

  // The jobs of `job_ids` that have ended, as the report's `jobs[]` entries, with the stage
  // attempts each ran (`stages[]` entries, `job_id` naming the job) and the application's `id`,
  // `name` and `start_ms`: {"application": {...}, "jobs": [...], "stages": [...]}, the figures of
  // the model built so far (a copy, like Snapshot). For OpenTelemetry spans of jobs as they end
  // on a long-running driver (a Spark Connect server). "" once the application has finished: its
  // report has every job then.
  std::string EndedJobsJson(const std::vector<int32_t>& job_ids) const;

  // The complete analysis, built exactly as report::Analyze builds it from a log: the finished
  // model, its summary and diagnosis. `input_name` names the input in the report. Once: later
  // calls return an error. `amend` adds what the live feed measured beyond the events (the
  // executors' S3A statistics) to the finished model before the diagnosis reads it.
  // `profile_path` (optional): the saved profile the diagnosis reads (report::AttachProfile).
  Result<report::Analysis> Finish(const std::string& input_name,
                                  const std::function<void(model::ApplicationModel&)>& amend = {},
                                  const std::string& profile_path = "");
  bool finished() const;

  // The same analysis as Finish on the model built so far, for the sparkprof tab of Spark's UI
  // (computed only when someone opens it): a copy of the builder, finished, diagnosed; nothing
  // here changes. Cheaper than the end's report: no right-sizing frontier, one thread. An error
  // once the application has finished (its report.json is written then).
  Result<report::Analysis> AnalysisSoFar(const std::string& input_name) const;

 private:
  class Tee;
  const LiveOptions options_;
  mutable std::mutex mutex_;  // guards everything below
  model::ModelBuilder builder_;
  std::unique_ptr<Tee> tee_;
  std::unique_ptr<eventlog::EventParser> parser_;
  std::string line_buffer_;  // padded copy of a line for the parser
  eventlog::ReadReport read_;
  LiveCounts counts_;
  bool finished_ = false;
  // Serialises snapshots; guards reported_stages_ (stage attempts in newly_completed already).
  std::mutex snapshot_mutex_;
  std::set<std::pair<int32_t, int32_t>> reported_stages_;
};

}  // namespace sparkprof::driver
