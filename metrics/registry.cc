#include "metrics/registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <type_traits>

namespace sparkprof::metrics {
namespace {

void AtomicAdd(std::atomic<double>& target, double amount) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + amount, std::memory_order_relaxed)) {
  }
}

// Labels with invalid names are dropped rather than rendered into a broken exposition.
Labels SortedLabels(const Labels& labels) {
  Labels sorted;
  for (const auto& label : labels) {
    if (IsValidLabelName(label.first)) sorted.push_back(label);
  }
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

// `{a="x",b="y"}` with an optional extra label (histogram `le`); empty when there are none.
void AppendLabels(std::string& out, const Labels& labels, std::string_view extra_name = {},
                  std::string_view extra_value = {}) {
  if (labels.empty() && extra_name.empty()) return;
  out += '{';
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += name;
    out += "=\"";
    out += EscapeLabelValue(value);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!first) out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
}

void AppendSample(std::string& out, std::string_view name, const Labels& labels, double value,
                  std::string_view extra_name = {}, std::string_view extra_value = {}) {
  out += name;
  AppendLabels(out, labels, extra_name, extra_value);
  out += ' ';
  out += FormatValue(value);
  out += '\n';
}

void AppendHeader(std::string& out, const std::string& name, const std::string& help,
                  std::string_view type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += EscapeHelp(help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

template <typename Metric>
void RenderFamily(std::string& out, const std::string& name, const std::string& help,
                  const std::map<Labels, std::unique_ptr<Metric>>& children) {
  if constexpr (std::is_same_v<Metric, Counter>) {
    AppendHeader(out, name, help, "counter");
    for (const auto& [own, metric] : children) {
      AppendSample(out, name, own, metric->Value());
    }
  } else if constexpr (std::is_same_v<Metric, Gauge>) {
    AppendHeader(out, name, help, "gauge");
    for (const auto& [own, metric] : children) {
      AppendSample(out, name, own, metric->Value());
    }
  } else {
    AppendHeader(out, name, help, "histogram");
    for (const auto& [own, metric] : children) {
      const Labels& labels = own;
      std::vector<uint64_t> counts = metric->BucketCounts();
      uint64_t cumulative = 0;
      const auto& bounds = metric->upper_bounds();
      for (size_t i = 0; i < bounds.size(); ++i) {
        cumulative += counts[i];
        AppendSample(out, name + "_bucket", labels, static_cast<double>(cumulative), "le",
                     FormatValue(bounds[i]));
      }
      cumulative += counts.back();
      AppendSample(out, name + "_bucket", labels, static_cast<double>(cumulative), "le", "+Inf");
      AppendSample(out, name + "_sum", labels, metric->Sum());
      AppendSample(out, name + "_count", labels, static_cast<double>(cumulative));
    }
  }
}

}  // namespace

void Counter::Increment(double amount) {
  if (!(amount > 0)) return;
  AtomicAdd(value_, amount);
}

void Gauge::Increment(double amount) { AtomicAdd(value_, amount); }

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      bucket_counts_(new std::atomic<uint64_t>[upper_bounds_.size() + 1]) {
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) bucket_counts_[i].store(0);
}

void Histogram::Observe(double value) {
  size_t bucket =
      std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) - upper_bounds_.begin();
  bucket_counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, value);
}

std::vector<uint64_t> Histogram::BucketCounts() const {
  std::vector<uint64_t> counts(upper_bounds_.size() + 1);
  for (size_t i = 0; i < counts.size(); ++i) {
    counts[i] = bucket_counts_[i].load(std::memory_order_relaxed);
  }
  return counts;
}

