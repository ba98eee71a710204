// Driver exposition bench (issue 31): the cost of one /metrics exposition of a large application,
// prometheus-cpp (the driver's registry since issue 31, metrics/prometheus_registry.h) against the
// hand-written registry the driver used before (metrics/registry.h, now the agent's), in the same
// run on the same series.
//
// The application: a DriverAggregator fed a synthetic event log (analyzer/testing) of `executors`
// executors (`removed` of them removed at the end) and `stages` stages of `tasks` tasks each, every
// fifth a write stage, then refreshed: every family the driver exports, with executor_id capped at
// 64 labelled executors plus "other". Its exposition is collected once (families, labels,
// values); both registries are then filled from that snapshot, so they hold the same series:
//   * prometheus-cpp: families registered and children added as the driver does; application_id
//     and application_name are common labels, joined at every exposition as the driver does;
//   * hand-written: the same families, application_id and application_name as each series' own
//     labels (it has no common labels any more; the old driver joined them at every render, so
//     this baseline is, if anything, cheaper than the old code was).
// Measured per registry: CPU per exposition (CLOCK_THREAD_CPUTIME_ID, mean over `renders`), the
// bytes the registry holds once filled (live heap bytes, counted by this binary's operator new),
// and the peak of extra heap bytes during one exposition.
//
// Usage: exposition_bench [executors=N] [stages=N] [tasks=N] [removed=N] [renders=N]
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/testing/synthetic_app.h"
#include "driver-aggregator/driver_aggregator.h"
#include "metrics/prometheus_registry.h"
#include "metrics/registry.h"

// ---------------------------------------------------------------------------------------------
// Live and peak heap bytes of this process (single-threaded phases only are compared).

namespace {
std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

void* Allocate(size_t size) {
  void* pointer = std::malloc(size == 0 ? 1 : size);
  if (pointer == nullptr) throw std::bad_alloc();
  const auto bytes = static_cast<int64_t>(malloc_usable_size(pointer));
  const int64_t live = g_live_bytes.fetch_add(bytes) + bytes;
  int64_t peak = g_peak_bytes.load();
  while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live)) {
  }
  return pointer;
}

void Release(void* pointer) {
  if (pointer == nullptr) return;
  g_live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(pointer)));
  std::free(pointer);
}
}  // namespace

void* operator new(size_t size) { return Allocate(size); }
void* operator new[](size_t size) { return Allocate(size); }
void operator delete(void* pointer) noexcept { Release(pointer); }
void operator delete[](void* pointer) noexcept { Release(pointer); }
void operator delete(void* pointer, size_t) noexcept { Release(pointer); }
void operator delete[](void* pointer, size_t) noexcept { Release(pointer); }

