// Per-executor series for the dashboards: lifecycle (executors added, removed by reason class),
// peak memory per executor, and task durations per executor (a histogram for a heatmap). Fed from
// the live model's snapshots (LiveSnapshot), so the figures are the engine's.
//
// Cardinality: executor_id takes at most max_labelled_executors values (in order of first
// appearance); later executors share executor_id="other". reason is one of released, memory,
// node, other (diagnosis::rules::ClassifyRemovalReason); area one of a fixed list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "common/status.h"
#include "driver-aggregator/live_application.h"
#include "metrics/prometheus_registry.h"

namespace sparkprof::driver {

class ExecutorMetrics {
 public:
  explicit ExecutorMetrics(size_t max_labelled_executors = 64)
      : max_labelled_(max_labelled_executors) {}

  Status Register(metrics::PrometheusRegistry& registry);
  // Called with every snapshot that has model figures, in order; not thread-safe (the caller
  // serialises snapshots).
  void Update(const LiveSnapshot& snapshot);

 private:
  std::string Label(const std::string& executor_id);

  const size_t max_labelled_;
  prometheus::Counter* added_ = nullptr;
  prometheus::Family<prometheus::Counter>* removed_ = nullptr;
  prometheus::Family<prometheus::Gauge>* peak_memory_ = nullptr;
  metrics::HistogramFamily* task_duration_ = nullptr;
  // task_duration_'s children by executor_id label (one lookup per task, no allocation).
  std::map<std::string, prometheus::Histogram*> task_duration_by_label_;
  std::set<std::string> labelled_;
  std::set<std::string> counted_added_;
  std::set<std::string> counted_removed_;
};

}  // namespace sparkprof::driver