template <typename Metric>
Metric& Family<Metric>::WithLabels(const Labels& labels) {
  Labels key = SortedLabels(labels);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = children_.find(key);
  if (it == children_.end()) {
    std::unique_ptr<Metric> metric;
    if constexpr (std::is_same_v<Metric, Histogram>) {
      metric = std::make_unique<Histogram>(histogram_bounds_);
    } else {
      metric = std::make_unique<Metric>();
    }
    it = children_.emplace(std::move(key), std::move(metric)).first;
  }
  return *it->second;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

Status Registry::CheckNewName(const std::string& name) const {
  if (!IsValidMetricName(name)) return InvalidArgument("invalid metric name '" + name + "'");
  for (const Entry& entry : entries_) {
    const std::string* existing = nullptr;
    switch (entry.type) {
      case MetricType::kCounter:
        existing = &static_cast<Family<Counter>*>(entry.family)->name();
        break;
      case MetricType::kGauge:
        existing = &static_cast<Family<Gauge>*>(entry.family)->name();
        break;
      case MetricType::kHistogram:
        existing = &static_cast<Family<Histogram>*>(entry.family)->name();
        break;
    }
    if (*existing == name) return InvalidArgument("metric '" + name + "' registered twice");
  }
  return Status::Ok();
}

template <typename Metric>
Result<Family<Metric>*> Registry::AddFamily(MetricType type, std::string name, std::string help,
                                            std::vector<double> upper_bounds) {
  std::lock_guard<std::mutex> lock(mutex_);
  SPARKPROF_RETURN_IF_ERROR(CheckNewName(name));
  for (size_t i = 1; i < upper_bounds.size(); ++i) {
    if (!(upper_bounds[i - 1] < upper_bounds[i])) {
      return InvalidArgument("histogram '" + name + "': bucket bounds must increase");
    }
  }
  std::shared_ptr<Family<Metric>> family(
      new Family<Metric>(std::move(name), std::move(help), std::move(upper_bounds)));
  entries_.push_back({type, family.get()});
  owned_.push_back(family);
  return family.get();
}

Result<Family<Counter>*> Registry::AddCounter(std::string name, std::string help) {
  return AddFamily<Counter>(MetricType::kCounter, std::move(name), std::move(help), {});
}

Result<Family<Gauge>*> Registry::AddGauge(std::string name, std::string help) {
  return AddFamily<Gauge>(MetricType::kGauge, std::move(name), std::move(help), {});
}

Result<Family<Histogram>*> Registry::AddHistogram(std::string name, std::string help,
                                                  std::vector<double> upper_bounds) {
  return AddFamily<Histogram>(MetricType::kHistogram, std::move(name), std::move(help),
                              std::move(upper_bounds));
}

void Registry::AddCollectCallback(std::function<void()> callback) {
  std::lock_guard<std::mutex> lock(mutex_);
  collect_callbacks_.push_back(std::move(callback));
}

std::string Registry::Render() const {
  std::vector<std::function<void()>> callbacks;
  std::vector<Entry> entries;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    callbacks = collect_callbacks_;
    entries = entries_;
  }
  for (const auto& callback : callbacks) callback();
  std::string out;
  for (const Entry& entry : entries) {
    switch (entry.type) {
      case MetricType::kCounter: {
        auto* family = static_cast<Family<Counter>*>(entry.family);
        std::lock_guard<std::mutex> lock(family->mutex_);
        RenderFamily(out, family->name(), family->help(), family->children_);
        break;
      }
      case MetricType::kGauge: {
        auto* family = static_cast<Family<Gauge>*>(entry.family);
        std::lock_guard<std::mutex> lock(family->mutex_);
        RenderFamily(out, family->name(), family->help(), family->children_);
        break;
      }
      case MetricType::kHistogram: {
        auto* family = static_cast<Family<Histogram>*>(entry.family);
        std::lock_guard<std::mutex> lock(family->mutex_);
        RenderFamily(out, family->name(), family->help(), family->children_);
        break;
      }
    }
  }
  return out;
}

namespace {

// The text format escapes '\\' and newline everywhere, and '"' inside label values. (The agent's
// help and labels are its own ASCII constants; the driver's registry repairs UTF-8 in the values
// it is given, metrics/prometheus_registry.cc.)
std::string Escape(std::string_view text, bool escape_quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string EscapeHelp(std::string_view help) { return Escape(help, /*escape_quotes=*/false); }

std::string EscapeLabelValue(std::string_view value) {
  return Escape(value, /*escape_quotes=*/true);
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || name.substr(0, 2) == "__") return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

}  // namespace sparkprof::metrics
