// CPU use around the application's JVMs (the agent's Batch.cpu, native-agent/cpu_use.h): each
// JVM's windows of host, process and cgroup CPU, and what they say about a span of time -- a
// stage's -- in average CPUs, so that a task thread's run delay can be told apart:
//   * other processes on the host: the host's busy time beyond this application's JVMs on it
//     (the driver's too when it was sampled; otherwise the driver counts as another process);
//   * the hypervisor: steal time;
//   * the container's CPU quota: CFS throttling of the JVM's cgroup.
// A window counts in proportion to its overlap with the span; a host's figures are the ones of
// the JVM on it that covered the span best, as rates over the time it covered (each JVM on a
// host reads the same host counters). At most ProfileLoadOptions::max_cpu_windows windows are
// kept (docs/limits.md); later ones are counted and named as a problem. The driver JVM's
// run-delay steps (every thread of it, polled about every 250 ms) are kept too, as many, to tell
// how long the driver waited for CPUs while no task ran.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/profile/spans.h"
#include "flamegraph/profile_file_reader.h"

namespace sparkprof::profile {

struct CpuUseWindow {
  uint32_t jvm = 0;  // index into ApplicationCpuUse::jvms
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t host_cpus = 0;  // 0: no host figures in this window
  uint64_t host_busy_ns = 0;
  uint64_t host_steal_ns = 0;
  uint64_t host_total_ns = 0;
  uint64_t process_cpu_ns = 0;
  uint8_t cgroup_version = 0;
  uint32_t cgroup_quota_millicpus = 0;
  uint64_t cgroup_periods = 0;
  uint64_t cgroup_throttled_periods = 0;
  uint64_t cgroup_throttled_ns = 0;
  uint64_t agent_cpu_ns = 0;  // the agent's own CPU in the window (0 from older agents)
};

// A driver JVM's run-delay step (schema RunDelayStep): its threads waited total_ns for a CPU
// together between two polls, the longest-waiting one busiest_ns.
struct RunDelayStep {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t total_ns = 0;
  uint64_t busiest_ns = 0;
  uint32_t window = 0;  // the driver's polled window it came in (index into its list)
};

// The driver's threads' run delay over some spans: each step in proportion to its overlap.
struct DriverRunDelay {
  double covered_s = 0;   // of the spans, the time the driver's polled windows covered
  double total_ns = 0;    // every thread's run delay, summed
  double busiest_ns = 0;  // step by step, the one thread that waited longest
  // Window by window, the part of that wait other processes explain: at most what they (and
  // steal) used on the driver's host in the window's part of the spans, plus what its cgroup
  // was throttled there -- others being the host's busy time beyond the application's JVMs on it.
  double others_ns = 0;
  double others_cpus = 0;  // their average over the covered time
  // The Python driver program's main thread's run delay in the spans (its sampler's windows in
  // proportion to their overlap; 0 without it). Not in total_ns or busiest_ns; in others_ns's
  // bound (the window's waits together).
  double python_ns = 0;
  bool python_sampled = false;  // some Python driver window overlaps the spans
};

struct CpuUseJvm {
  std::string executor_id;
  std::string host;
  int32_t pid = 0;
};

// One host while the span ran, in average CPUs over the span.
struct HostCpuDuring {
  std::string host;
  uint32_t cpus = 0;
  double busy_cpus = 0;         // every process's CPU, this application's included
  double application_cpus = 0;  // this application's JVMs on the host
  double steal_cpus = 0;
  double others_cpus() const {
    return busy_cpus > application_cpus ? busy_cpus - application_cpus : 0;
  }
};

struct CpuDuring {
  double span_s = 0;
  std::vector<HostCpuDuring> hosts;  // by host name
  // The JVMs whose cgroup had a cpu controller, summed over the span.
  uint32_t cgroup_jvms = 0;
  uint32_t throttled_jvms = 0;  // JVMs throttled at least once
  uint64_t periods = 0;
  uint64_t throttled_periods = 0;
  double throttled_ns = 0;           // summed over the JVMs' cgroups and their CPUs
  uint32_t min_quota_millicpus = 0;  // the smallest quota seen (0: none)
  // The executors' JVMs (every JVM but the driver's) over the span, and of them those with a
  // quota, whose quotas (each JVM's smallest) add up to quota_cpus: when every executor has one,
  // the executors together could never run more than quota_cpus x span.
  uint32_t executor_jvms = 0;
  uint32_t executors_with_quota = 0;
  double quota_cpus = 0;

  bool has_hosts() const { return !hosts.empty(); }
  uint32_t cpus() const;
  double busy_cpus() const;
  double application_cpus() const;
  double others_cpus() const;
  double steal_cpus() const;
};

class ApplicationCpuUse {
 public:
  explicit ApplicationCpuUse(size_t max_windows = 200'000) : max_windows_(max_windows) {}

  // For ProfileFileReadOptions::cpu_use (context: this table).
  static void Receive(void* context, const flamegraph::CpuUseRow& row);
  void Add(const flamegraph::CpuUseRow& row);

  bool empty() const { return windows_.empty(); }
  size_t windows() const { return windows_.size(); }
  uint64_t windows_left_out() const { return windows_left_out_; }
  const std::vector<CpuUseJvm>& jvms() const { return jvms_; }

  // Summed over every window kept: the JVMs' CPU, the agents' own CPU, and the JVMs' CPU in the
  // windows whose agent measured its own (what agent_cpu_ns is a share of).
  uint64_t process_cpu_ns() const { return process_cpu_ns_; }
  uint64_t agent_cpu_ns() const { return agent_cpu_ns_; }
  uint64_t agent_measured_process_cpu_ns() const { return agent_measured_process_cpu_ns_; }

  // What the hosts and cgroups did over [start_ms, end_ms] (epoch ms); empty hosts when no
  // window overlaps it.
  CpuDuring During(int64_t start_ms, int64_t end_ms) const;
  // The same over several spans (span_s: their length summed).
  CpuDuring During(const SpansMs& spans) const;

  // The driver JVM's run-delay steps kept (at most max_windows; later ones are counted).
  size_t driver_run_delay_steps() const { return driver_steps_.size(); }
  uint64_t driver_run_delay_steps_left_out() const { return driver_steps_left_out_; }
  // `python_driver`: the Python driver program's windows (DriverProfile::PythonWindows, by start)
  // when its sampler ran: its CPU is the application's, not another process's, and its main
  // thread's run delay is the driver's wait too (DriverRunDelay::python_ns).
  DriverRunDelay DriverRunDelayDuring(const SpansMs& spans,
                                      std::span<const ProcessWindow> python_driver = {}) const;

 private:
  size_t max_windows_;
  std::vector<CpuUseJvm> jvms_;
  std::map<std::pair<std::string, int32_t>, uint32_t> jvm_index_;  // (executor id, pid)
  std::vector<CpuUseWindow> windows_;
  uint64_t windows_left_out_ = 0;
  uint64_t process_cpu_ns_ = 0;
  uint64_t agent_cpu_ns_ = 0;
  uint64_t agent_measured_process_cpu_ns_ = 0;
  // The driver's: its polled windows (indices into windows_) and the steps with run delay.
  std::vector<size_t> driver_windows_;
  std::vector<RunDelayStep> driver_steps_;
  uint64_t driver_steps_left_out_ = 0;
};

}  // namespace sparkprof::profile
