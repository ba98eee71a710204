#include "driver-aggregator/streaming_metrics.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "driver-aggregator/run_context_metrics.h"

namespace sparkprof::driver {
namespace {

// The batch's steps, Spark's durationMs names in snake case, and where the model keeps each.
constexpr std::array<std::pair<const char*, int64_t model::StreamingBatch::*>, 6> kSteps = {{
    {"latest_offset", &model::StreamingBatch::latest_offset_ms},
    {"get_batch", &model::StreamingBatch::get_batch_ms},
    {"query_planning", &model::StreamingBatch::query_planning_ms},
    {"add_batch", &model::StreamingBatch::add_batch_ms},
    {"wal_commit", &model::StreamingBatch::wal_commit_ms},
    {"commit_offsets", &model::StreamingBatch::commit_offsets_ms},
}};

double Seconds(int64_t ms) { return static_cast<double>(ms) / 1e3; }

void RemoveChild(prometheus::Family<prometheus::Gauge>* family, const prometheus::Labels& labels) {
  if (family->Has(labels)) family->Remove(&family->Add(labels));
}

}  // namespace

struct StreamingMetrics::Levels {
  bool present = false;  // some active run of the label has a batch
  double input_rows_per_s = 0;
  double processed_rows_per_s = 0;
  double batch_s = 0;
  std::array<double, kSteps.size()> step_s{};
  double state_rows = -1;  // -1: no stateful operator
  double state_bytes = -1;
  double watermark_lag_s = -1;  // -1: no watermark
  double trigger_interval_s = -1;
  double busy_ratio = -1;
  bool falling_behind = false;

