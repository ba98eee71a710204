// The driver side of the live feed: executors' profile batches (schema/profile.fbs, as sent by
// the ExecutorPlugin through PluginContext.send) are verified, merged into one call tree per
// stage attempt and summed into Prometheus metrics; a stage's flame graph is written on request.
//
// Trust: batches come from the network. Each is size-checked, verified with the flatbuffers
// Verifier (table and depth caps) and rate-limited before a field is read; a bad batch is counted
// by reason and dropped. Memory is bounded: nodes per stage tree, stages kept, executors tracked.
//
// Thread safety: every public method may be called from any thread (Spark delivers batches on its
// RPC dispatcher thread, stage completions on a listener thread, scrapes on the exposer thread).
// The dispatcher thread only queues batches (Enqueue); the aggregator's ingest thread folds them.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "driver-aggregator/aggregator_metrics.h"
#include "driver-aggregator/executor_metrics.h"
#include "driver-aggregator/ingest_queue.h"
#include "driver-aggregator/live_application.h"
#include "driver-aggregator/profile_file_writer.h"
#include "driver-aggregator/run_context_metrics.h"
#include "driver-aggregator/s3a_io.h"
#include "driver-aggregator/streaming_metrics.h"
#include "flamegraph/profile_model.h"
#include "metrics/http_exposer.h"
#include "metrics/prometheus_registry.h"

namespace sparkprof::driver {

struct AggregatorOptions {
  // "HOST:PORT" for /metrics; empty = no HTTP endpoint (the registry can still be rendered).
  std::string prometheus_bind_address;
  // Where stage flame graphs go; empty = none are written.
  std::string output_dir;
  size_t max_batch_bytes = size_t{16} << 20;
  uint32_t max_tables_per_batch = 4u << 20;
  // Batches accepted per second over all executors; more are dropped (counted as rate_limited).
  uint32_t max_batches_per_second = 2000;
  // Call-tree nodes per stage attempt; stacks that would grow a full tree fold into "[overflow]".
  size_t max_nodes_per_stage = 200000;
  size_t max_frames_per_stack = 2048;
  // Stage attempts kept in memory; the oldest is evicted first.
  size_t max_stages = 256;
  // Call-tree nodes over all stage attempts kept (~85 bytes each: 4M nodes ~ 340 MiB); past it the
  // least recently fed stages are dropped (their flame graphs are written at stage completion).
  size_t max_total_nodes = 4000000;
  // Cap of the saved profile (profile.sparkprof, every accepted batch); 0 = no profile file.
  uint64_t max_profile_file_bytes = uint64_t{1} << 30;
  // Executors whose cumulative agent health is tracked (to turn it into summed counters).
  size_t max_executors = 20000;
  // Batches queued between Spark's dispatcher thread and the ingest thread (Enqueue): past either
  // bound a batch is dropped and counted as queue_full (docs/limits.md).
  IngestQueueLimits ingest_queue;
  // A stage's flame graph first waits (at most this long) until the batches queued before it
  // are folded, so the graph written at stage end holds the stage's last batches.
  int64_t flamegraph_drain_timeout_ms = 10000;
  // Stage flame graph files written per application (an application of 7,400 stages wrote 1,844);
  // past it a stage's graph is not written (counted; profile.sparkprof still holds its samples:
  // `sparkprof flamegraph profile.sparkprof --stage N` draws it).
  size_t max_flamegraph_files = 1000;
  // The live application model (listener events).
  LiveOptions live;
  // Model-derived metrics (phases, spill, skew, task durations) are recomputed at a scrape when
  // at least this long passed since the last time; counts (tasks, executors) at every scrape.
  int64_t live_refresh_interval_ms = 1000;
  // While the application runs, the phase figures run to the wall clock (false: to the last
  // event, exactly what `sparkprof analyze` computes on the same events; for tests).
  bool live_extend_to_now = true;
  // /metrics serves nothing until SetApplication labelled the registry (the plugin: every series
  // carries application_id and application_name, from the first scrape on).
  bool hold_metrics_until_application = false;
};

// Why a batch was dropped, or that it was taken.
enum class IngestOutcome : uint8_t {
  kAccepted = 0,
  kTooLarge,
  kInvalid,             // not a batch: wrong identifier or failed verification
  kUnsupportedVersion,  // schema_version newer than this build reads
  kRateLimited,
  kQueueFull,  // the ingest queue held its limit of batches or bytes (Enqueue)
};
inline constexpr int kIngestOutcomeCount = 6;
const char* IngestOutcomeName(IngestOutcome outcome);  // "accepted", "too_large", ...

struct StageKey {
  int32_t stage_id = -1;
  int32_t stage_attempt = -1;
  auto operator<=>(const StageKey&) const = default;
};

class DriverAggregator {
 public:
  // Starts the exposer when a bind address is given (bind errors are returned, not thrown).
  static Result<std::unique_ptr<DriverAggregator>> Start(AggregatorOptions options);
  ~DriverAggregator();
  DriverAggregator(const DriverAggregator&) = delete;
  DriverAggregator& operator=(const DriverAggregator&) = delete;