namespace {

using sparkprof::driver::AggregatorOptions;
using sparkprof::driver::DriverAggregator;
namespace metrics = sparkprof::metrics;

// executors, stages, tasks, removed, renders: defaults, replaced by key=value arguments.
using Config = std::map<std::string, int>;

bool ParseArgs(int argc, char** argv, Config& config) {
  config = {{"executors", 400}, {"stages", 400}, {"tasks", 200}, {"removed", 40}, {"renders", 200}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    auto it = eq == std::string::npos ? config.end() : config.find(arg.substr(0, eq));
    if (it == config.end()) {
      std::fprintf(stderr, "unknown argument '%s' (executors= stages= tasks= removed= renders=)\n",
                   argv[i]);
      return false;
    }
    it->second = static_cast<int>(std::strtol(arg.c_str() + eq + 1, nullptr, 10));
    if (it->second < (it->first == "removed" ? 0 : 1)) {
      std::fprintf(stderr, "%s is out of range\n", it->first.c_str());
      return false;
    }
  }
  return true;
}

double ThreadCpuUs() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

sparkprof::testing::SyntheticApp LargeApp(const Config& config) {
  sparkprof::testing::SyntheticApp app;
  app.executors = config.at("executors");
  app.removed_executors = std::min(config.at("removed"), app.executors);
  for (int i = 0; i < config.at("stages"); ++i) {
    sparkprof::testing::SyntheticStage stage;
    stage.name = "stage " + std::to_string(i);
    stage.tasks = config.at("tasks");
    stage.task_ms = 500 + 37 * (i % 50);
    stage.shuffle_write_bytes_per_task = 8ll << 20;
    stage.memory_spill_bytes_per_task = i % 7 == 0 ? (64ll << 20) : 0;
    stage.skewed_tasks = i % 7 == 0 ? 2 : 0;
    stage.skew_factor = 6;
    stage.write_stage = i % 5 == 4;
    if (i > 0) stage.parents = {i - 1};
    app.stages.push_back(stage);
  }
  return app;
}

// What one exposition holds: the families as the driver serves them.
std::vector<prometheus::MetricFamily> DriverSnapshot(const Config& config, size_t* series) {
  AggregatorOptions options;
  options.live_refresh_interval_ms = 0;
  options.live_extend_to_now = false;
  auto aggregator = DriverAggregator::Start(options);
  if (!aggregator.ok()) {
    std::fprintf(stderr, "%s\n", aggregator.status().ToString().c_str());
    std::exit(1);
  }
  sparkprof::testing::SyntheticApp app = LargeApp(config);
  if (!(*aggregator)->SetApplication(app.app_id, app.app_name).ok()) std::exit(1);
  std::istringstream log(sparkprof::testing::GenerateEventLog(app));
  std::string line;
  size_t rejected = 0;
  while (std::getline(log, line)) {
    if (!line.empty()) rejected += !(*aggregator)->OnEvent(line).ok();
  }
  if (rejected > 0) std::fprintf(stderr, "%zu events rejected\n", rejected);
  (*aggregator)->RefreshLiveMetrics(-1);
  std::vector<prometheus::MetricFamily> families = (*aggregator)->registry().Collect();
  *series = 0;
  for (const auto& family : families) *series += family.metric.size();
  return families;
}

bool IsApplicationLabel(const std::string& name) {
  return name == "application_id" || name == "application_name";
}

// The series' own labels (application labels dropped: they are common labels there).
prometheus::Labels OwnLabels(const prometheus::ClientMetric& metric) {
  prometheus::Labels labels;
  for (const auto& label : metric.label) {
    if (!IsApplicationLabel(label.name)) labels.emplace(label.name, label.value);
  }
  return labels;
}

std::vector<double> Bounds(const prometheus::ClientMetric& metric) {
  std::vector<double> bounds;
  for (const auto& bucket : metric.histogram.bucket) {
    if (bucket.upper_bound != std::numeric_limits<double>::infinity()) {
      bounds.push_back(bucket.upper_bound);
    }
  }
  return bounds;
}

// Observations that give the same bucket counts (sums differ: no matter for the cost).
template <typename Histogram>
void Replay(const prometheus::ClientMetric& metric, Histogram& histogram) {
  uint64_t previous = 0;
  for (const auto& bucket : metric.histogram.bucket) {
    double value =
        bucket.upper_bound == std::numeric_limits<double>::infinity() ? 1e9 : bucket.upper_bound;
    for (uint64_t i = previous; i < bucket.cumulative_count; ++i) histogram.Observe(value);
    previous = bucket.cumulative_count;
  }
}

// A snapshot series' child in each registry: prometheus-cpp's with its own labels (the
// application's are common labels there), the hand-written one's with all of them.
template <typename Family>
auto& Child(Family* family, const prometheus::ClientMetric& metric) {
  return family->Add(OwnLabels(metric));
}
template <typename Metric>
Metric& Child(metrics::Family<Metric>* family, const prometheus::ClientMetric& metric) {
  metrics::Labels labels;
  for (const auto& label : metric.label) labels.emplace_back(label.name, label.value);
  return family->WithLabels(labels);
}

template <typename Registry>
void Fill(Registry& registry, const std::vector<prometheus::MetricFamily>& families) {
  for (const auto& family : families) {
    if (family.type == prometheus::MetricType::Counter) {
      auto* added = *registry.AddCounter(family.name, family.help);
      for (const auto& m : family.metric) Child(added, m).Increment(m.counter.value);
    } else if (family.type == prometheus::MetricType::Gauge) {
      auto* added = *registry.AddGauge(family.name, family.help);
      for (const auto& m : family.metric) Child(added, m).Set(m.gauge.value);
    } else if (family.type == prometheus::MetricType::Histogram) {
      auto* added = *registry.AddHistogram(family.name, family.help, Bounds(family.metric[0]));
      for (const auto& m : family.metric) Replay(m, Child(added, m));
    }
  }
}

struct Measured {
  int64_t held_bytes = 0;
  int64_t render_peak_bytes = 0;
  double render_us = 0;
  size_t text_bytes = 0;
};

template <typename Registry>
Measured Measure(const std::vector<prometheus::MetricFamily>& families, int renders,
                 const std::function<void(Registry&)>& prepare) {
  Measured measured;
  const int64_t before = g_live_bytes.load();
  auto registry = std::make_unique<Registry>();
  Fill(*registry, families);
  prepare(*registry);
  measured.held_bytes = g_live_bytes.load() - before;
  const int64_t filled = g_live_bytes.load();
  g_peak_bytes.store(filled);
  measured.text_bytes = registry->Render().size();
  measured.render_peak_bytes = g_peak_bytes.load() - filled;
  const double start_us = ThreadCpuUs();
  size_t sink = 0;
  for (int i = 0; i < renders; ++i) sink += registry->Render().size();
  measured.render_us = (ThreadCpuUs() - start_us) / renders;
  if (sink == 0) std::printf("(empty)\n");
  return measured;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (!ParseArgs(argc, argv, config)) return 2;
  size_t series = 0;
  const std::vector<prometheus::MetricFamily> families = DriverSnapshot(config, &series);
  prometheus::Labels application;
  for (const auto& family : families) {
    for (const auto& metric : family.metric) {
      for (const auto& label : metric.label) {
        if (IsApplicationLabel(label.name)) application[label.name] = label.value;
      }
    }
  }
  std::printf(
      "application: %d executors (%d removed), %d stages x %d tasks; exposition: %zu families, "
      "%zu series\n",
      config.at("executors"), config.at("removed"), config.at("stages"), config.at("tasks"),
      families.size(), series);
  const int renders = config.at("renders");
  const Measured handwritten =
      Measure<metrics::Registry>(families, renders, [](metrics::Registry&) {});
  const Measured library = Measure<metrics::PrometheusRegistry>(
      families, renders,
      [&](metrics::PrometheusRegistry& registry) { registry.SetCommonLabels(application); });
  std::printf("%-34s %12s %14s %18s %12s\n", "registry", "us/exposition", "held bytes",
              "exposition peak B", "text bytes");
  auto row = [](const char* name, const Measured& m) {
    std::printf("%-34s %12.1f %14lld %18lld %12zu\n", name, m.render_us,
                static_cast<long long>(m.held_bytes), static_cast<long long>(m.render_peak_bytes),
                m.text_bytes);
  };
  row("hand-written (baseline, before)", handwritten);
  row("prometheus-cpp (driver, after)", library);
  std::printf(
      "ratio after/before: exposition CPU %.2fx, held memory %.2fx, "
      "exposition peak %.2fx\n",
      library.render_us / handwritten.render_us,
      static_cast<double>(library.held_bytes) / static_cast<double>(handwritten.held_bytes),
      static_cast<double>(library.render_peak_bytes) /
          static_cast<double>(handwritten.render_peak_bytes));
  return 0;
}