  // One run's latest batch folded in: rates, rows and bytes add; durations and lags take the max.
  void Add(const StreamingRunSnapshot& run) {
    const model::StreamingBatch& batch = run.latest;
    if (batch.first_batch_id < 0) return;
    present = true;
    if (run.latest_input_span_ms > 0) {
      input_rows_per_s += static_cast<double>(batch.input_rows) * 1000.0 /
                          static_cast<double>(run.latest_input_span_ms);
    }
    if (batch.trigger_execution_ms > 0) {
      processed_rows_per_s += static_cast<double>(batch.input_rows) * 1000.0 /
                              static_cast<double>(batch.trigger_execution_ms);
    }
    batch_s = std::max(batch_s, Seconds(batch.trigger_execution_ms));
    for (size_t i = 0; i < kSteps.size(); ++i) {
      step_s[i] = std::max(step_s[i], Seconds(batch.*kSteps[i].second));
    }
    if (batch.state_rows_total >= 0) {
      state_rows = std::max(state_rows, 0.0) + static_cast<double>(batch.state_rows_total);
      state_bytes = std::max(state_bytes, 0.0) +
                    static_cast<double>(std::max<int64_t>(batch.state_memory_bytes, 0));
    }
    if (batch.watermark_ms > 0 && batch.timestamp_ms >= batch.watermark_ms) {
      watermark_lag_s = std::max(watermark_lag_s, Seconds(batch.timestamp_ms - batch.watermark_ms));
    }
    if (run.trigger_interval_ms > 0) {
      trigger_interval_s = std::max(trigger_interval_s, Seconds(run.trigger_interval_ms));
    }
    busy_ratio = std::max(busy_ratio, run.busy_share);
    falling_behind = falling_behind || run.falling_behind;
  }
};

Status StreamingMetrics::Register(metrics::PrometheusRegistry& registry) {
  SPARKPROF_ASSIGN_OR_RETURN(
      batches_, registry.AddCounter("spark_streaming_batches_total",
                                    "Micro-batches the streaming query completed (its progress "
                                    "events), over its runs; query is capped (docs/metrics.md)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      input_rows_, registry.AddCounter("spark_streaming_input_rows_total",
                                       "Rows the streaming query's batches read from all its "
                                       "sources (numInputRows), over its runs."));
  SPARKPROF_ASSIGN_OR_RETURN(
      input_rate_,
      registry.AddGauge("spark_streaming_input_rows_per_second",
                        "The latest batch's input rate as Spark defines it: its rows over the "
                        "time since the previous batch started."));
  SPARKPROF_ASSIGN_OR_RETURN(
      processed_rate_,
      registry.AddGauge("spark_streaming_processed_rows_per_second",
                        "The latest batch's processing rate as Spark defines it: its rows over "
                        "its own duration (triggerExecution)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      batch_duration_,
      registry.AddGauge("spark_streaming_batch_duration_seconds",
                        "The latest batch's duration (durationMs.triggerExecution)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      batch_step_,
      registry.AddGauge("spark_streaming_batch_step_seconds",
                        "The latest batch's steps (durationMs): latest_offset (with a DSv1 "
                        "source's getOffset), get_batch, query_planning, add_batch, wal_commit, "
                        "commit_offsets."));
  SPARKPROF_ASSIGN_OR_RETURN(
      state_rows_,
      registry.AddGauge("spark_streaming_state_rows",
                        "Rows in the query's state stores after the latest batch, over its "
                        "stateful operators (numRowsTotal); absent without one."));
  SPARKPROF_ASSIGN_OR_RETURN(
      state_memory_,
      registry.AddGauge("spark_streaming_state_memory_bytes",
                        "Memory of the query's state stores after the latest batch, over its "
                        "stateful operators (memoryUsedBytes); absent without one."));
  SPARKPROF_ASSIGN_OR_RETURN(
      watermark_lag_,
      registry.AddGauge("spark_streaming_watermark_lag_seconds",
                        "How far the event-time watermark trails the latest batch's start; "
                        "absent while the query has no watermark."));
  SPARKPROF_ASSIGN_OR_RETURN(
      trigger_interval_,
      registry.AddGauge("spark_streaming_trigger_interval_seconds",
                        "The processing-time trigger's interval as the batches' schedule shows "
                        "it; absent until three batches that waited for it agree."));
  SPARKPROF_ASSIGN_OR_RETURN(
      busy_ratio_,
      registry.AddGauge("spark_streaming_busy_ratio",
                        "Busy share of the query's recent batches: their duration over the time "
                        "their rows took to arrive (input rate / processing rate); above 1 the "
                        "query falls behind. Absent until it has 3 batches after its first."));
  SPARKPROF_ASSIGN_OR_RETURN(
      falling_behind_,
      registry.AddGauge("spark_streaming_falling_behind",
                        "1 while the engine's falling-behind rule holds on the query's recent "
                        "batches (processing slower than input, lag growing), else 0."));
  return Status::Ok();
}

std::string StreamingMetrics::Label(const std::string& query) {
  auto found = label_of_query_.find(query);
  if (found != label_of_query_.end()) return found->second;
  std::string label = kOtherQueries;
  if (labelled_ < max_labelled_ && !query.empty()) {
    ++labelled_;
    label = LabelText(query);
    if (label.empty() || label == kOtherQueries) label = "(unprintable)";
  }
  // Queries past the cap are not remembered one by one: they all map to (other).
  if (label != kOtherQueries) label_of_query_.emplace(query, label);
  return label;
}

void StreamingMetrics::SetLevels(const std::string& label, const Levels& levels) {
  const prometheus::Labels labels = {{"query", label}};
  input_rate_->Add(labels).Set(levels.input_rows_per_s);
  processed_rate_->Add(labels).Set(levels.processed_rows_per_s);
  batch_duration_->Add(labels).Set(levels.batch_s);
  for (size_t i = 0; i < kSteps.size(); ++i) {
    batch_step_->Add({{"query", label}, {"step", kSteps[i].first}}).Set(levels.step_s[i]);
  }
  const std::pair<prometheus::Family<prometheus::Gauge>*, double> when_known[] = {
      {state_rows_, levels.state_rows},
      {state_memory_, levels.state_bytes},
      {watermark_lag_, levels.watermark_lag_s},
      {trigger_interval_, levels.trigger_interval_s},
      {busy_ratio_, levels.busy_ratio}};
  for (const auto& [family, value] : when_known) {
    if (value >= 0) {
      family->Add(labels).Set(value);
    } else {
      RemoveChild(family, labels);
    }
  }
  falling_behind_->Add(labels).Set(levels.falling_behind ? 1 : 0);
}

void StreamingMetrics::RemoveLevels(const std::string& label) {
  const prometheus::Labels labels = {{"query", label}};
  for (auto* family : {input_rate_, processed_rate_, batch_duration_, state_rows_, state_memory_,
                       watermark_lag_, trigger_interval_, busy_ratio_, falling_behind_}) {
    RemoveChild(family, labels);
  }
  for (const auto& step : kSteps)
    RemoveChild(batch_step_, {{"query", label}, {"step", step.first}});
}

void StreamingMetrics::Update(const LiveSnapshot& snapshot) {
  if (batches_ == nullptr) return;
  std::map<std::string, std::pair<int64_t, int64_t>> totals;  // label -> batches, rows
  std::map<std::string, Levels> levels;
  for (const StreamingRunSnapshot& run : snapshot.streaming_runs) {
    const std::string label = Label(run.label);
    auto& [batches, rows] = totals[label];
    batches += run.batches_total;
    rows += run.input_rows_total;
    if (run.active) levels[label].Add(run);
  }
  for (const auto& [label, sums] : totals) {
    const prometheus::Labels labels = {{"query", label}};
    int64_t& batches_reported = batches_reported_[label];
    prometheus::Counter& batches = batches_->Add(labels);  // served from the query's start
    if (sums.first > batches_reported) {
      batches.Increment(static_cast<double>(sums.first - batches_reported));
      batches_reported = sums.first;
    }
    int64_t& rows_reported = rows_reported_[label];
    prometheus::Counter& rows = input_rows_->Add(labels);
    if (sums.second > rows_reported) {
      rows.Increment(static_cast<double>(sums.second - rows_reported));
      rows_reported = sums.second;
    }
  }
  for (auto& [label, served] : has_levels_) {
    auto found = levels.find(label);
    if (served && (found == levels.end() || !found->second.present)) {
      RemoveLevels(label);
      served = false;
    }
  }
  for (const auto& [label, level] : levels) {
    if (!level.present) continue;
    SetLevels(label, level);
    has_levels_[label] = true;
  }
}

}  // namespace sparkprof::driver