  // Never fails: a bad batch is counted under its outcome and dropped.
  IngestOutcome Ingest(std::span<const uint8_t> bytes);
  // Counts a batch refused for its size without looking at its bytes (kTooLarge).
  IngestOutcome RefuseTooLarge(size_t bytes);
  // The dispatcher thread's path: a batch of `bytes` bytes, written by `fill(destination)` (false
  // when it cannot: counted as invalid), goes into the ingest queue and returns at once; the
  // ingest thread folds it as Ingest() does (its outcome is counted then). kAccepted when queued;
  // kTooLarge, or kQueueFull when the queue is at its limits (counted, never waited for).
  template <typename Fill>
  IngestOutcome Enqueue(size_t bytes, Fill&& fill);
  // Waits until every batch queued before the call was folded (at shutdown, once the executors'
  // final markers arrived). False at the timeout.
  bool DrainIngestQueue(std::chrono::milliseconds timeout);
  size_t max_batch_bytes() const { return options_.max_batch_bytes; }
  // The same, with the clock supplied (for the rate limit), for tests.
  IngestOutcome IngestAt(std::span<const uint8_t> bytes, std::chrono::steady_clock::time_point now);

  // From now on, files go to `<output_dir>/<application_id>/` (characters other than
  // [A-Za-z0-9._-] become '_'), a new profile.sparkprof starts there, and spark_application_info
  // names the application.
  Status SetApplication(const std::string& application_id, const std::string& application_name);
  // Where files go now: the application's directory, or output_dir before SetApplication.
  std::string OutputDirectory() const;

  // Writes `<dir>/stage-<id>-attempt-<n>.html` from what arrived so far -- the ingest queue
  // drained first (bounded by flamegraph_drain_timeout_ms) -- and returns its path. NotFound when
  // no sample of that stage attempt arrived. Also flushes profile.sparkprof. Not from the ingest
  // thread.
  Result<std::string> WriteStageFlameGraph(int32_t stage_id, int32_t stage_attempt);

  // The sparkprof tab of Spark's UI (spark-plugin's SparkProfUi), computed only when a page asks:
  // {"schema": "sparkprof.ui/v1", "source": "live", "profiled_stages": [{stage_id, attempt,
  // sampled_ms}], "agents": [{executor_id, process (host:pid), samples_taken, samples_dropped,
  // native_memory_bytes}],
  // "report": the sparkprof.report/v1 document of the model so far (LiveApplication::
  // AnalysisSoFar), or the end's report.json once written, or null}. Never blocks the ingest
  // thread beyond copying the stage list. However many pages ask, the document is computed one
  // at a time and at most once per kUiJsonMinIntervalMs (later askers get the last one), and at
  // once when the application has ended since.
  std::string LiveUiJson();
  static constexpr int64_t kUiJsonMinIntervalMs = 2000;
  // The stage attempt's flame graph page (the HTML WriteStageFlameGraph writes) from what arrived
  // so far, not written to a file and not counted against max_flamegraph_files. NotFound when no
  // sample of it arrived.
  Result<std::string> StageFlameGraphHtml(StageKey stage) const;
  // The differential flame graph of two stage attempts from what arrived so far (stage_diff.h):
  // `after`'s call tree coloured by the change from `before`'s. NotFound when either has no
  // samples.
  Result<std::string> StageDiffHtml(StageKey before, StageKey after) const;

  // One listener event as an event-log JSON line (no newline): fed to the live model. Returns
  // the reason a line was refused; never throws, never blocks beyond the model's lock.
  Status OnEvent(std::string_view json_line);
  // Recomputes the live metrics now (scrapes do this, throttled). `now_ms`: epoch ms, or -1 for
  // the model as the events describe it.
  void RefreshLiveMetrics(int64_t now_ms);
  // End of the application (once; later calls return the first call's result): final live
  // metrics, then report.txt, report.json, report.md and report.html -- the same analysis and
  // writers as `sparkprof analyze` (its diagnosis reads profile.sparkprof back, as
  // `analyze --profile` does) -- in OutputDirectory(); profile.sparkprof is flushed and sealed
  // (later batches are counted in StatusJson's profile_file_batches_after_report, not written).
  // Returns the report paths.
  Result<std::vector<std::string>> FinishApplication();
  const LiveApplication& live() const { return *live_; }
  const S3aIoTotals& s3a() const { return s3a_; }

