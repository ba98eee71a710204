#include "analyzer/profile/cpu_use.h"

#include <algorithm>
#include <cmath>

namespace sparkprof::profile {

namespace {

// A figure summed over the hosts.
template <typename Figure>
auto SumOverHosts(const std::vector<HostCpuDuring>& hosts, Figure figure) {
  decltype(figure(hosts.front())) sum{};
  for (const HostCpuDuring& host : hosts) sum += figure(host);
  return sum;
}

// How much of [start_ns, end_ns) the spans cover, in ns.
double Overlap(const SpansMs& spans, int64_t start_ns, int64_t end_ns) {
  return static_cast<double>(OverlapNs(spans, start_ns, end_ns));
}

}  // namespace

uint32_t CpuDuring::cpus() const {
  return SumOverHosts(hosts, [](const HostCpuDuring& h) { return h.cpus; });
}
double CpuDuring::busy_cpus() const {
  return SumOverHosts(hosts, [](const HostCpuDuring& h) { return h.busy_cpus; });
}
double CpuDuring::application_cpus() const {
  return SumOverHosts(hosts, [](const HostCpuDuring& h) { return h.application_cpus; });
}
double CpuDuring::others_cpus() const {
  return SumOverHosts(hosts, [](const HostCpuDuring& h) { return h.others_cpus(); });
}
double CpuDuring::steal_cpus() const {
  return SumOverHosts(hosts, [](const HostCpuDuring& h) { return h.steal_cpus; });
}

void ApplicationCpuUse::Receive(void* context, const flamegraph::CpuUseRow& row) {
  static_cast<ApplicationCpuUse*>(context)->Add(row);
}

void ApplicationCpuUse::Add(const flamegraph::CpuUseRow& row) {
  if (row.end_epoch_ns <= row.start_epoch_ns) return;  // no window to spread it over
  if (windows_.size() >= max_windows_) {
    ++windows_left_out_;
    return;
  }
  const std::pair<std::string, int32_t> key(std::string(row.executor_id.substr(0, 256)), row.pid);
  auto [it, inserted] = jvm_index_.emplace(key, static_cast<uint32_t>(jvms_.size()));
  if (inserted) jvms_.push_back({key.first, std::string(row.host.substr(0, 256)), row.pid});
  CpuUseWindow window;
  window.jvm = it->second;
  window.start_ns = row.start_epoch_ns;
  window.end_ns = row.end_epoch_ns;
  window.host_cpus = row.host_cpus;
  window.host_busy_ns = row.host_busy_ns;
  window.host_steal_ns = row.host_steal_ns;
  window.host_total_ns = row.host_total_ns;
  window.process_cpu_ns = row.process_cpu_ns;
  window.cgroup_version = row.cgroup_version;
  window.cgroup_quota_millicpus = row.cgroup_quota_millicpus;
  window.cgroup_periods = row.cgroup_periods;
  window.cgroup_throttled_periods = row.cgroup_throttled_periods;
  window.cgroup_throttled_ns = row.cgroup_throttled_ns;
  window.agent_cpu_ns = row.agent_cpu_ns;
  windows_.push_back(window);
  if (row.run_delay_polls > 0 && key.first == "driver") {
    driver_windows_.push_back(windows_.size() - 1);
    for (const flamegraph::RunDelayStepRow& step : row.run_delay_steps) {
      if (step.end_epoch_ms <= step.start_epoch_ms || step.total_ns == 0) continue;
      if (driver_steps_.size() >= max_windows_) {
        ++driver_steps_left_out_;
        continue;
      }
      driver_steps_.push_back({step.start_epoch_ms * 1'000'000, step.end_epoch_ms * 1'000'000,
                               step.total_ns, std::min(step.busiest_ns, step.total_ns),
                               static_cast<uint32_t>(driver_windows_.size() - 1)});
    }
  }
  process_cpu_ns_ += row.process_cpu_ns;
  if (row.agent_cpu_ns > 0) {
    agent_cpu_ns_ += row.agent_cpu_ns;
    agent_measured_process_cpu_ns_ += row.process_cpu_ns;
  }
}

CpuDuring ApplicationCpuUse::During(int64_t start_ms, int64_t end_ms) const {
  if (end_ms <= start_ms) return CpuDuring{};
  return During(SpansMs{{start_ms, end_ms}});
}

DriverRunDelay ApplicationCpuUse::DriverRunDelayDuring(
    const SpansMs& spans, std::span<const ProcessWindow> python_driver) const {
  DriverRunDelay delay;
  if (driver_windows_.empty() || spans.empty()) return delay;
  for (const ProcessWindow& window : python_driver) {
    if (OverlapNs(spans, window.start_ns, window.end_ns) > 0) delay.python_sampled = true;
  }
  std::vector<double> waited(driver_windows_.size(), 0.0);
  for (const RunDelayStep& step : driver_steps_) {
    const double length = static_cast<double>(step.end_ns - step.start_ns);
    const double fraction = Overlap(spans, step.start_ns, step.end_ns) / length;
    waited[step.window] += fraction * static_cast<double>(step.total_ns);
    delay.total_ns += fraction * static_cast<double>(step.total_ns);
    delay.busiest_ns += fraction * static_cast<double>(step.busiest_ns);
  }
  // The application's other JVMs on the driver's host, each one's windows in time order: their
  // CPU is the application's, not other processes'.
  const CpuUseWindow& first = windows_[driver_windows_.front()];
  std::vector<std::vector<const CpuUseWindow*>> neighbours(jvms_.size());
  for (const CpuUseWindow& window : windows_) {
    if (window.jvm != first.jvm && jvms_[window.jvm].host == jvms_[first.jvm].host) {
      neighbours[window.jvm].push_back(&window);
    }
  }
  for (auto& list : neighbours) {
    std::sort(list.begin(), list.end(), [](const CpuUseWindow* a, const CpuUseWindow* b) {
      return a->start_ns < b->start_ns;
    });
  }
  // The Python driver program's windows over [start, end) ns, in proportion to their overlap
  // with it and with the spans: its CPU (the application's) and its main thread's run delay.
  auto python_during = [&python_driver, &spans](int64_t start, int64_t end, double& cpu,
                                                double& run_delay) {
    cpu = run_delay = 0;
    auto it = std::partition_point(python_driver.begin(), python_driver.end(),
                                   [start](const ProcessWindow& w) { return w.end_ns <= start; });
    for (; it != python_driver.end() && it->start_ns < end; ++it) {
      if (it->end_ns <= it->start_ns) continue;
      const int64_t from = std::max(start, it->start_ns);
      const int64_t to = std::min(end, it->end_ns);
      if (to <= from) continue;
      const double length = static_cast<double>(it->end_ns - it->start_ns);
      cpu += static_cast<double>(to - from) / length * static_cast<double>(it->cpu_ns);
      run_delay += Overlap(spans, from, to) / length * static_cast<double>(it->run_delay_ns);
    }
  };
  // Their CPU over [start, end) ns, each window in proportion to its overlap.
  auto neighbours_cpu_ns = [&neighbours](double start, double end) {
    double cpu = 0;
    for (const auto& list : neighbours) {
      auto it = std::partition_point(list.begin(), list.end(), [start](const CpuUseWindow* w) {
        return static_cast<double>(w->end_ns) <= start;
      });
      for (; it != list.end() && static_cast<double>((*it)->start_ns) < end; ++it) {
        const double overlap = std::min(end, static_cast<double>((*it)->end_ns)) -
                               std::max(start, static_cast<double>((*it)->start_ns));
        if (overlap > 0) {
          cpu += overlap / static_cast<double>((*it)->end_ns - (*it)->start_ns) *
                 static_cast<double>((*it)->process_cpu_ns);
        }
      }
    }
    return cpu;
  };
  double others_cpu_ns = 0;
  for (size_t i = 0; i < driver_windows_.size(); ++i) {
    const CpuUseWindow& window = windows_[driver_windows_[i]];
    const double start = static_cast<double>(window.start_ns);
    const double end = static_cast<double>(window.end_ns);
    const double in_spans = Overlap(spans, window.start_ns, window.end_ns);
    if (in_spans <= 0) continue;
    delay.covered_s += in_spans / 1e9;
    const double fraction = in_spans / (end - start);
    double python_cpu = 0, python_waited = 0;
    if (!python_driver.empty()) {
      python_during(window.start_ns, window.end_ns, python_cpu, python_waited);
      delay.python_ns += python_waited;
    }
    double others = 0;
    if (window.host_cpus > 0 && window.host_total_ns > 0) {
      // The window's rates, over its part of the spans.
      const double per_total =
          (end - start) * window.host_cpus / static_cast<double>(window.host_total_ns);
      const double busy = per_total * static_cast<double>(window.host_busy_ns);
      const double steal = per_total * static_cast<double>(window.host_steal_ns);
      const double application =
          static_cast<double>(window.process_cpu_ns) + neighbours_cpu_ns(start, end) + python_cpu;
      others = (std::max(0.0, busy - application) + steal) * fraction;
      others_cpu_ns += others;
    }
    const double throttled = static_cast<double>(window.cgroup_throttled_ns) * fraction;
    delay.others_ns += std::min(waited[i] + python_waited, others + throttled);
  }
  if (delay.covered_s > 0) delay.others_cpus = others_cpu_ns / (delay.covered_s * 1e9);
  return delay;
}

CpuDuring ApplicationCpuUse::During(const SpansMs& spans) const {
  CpuDuring during;
  double span_ns = 0;
  for (const auto& [start, end] : spans)
    span_ns += static_cast<double>(std::max<int64_t>(0, end - start)) * 1e6;
  if (span_ns <= 0) return during;
  during.span_s = span_ns / 1e9;

  // Per JVM, over the part of the span its windows cover: its own CPU, its host's counters, its
  // cgroup's counters (each window in proportion to its overlap).
  struct JvmSums {
    double covered_ns = 0, process_ns = 0;
    double host_covered_ns = 0, host_busy_ns = 0, host_steal_ns = 0;
    uint32_t host_cpus = 0;
    double periods = 0, throttled_periods = 0, throttled_ns = 0;
    bool cgroup = false;
    uint32_t min_quota = 0;
  };
  std::vector<JvmSums> sums(jvms_.size());
  for (const CpuUseWindow& window : windows_) {
    const double overlap = Overlap(spans, window.start_ns, window.end_ns);
    if (overlap <= 0) continue;
    const double fraction = overlap / static_cast<double>(window.end_ns - window.start_ns);
    JvmSums& jvm = sums[window.jvm];
    jvm.covered_ns += overlap;
    jvm.process_ns += fraction * static_cast<double>(window.process_cpu_ns);
    if (window.host_cpus > 0 && window.host_total_ns > 0) {
      jvm.host_covered_ns += overlap;
      // Busy and steal as shares of the host's own clock (ticks), times the window's wall.
      const double per_total =
          overlap * window.host_cpus / static_cast<double>(window.host_total_ns);
      jvm.host_busy_ns += per_total * static_cast<double>(window.host_busy_ns);
      jvm.host_steal_ns += per_total * static_cast<double>(window.host_steal_ns);
      jvm.host_cpus = std::max(jvm.host_cpus, window.host_cpus);
    }
    if (window.cgroup_version != 0) {
      jvm.cgroup = true;
      jvm.periods += fraction * static_cast<double>(window.cgroup_periods);
      jvm.throttled_periods += fraction * static_cast<double>(window.cgroup_throttled_periods);
      jvm.throttled_ns += fraction * static_cast<double>(window.cgroup_throttled_ns);
      if (window.cgroup_quota_millicpus > 0 &&
          (jvm.min_quota == 0 || window.cgroup_quota_millicpus < jvm.min_quota)) {
        jvm.min_quota = window.cgroup_quota_millicpus;
      }
    }
  }

  // Per host: the best-covering JVM's host rates; every JVM's own rate, over the span.
  std::map<std::string, HostCpuDuring> hosts;
  std::map<std::string, double> best_cover;
  for (size_t i = 0; i < jvms_.size(); ++i) {
    const JvmSums& jvm = sums[i];
    if (jvm.covered_ns <= 0) continue;
    HostCpuDuring& host = hosts[jvms_[i].host];
    host.host = jvms_[i].host;
    host.application_cpus += jvm.process_ns / jvm.covered_ns;
    if (jvm.host_covered_ns > best_cover[jvms_[i].host]) {
      best_cover[jvms_[i].host] = jvm.host_covered_ns;
      host.cpus = jvm.host_cpus;
      host.busy_cpus = jvm.host_busy_ns / jvm.host_covered_ns;
      host.steal_cpus = jvm.host_steal_ns / jvm.host_covered_ns;
    }
    if (jvms_[i].executor_id != "driver") {
      ++during.executor_jvms;
      if (jvm.min_quota > 0) {
        ++during.executors_with_quota;
        during.quota_cpus += jvm.min_quota / 1000.0;
      }
    }
    if (jvm.cgroup) {
      ++during.cgroup_jvms;
      if (jvm.throttled_periods >= 0.5) ++during.throttled_jvms;
      during.periods += static_cast<uint64_t>(std::llround(jvm.periods));
      during.throttled_periods += static_cast<uint64_t>(std::llround(jvm.throttled_periods));
      during.throttled_ns += jvm.throttled_ns;
      if (jvm.min_quota > 0 &&
          (during.min_quota_millicpus == 0 || jvm.min_quota < during.min_quota_millicpus)) {
        during.min_quota_millicpus = jvm.min_quota;
      }
    }
  }
  for (auto& [name, host] : hosts) {
    if (host.cpus == 0) continue;  // no host figures: nothing to tell apart
    during.hosts.push_back(host);
  }
  return during;
}

}  // namespace sparkprof::profile
