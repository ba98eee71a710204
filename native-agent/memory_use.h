// Memory around this JVM, read once per batch (schema/profile.fbs, MemoryUse; issue 29): what a
// container's memory kill is measured against. The process's resident set (/proc/self/statm) and
// its high-water mark (VmHWM), its thread count; its memory cgroup (v1: memory.usage_in_bytes,
// memory.limit_in_bytes, memory.max_usage_in_bytes, memory.stat's total_rss/total_cache; v2:
// memory.current, memory.max, memory.peak, memory.stat's anon/file; and how many processes the
// kernel's OOM killer ended in it: v2 memory.events' oom_kill, v1 memory.oom_control's, kernels
// since 4.13 -- a Python worker killed at the container's limit leaves the JVM alive to say so),
// found as the cpu one is
// (cpu_use.h, LocateCgroup); and the Python processes below this JVM (PySpark's daemon and its
// forked workers: descendants whose command name starts with "python"), their resident sets
// summed -- an upper bound, since forked workers share pages with the daemon.
// Read on the drain thread, never in a signal handler. What cannot be read stays 0.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkprof::agent {

struct MemoryUseReading {
  uint64_t rss_bytes = 0;
  uint64_t rss_peak_bytes = 0;  // the process's high-water mark since it started
  uint32_t threads = 0;
  int cgroup_version = 0;  // 0: no memory controller found
  uint64_t cgroup_usage_bytes = 0;
  uint64_t cgroup_limit_bytes = 0;  // 0: no limit
  uint64_t cgroup_peak_bytes = 0;   // 0: the kernel keeps none (v2 before 5.19)
  uint64_t cgroup_anon_bytes = 0;
  uint64_t cgroup_file_bytes = 0;         // page cache: reclaimable before a kill
  uint64_t cgroup_oom_kills = 0;          // since the cgroup was made
  bool cgroup_oom_kills_counted = false;  // the kernel keeps the count (v1 before 4.13 does not)
  uint32_t python_processes = 0;
  uint64_t python_rss_bytes = 0;
};

// "size resident shared ..." (pages) of /proc/<pid>/statm: resident x page_size.
std::optional<uint64_t> ParseStatmResidentBytes(std::string_view text, uint64_t page_size);
// A "Name:  value kB" line of /proc/<pid>/status, in bytes (or the plain count for Threads).
std::optional<uint64_t> StatusValue(std::string_view text, std::string_view name);
// A limit file: v1 memory.limit_in_bytes (2^63-ish = none) or v2 memory.max ("max" = none): 0
// for none.
std::optional<uint64_t> ParseMemoryLimit(std::string_view text);
// The pids in a /proc/<pid>/task/<tid>/children file ("12 34 ").
std::vector<pid_t> ParseChildren(std::string_view text);

class MemoryUseMeter {
 public:
  struct Paths {
    std::string proc = "/proc";
  };
  MemoryUseMeter() : MemoryUseMeter(Paths{}) {}
  explicit MemoryUseMeter(Paths paths);

  MemoryUseReading Read() const;
  int cgroup_version() const { return cgroup_version_; }
  const std::string& cgroup_directory() const { return cgroup_directory_; }

  // Descendant processes walked at most (the Python workers of an executor are tens).
  static constexpr size_t kMaxDescendants = 512;

 private:
  void ReadPython(MemoryUseReading& reading) const;

  Paths paths_;
  std::string cgroup_directory_;
  int cgroup_version_ = 0;
  uint64_t page_size_ = 4096;
};

}  // namespace sparkprof::agent