  // Total weight (ns) merged for a stage attempt; 0 when unknown. For tests and status.
  uint64_t StageWeightNs(StageKey stage) const;
  uint64_t outcome_count(IngestOutcome outcome) const;
  int port() const { return exposer_ ? exposer_->port() : -1; }
  // Why the /metrics endpoint did not start ("" when it did, or none was asked for). The
  // aggregator runs on without it: reports and flame graphs do not depend on a free port.
  const std::string& metrics_error() const { return metrics_error_; }
  const metrics::PrometheusRegistry& registry() const { return registry_; }
  // One-line JSON: port, batches by outcome, stages, executors.
  std::string StatusJson() const;

 private:
  explicit DriverAggregator(AggregatorOptions options);
  struct StageProfile;
  struct ExecutorHealth;
  struct FoldScratch;
  bool TakeRateToken(std::chrono::steady_clock::time_point now);
  StageProfile& StageFor(StageKey key);
  // Drops the least recently fed stages (never `keep`) while all trees hold more than
  // max_total_nodes nodes.
  void EvictForNodeBudgetLocked(const StageProfile* keep);
  void SaveToProfileFileLocked(std::span<const uint8_t> bytes);
  void Count(IngestOutcome outcome);  // a refusal
  void RefreshLiveMetricsIfDue();     // the registry's collect callback
  void SetApplicationLabels(const std::string& id, const std::string& name);

  const AggregatorOptions options_;
  metrics::PrometheusRegistry registry_;
  AggregatorMetrics metrics_;
  std::unique_ptr<metrics::HttpExposer> exposer_;
  std::string metrics_error_;
  std::unique_ptr<LiveApplication> live_;
  S3aIoTotals s3a_;                            // the executors' S3A statistics
  ExecutorMetrics executor_metrics_;           // under live_metrics_mutex_
  RunContextMetrics run_context_;              // under live_metrics_mutex_
  StreamingMetrics streaming_metrics_;         // under live_metrics_mutex_
  std::unique_ptr<IngestQueue> ingest_queue_;  // stopped first in the destructor

  std::mutex live_metrics_mutex_;  // guards the three below; taken before mutex_, never inside it
  std::chrono::steady_clock::time_point last_live_refresh_{};
  int64_t spill_memory_reported_ = 0;  // what the spill counters hold already
  int64_t spill_disk_reported_ = 0;
  std::once_flag finish_once_;
  Result<std::vector<std::string>> finish_result_{std::vector<std::string>{}};

  std::mutex ui_json_mutex_;  // guards the three below; taken before the others
  std::chrono::steady_clock::time_point ui_json_time_{};
  std::string ui_json_;
  bool ui_json_finished_ = false;  // the application had ended when ui_json_ was made

  mutable std::mutex mutex_;  // guards everything below
  std::map<StageKey, std::unique_ptr<StageProfile>> stages_;
  uint64_t stage_sequence_ = 0;  // for evicting the least recently fed stage
  std::map<std::string, std::unique_ptr<ExecutorHealth>> executors_;
  std::chrono::steady_clock::time_point rate_window_start_{};
  uint32_t rate_window_batches_ = 0;
  uint64_t outcome_counts_[kIngestOutcomeCount] = {};
  std::string application_dir_;
  prometheus::Gauge* application_info_ = nullptr;  // the current application's series
  bool application_labels_set_ = false;            // by SetApplication, else from the events
  ProfileFileWriter profile_file_{options_.max_profile_file_bytes};
  bool profile_file_failed_ = false;  // not retried for every batch
  // Set when the end-of-application report read the file: later batches are not appended.
  bool profile_file_sealed_ = false;
  uint64_t batches_after_report_ = 0;
  std::set<StageKey> flamegraphs_written_;  // at most options_.max_flamegraph_files
  // Every batch's folding reuses these buffers: no allocation per batch once they have grown.
  std::unique_ptr<FoldScratch> fold_scratch_;
};

template <typename Fill>
IngestOutcome DriverAggregator::Enqueue(size_t bytes, Fill&& fill) {
  if (bytes > options_.max_batch_bytes) return RefuseTooLarge(bytes);
  switch (ingest_queue_->Offer(bytes, std::forward<Fill>(fill))) {
    case IngestQueue::Offered::kQueued:
      return IngestOutcome::kAccepted;
    case IngestQueue::Offered::kCopyFailed:
      Count(IngestOutcome::kInvalid);
      return IngestOutcome::kInvalid;
    case IngestQueue::Offered::kFull:
    case IngestQueue::Offered::kStopped:
      break;
  }
  Count(IngestOutcome::kQueueFull);
  return IngestOutcome::kQueueFull;
}

}  // namespace sparkprof::driver
