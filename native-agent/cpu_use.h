// CPU use around this JVM, read once per batch (schema/profile.fbs, CpuUse): what tells a task
// thread's run delay (cpu_starved) apart. A thread is runnable but not running because
//   - the container's CPU quota ran out for this period (CFS throttling: the cgroup's cpu.stat
//     counts throttled periods and time),
//   - other processes on the host held the CPUs (the host's busy time in /proc/stat beyond what
//     this application's JVMs used), or the hypervisor did (steal), or
//   - this JVM's own threads outnumbered the CPUs.
// Sources: /proc/stat's "cpu" line, the online CPU count, CLOCK_PROCESS_CPUTIME_ID, and the cpu
// controller of the process's cgroup (v1: cpu.cfs_quota_us, cpu.cfs_period_us, cpu.stat's
// nr_periods/nr_throttled/throttled_time; v2: cpu.max, cpu.stat's nr_periods/nr_throttled/
// throttled_usec), found through /proc/self/cgroup and /proc/self/mountinfo.
// Read on the drain thread, never in a signal handler. Every file is optional: what cannot be
// read is left at 0 (host_cpus 0, cgroup_version 0) and the rest is still reported.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "native-agent/schedstat.h"

namespace sparkprof::agent {

// /proc/stat's aggregate "cpu" line, in clock ticks.
struct HostTicks {
  uint64_t busy = 0;   // user + nice + system + irq + softirq (guest time is inside user)
  uint64_t idle = 0;   // idle + iowait
  uint64_t steal = 0;  // the hypervisor ran someone else
  uint64_t total() const { return busy + idle + steal; }
};
// The first line of /proc/stat ("cpu  u n s i w irq softirq steal ..."); nullopt when it is not.
std::optional<HostTicks> ParseProcStatCpuLine(std::string_view text);

// Where the process's cgroup for a controller ("cpu", "memory") is: the v1 hierarchy whose
// controllers include it, and the v2 (unified) hierarchy, with the process's path in each
// (/proc/self/cgroup).
struct CgroupMembership {
  std::string v1_path;  // "" when no v1 hierarchy has the controller
  std::string v2_path;  // "" when the process is in no unified hierarchy
  bool has_v1 = false;
  bool has_v2 = false;
};
CgroupMembership ParseProcCgroup(std::string_view text, std::string_view controller);

// The mount points of the v1 hierarchy with `controller` and of cgroup2 (/proc/self/mountinfo),
// each with the root of the hierarchy that mount shows (a container sees its own cgroup as "/").
struct CgroupMounts {
  std::string v1_mount, v1_root;
  std::string v2_mount, v2_root;
};
CgroupMounts ParseMountinfo(std::string_view text, std::string_view controller);

// The directory of the process's cgroup under `mount`: `path` below `root` (a path outside the
// mount's root -- another namespace's view -- is read at the mount itself).
std::string CgroupDirectory(const std::string& mount, const std::string& root,
                            const std::string& path);

// The process's cgroup directory for `controller` under `proc` ("/proc"): v1 first when a file
// `v1_probe` is readable there, else v2 when `v2_probe` is; version 0 and "" when neither.
struct CgroupLocation {
  int version = 0;
  std::string directory;
};
CgroupLocation LocateCgroup(const std::string& proc, std::string_view controller,
                            std::string_view v1_probe, std::string_view v2_probe);

// Small files only: the first `limit` bytes ("" when the file cannot be read).
std::string ReadSmallFile(const std::string& path, size_t limit = 64 * 1024);

// A cgroup's cpu limits and counters.
struct CgroupCpu {
  int version = 0;               // 0: none found
  uint32_t quota_millicpus = 0;  // 0: no quota
  uint64_t periods = 0;
  uint64_t throttled_periods = 0;
  uint64_t throttled_ns = 0;
};
// A whole decimal number, trailing newlines and spaces allowed ("12345\n"); nullopt for anything
// else (the /proc and cgroup files' values).
template <typename T>
std::optional<T> ParseNumber(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  T value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "name value" lines of a cgroup stat file (cpu.stat, memory.stat): the value of `key`, nullopt
// when absent.
std::optional<uint64_t> StatFileValue(std::string_view text, std::string_view key);
// v2 cpu.max ("max 100000" or "50000 100000"): the quota in thousandths of a CPU, 0 for none.
std::optional<uint32_t> ParseCpuMax(std::string_view text);
// v1 cpu.cfs_quota_us (-1 for none) and cpu.cfs_period_us.
std::optional<uint32_t> ParseCfsQuota(std::string_view quota_us, std::string_view period_us);

// Cumulative counters at one instant.
struct CpuUseReading {
  uint32_t host_cpus = 0;  // 0: /proc/stat unreadable
  uint64_t host_busy_ns = 0;
  uint64_t host_steal_ns = 0;
  uint64_t host_total_ns = 0;
  uint64_t process_cpu_ns = 0;
  CgroupCpu cgroup;
  // The agent's own CPU (agent_cpu.h); filled by the agent per batch, not by the meter.
  uint64_t agent_cpu_ns = 0;
  // The JVM's threads' run delay (schedstat.h, ProcessRunDelay::Take); filled by the agent per
  // batch, not by the meter.
  uint32_t run_delay_polls = 0;
  uint64_t run_delay_ns = 0;
  std::vector<RunDelayStep> run_delay_steps;
};

// One batch's window: counters as differences since the previous TakeDelta (or since the meter
// started), gauges (CPU count, quota) as read now. Counters that went backwards (a cgroup moved,
// a counter reset) give 0.
using CpuUseDelta = CpuUseReading;

class CpuUseMeter {
 public:
  struct Paths {
    std::string proc = "/proc";  // proc/stat, proc/self/cgroup, proc/self/mountinfo
  };
  CpuUseMeter() : CpuUseMeter(Paths{}) {}
  explicit CpuUseMeter(Paths paths);

  CpuUseDelta TakeDelta();
  // Where the cgroup's files are read ("" when no cpu controller was found), for the log line.
  const std::string& cgroup_directory() const { return cgroup_directory_; }
  int cgroup_version() const { return cgroup_version_; }

 private:
  CpuUseReading Read() const;

  Paths paths_;
  std::string cgroup_directory_;
  int cgroup_version_ = 0;
  int64_t tick_ns_ = 10'000'000;
  CpuUseReading last_;
};

}  // namespace sparkprof::agent
