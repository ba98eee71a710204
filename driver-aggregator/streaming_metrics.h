// Per Structured Streaming query series, live on the driver, for the "Spark Structured Streaming"
// dashboard and its alerts: the latest batch's rates, duration and steps, the state, the
// watermark's lag, the engine's falling-behind judgement, and counters of batches and rows. Fed
// from the live model's snapshots (LiveSnapshot::streaming_runs): the same StreamingQueryListener
// progress events, parser and model as `sparkprof analyze`'s streaming section.
//
// Labels: query = the query's name, else its id (a restart from its checkpoint keeps both, so its
// counters go on); at most max_labelled_queries values per application, in order of first
// appearance, later queries share query="(other)" (counters summed; rates, rows and bytes summed
// over its active queries, durations, lag, busy ratio and the falling-behind flag their maximum).
// step takes six fixed values. Gauges exist while the query runs: a terminated query's are
// removed (its counters stay).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"
#include "driver-aggregator/live_application.h"
#include "metrics/prometheus_registry.h"

namespace sparkprof::driver {

inline constexpr size_t kMaxLabelledQueries = 32;
inline constexpr const char* kOtherQueries = "(other)";

class StreamingMetrics {
 public:
  explicit StreamingMetrics(size_t max_labelled_queries = kMaxLabelledQueries)
      : max_labelled_(max_labelled_queries) {}

  Status Register(metrics::PrometheusRegistry& registry);
  // Called with every snapshot that has model figures, in order; not thread-safe (the caller
  // serialises snapshots).
  void Update(const LiveSnapshot& snapshot);

 private:
  // The latest figures of one label, over its active runs.
  struct Levels;
  std::string Label(const std::string& query);
  void SetLevels(const std::string& label, const Levels& levels);
  void RemoveLevels(const std::string& label);

  const size_t max_labelled_;
  std::map<std::string, std::string> label_of_query_;  // capped: at most max_labelled_ + 1 values
  size_t labelled_ = 0;
  prometheus::Family<prometheus::Counter>* batches_ = nullptr;
  prometheus::Family<prometheus::Counter>* input_rows_ = nullptr;
  prometheus::Family<prometheus::Gauge>* input_rate_ = nullptr;
  prometheus::Family<prometheus::Gauge>* processed_rate_ = nullptr;
  prometheus::Family<prometheus::Gauge>* batch_duration_ = nullptr;
  prometheus::Family<prometheus::Gauge>* batch_step_ = nullptr;
  prometheus::Family<prometheus::Gauge>* state_rows_ = nullptr;
  prometheus::Family<prometheus::Gauge>* state_memory_ = nullptr;
  prometheus::Family<prometheus::Gauge>* watermark_lag_ = nullptr;
  prometheus::Family<prometheus::Gauge>* trigger_interval_ = nullptr;
  prometheus::Family<prometheus::Gauge>* busy_ratio_ = nullptr;
  prometheus::Family<prometheus::Gauge>* falling_behind_ = nullptr;
  std::map<std::string, int64_t> batches_reported_;  // by label: what the counters hold already
  std::map<std::string, int64_t> rows_reported_;
  std::map<std::string, bool> has_levels_;  // labels whose gauges are served
};

}  // namespace sparkprof::driver
