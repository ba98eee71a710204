// The executor agent's Prometheus registry: counter, gauge and histogram families with labels,
// rendered in the text exposition format 0.0.4, with nothing beyond libc and the C++ runtime
// linked into libsparkprof.so. The driver uses prometheus-cpp (metrics/prometheus_registry.h);
// the agent cannot (Debian ships it as shared libraries only, and the agent's .so must need
// only libc: docs/agent.md, "Libraries").
//
// Thread safety: metric updates are lock-free atomics; creating a labelled child and rendering
// take the family's mutex. References returned by WithLabels() stay valid for the registry's life.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace sparkprof::metrics {

// Label name -> value pairs. Order does not matter; they are sorted by name when stored.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  // Negative increments are ignored: a counter only goes up.
  void Increment(double amount = 1.0);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Increment(double amount = 1.0);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  // `upper_bounds` must be strictly increasing; +Inf is implicit.
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double value);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Non-cumulative count per bucket; the last entry is the +Inf bucket.
  std::vector<uint64_t> BucketCounts() const;
  uint64_t Count() const { return count_.load(std::memory_order_relaxed); }
  double Sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> bucket_counts_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
};

enum class MetricType { kCounter, kGauge, kHistogram };

template <typename Metric>
class Family {
 public:
  // Returns the child for these labels, creating it on first use. Label names must be valid.
  Metric& WithLabels(const Labels& labels = {});

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }

 private:
  friend class Registry;
  Family(std::string name, std::string help, std::vector<double> histogram_bounds)
      : name_(std::move(name)),
        help_(std::move(help)),
        histogram_bounds_(std::move(histogram_bounds)) {}

  std::string name_;
  std::string help_;
  std::vector<double> histogram_bounds_;
  mutable std::mutex mutex_;
  std::map<Labels, std::unique_ptr<Metric>> children_;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Names must match [a-zA-Z_:][a-zA-Z0-9_:]* and be unique in the registry.
  Result<Family<Counter>*> AddCounter(std::string name, std::string help);
  Result<Family<Gauge>*> AddGauge(std::string name, std::string help);
  Result<Family<Histogram>*> AddHistogram(std::string name, std::string help,
                                          std::vector<double> upper_bounds);

  // Runs before every Render(): lets owners copy their own counters into gauges lazily.
  void AddCollectCallback(std::function<void()> callback);

  // Text exposition format 0.0.4 (Content-Type: text/plain; version=0.0.4).
  std::string Render() const;

 private:
  struct Entry {
    MetricType type;
    void* family;  // Family<Counter|Gauge|Histogram>*, owned by `owned_`
  };
  Status CheckNewName(const std::string& name) const;
  template <typename Metric>
  Result<Family<Metric>*> AddFamily(MetricType type, std::string name, std::string help,
                                    std::vector<double> upper_bounds);

  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::vector<std::shared_ptr<void>> owned_;
  std::vector<std::function<void()>> collect_callbacks_;
};

// Escaping rules of the text format, exposed for tests and for other renderers.
std::string EscapeHelp(std::string_view help);         // '\' and newline
std::string EscapeLabelValue(std::string_view value);  // '\', '"' and newline
std::string FormatValue(double value);                 // +Inf, -Inf, NaN, shortest round-trip
bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);

}  // namespace sparkprof::metrics
