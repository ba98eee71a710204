#include "metrics/prometheus_registry.h"

#include <prometheus/check_names.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <exception>
#include <utility>

#include "common/utf8.h"
#include "metrics/registry.h"  // EscapeHelp

namespace sparkprof::metrics {
namespace {

// A series' labels with the common labels joined (its own win on a name clash), sorted by name.
// Values become valid UTF-8: one malformed byte (say, an application name that crossed JNI as
// modified UTF-8) makes Prometheus reject the whole scrape, so such bytes become U+FFFD.
// (prometheus-cpp escapes '\', '"' and newline.)
void JoinLabels(std::vector<prometheus::ClientMetric::Label>& labels,
                const prometheus::Labels& common) {
  for (const auto& [name, value] : common) {
    bool own = std::any_of(labels.begin(), labels.end(),
                           [&name = name](const auto& label) { return label.name == name; });
    if (!own) labels.push_back({name, value});
  }
  for (auto& label : labels) {
    std::string valid;
    utf8::AppendValid(valid, label.value);
    label.value = std::move(valid);
  }
  std::sort(labels.begin(), labels.end());
}

template <typename Builder>
auto Register(Builder builder, prometheus::Registry& registry, const std::string& name,
              const std::string& help) -> Result<decltype(&builder.Register(registry))> {
  if (!prometheus::CheckMetricName(name)) {
    return InvalidArgument("invalid metric name '" + name + "'");
  }
  try {
    // prometheus-cpp 1.0 writes the help text as it is given.
    return &builder.Name(name).Help(EscapeHelp(help)).Register(registry);
  } catch (const std::exception& e) {
    return InvalidArgument("metric '" + name + "': " + e.what());
  }
}

}  // namespace

// Throw: a second family of the same name is a bug, not a family to merge into.
PrometheusRegistry::PrometheusRegistry()
    : registry_(
          std::make_shared<prometheus::Registry>(prometheus::Registry::InsertBehavior::Throw)) {}

Result<prometheus::Family<prometheus::Counter>*> PrometheusRegistry::AddCounter(
    const std::string& name, const std::string& help) {
  return Register(prometheus::BuildCounter(), *registry_, name, help);
}

Result<prometheus::Family<prometheus::Gauge>*> PrometheusRegistry::AddGauge(
    const std::string& name, const std::string& help) {
  return Register(prometheus::BuildGauge(), *registry_, name, help);
}

Result<HistogramFamily*> PrometheusRegistry::AddHistogram(const std::string& name,
                                                          const std::string& help,
                                                          std::vector<double> upper_bounds) {
  for (size_t i = 1; i < upper_bounds.size(); ++i) {
    if (!(upper_bounds[i - 1] < upper_bounds[i])) {
      return InvalidArgument("histogram '" + name + "': bucket bounds must increase");
    }
  }
  SPARKPROF_ASSIGN_OR_RETURN(auto* family,
                             Register(prometheus::BuildHistogram(), *registry_, name, help));
  std::lock_guard<std::mutex> lock(mutex_);
  histograms_.push_back(std::make_unique<HistogramFamily>(*family, std::move(upper_bounds)));
  return histograms_.back().get();
}

void PrometheusRegistry::AddCollectCallback(std::function<void()> callback) {
  std::lock_guard<std::mutex> lock(mutex_);
  collect_callbacks_.push_back(std::move(callback));
}

void PrometheusRegistry::SetCommonLabels(const prometheus::Labels& labels) {
  prometheus::Labels valid;
  for (const auto& [name, value] : labels) {
    if (prometheus::CheckLabelName(name)) valid.emplace(name, value);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  common_labels_ = std::move(valid);
}

prometheus::Labels PrometheusRegistry::CommonLabels() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return common_labels_;
}

void PrometheusRegistry::HoldUntilCommonLabels(bool hold) {
  std::lock_guard<std::mutex> lock(mutex_);
  hold_until_common_labels_ = hold;
}

std::vector<prometheus::MetricFamily> PrometheusRegistry::Collect() const {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (hold_until_common_labels_ && common_labels_.empty()) return {};
    callbacks = collect_callbacks_;
  }
  for (const auto& callback : callbacks) callback();
  const prometheus::Labels common = CommonLabels();  // after the callbacks: they may set it
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (prometheus::MetricFamily& family : families) {
    for (prometheus::ClientMetric& metric : family.metric) JoinLabels(metric.label, common);
    std::sort(family.metric.begin(), family.metric.end(),
              [](const prometheus::ClientMetric& a, const prometheus::ClientMetric& b) {
                return a.label < b.label;
              });
  }
  return families;
}

std::string PrometheusRegistry::Render() const {
  std::vector<prometheus::MetricFamily> families = Collect();
  if (families.empty()) return {};
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace sparkprof::metrics
