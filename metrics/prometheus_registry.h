// The driver's Prometheus registry: prometheus-cpp (Debian's prometheus-cpp-dev) holds the
// counter, gauge and histogram families and writes the text exposition format 0.0.4; this class
// adds what the driver needs around it:
//   * collect callbacks that run before every exposition (owners copy their figures in lazily);
//   * common labels (application_id, application_name) joined onto every series, set after the
//     endpoint is up, and optionally no exposition at all until they are set;
//   * an exposition Prometheus always accepts and tests can compare: label values made valid
//     UTF-8, help text escaped (prometheus-cpp 1.0 writes it as is), series in label order.
// Families and their children are prometheus-cpp's own types (prometheus::Family<Counter>, ...);
// a child's reference stays valid for the registry's life.
//
// The executor agent cannot link prometheus-cpp (a .so that needs only libc; Debian ships
// prometheus-cpp as shared libraries only): it keeps metrics/registry.h. docs/agent.md has the
// numbers.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace sparkprof::metrics {

// A histogram family with its bucket bounds, so a labelled child is one call as for counters.
class HistogramFamily {
 public:
  HistogramFamily(prometheus::Family<prometheus::Histogram>& family,
                  prometheus::Histogram::BucketBoundaries upper_bounds)
      : family_(family), upper_bounds_(std::move(upper_bounds)) {}
  // The child for these labels, created on first use (label names must be valid).
  prometheus::Histogram& Add(const prometheus::Labels& labels = {}) {
    return family_.Add(labels, upper_bounds_);
  }

 private:
  prometheus::Family<prometheus::Histogram>& family_;
  const prometheus::Histogram::BucketBoundaries upper_bounds_;
};

class PrometheusRegistry {
 public:
  PrometheusRegistry();
  PrometheusRegistry(const PrometheusRegistry&) = delete;
  PrometheusRegistry& operator=(const PrometheusRegistry&) = delete;

  // Names must match [a-zA-Z_:][a-zA-Z0-9_:]* and be unique in the registry.
  Result<prometheus::Family<prometheus::Counter>*> AddCounter(const std::string& name,
                                                              const std::string& help);
  Result<prometheus::Family<prometheus::Gauge>*> AddGauge(const std::string& name,
                                                          const std::string& help);
  // `upper_bounds` must be strictly increasing; +Inf is implicit.
  Result<HistogramFamily*> AddHistogram(const std::string& name, const std::string& help,
                                        std::vector<double> upper_bounds);

  // Runs before every exposition.
  void AddCollectCallback(std::function<void()> callback);

  // Labels every series carries in addition to its own (like a scrape target's labels, but set
  // by the process). A series' own label of the same name wins. Invalid label names are dropped;
  // an empty list removes them.
  void SetCommonLabels(const prometheus::Labels& labels);
  prometheus::Labels CommonLabels() const;
  // While set and no common labels are set yet, the exposition is empty: no series is ever
  // served without the labels that identify it.
  void HoldUntilCommonLabels(bool hold);

  // The families as served: callbacks run, common labels joined, values valid UTF-8, series
  // sorted by their labels. Families without a series are left out (prometheus-cpp's rule).
  std::vector<prometheus::MetricFamily> Collect() const;
  // Text exposition format 0.0.4 (Content-Type: text/plain; version=0.0.4).
  std::string Render() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  mutable std::mutex mutex_;  // guards the members below
  std::vector<std::unique_ptr<HistogramFamily>> histograms_;
  std::vector<std::function<void()>> collect_callbacks_;
  prometheus::Labels common_labels_;  // valid names only
  bool hold_until_common_labels_ = false;
};

}  // namespace sparkprof::metrics
