// Memory around the application's JVMs (the agent's Batch.memory, native-agent/memory_use.h;
// issue 29): per JVM, its last reading and the largest of each figure over the run, for what an
// executor used before it was lost and how close it came to its container's limit. At most
// kMaxJvms JVMs are kept (docs/limits.md); later ones are counted.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "flamegraph/profile_file_reader.h"

namespace sparkprof::profile {

struct MemoryReading {
  int64_t time_ms = -1;  // the batch's end
  uint64_t rss_bytes = 0;
  uint64_t rss_peak_bytes = 0;
  uint32_t threads = 0;
  uint8_t cgroup_version = 0;
  uint64_t container_usage_bytes = 0;
  uint64_t container_limit_bytes = 0;  // 0: no limit
  uint64_t container_peak_bytes = 0;
  uint64_t container_anon_bytes = 0;
  uint64_t container_file_bytes = 0;
  uint64_t container_oom_kills = 0;  // the cgroup's OOM-kill count, since the cgroup was made
  bool container_oom_kills_counted = false;  // the kernel keeps it (and the agent sent it)
  uint32_t python_processes = 0;
  uint64_t python_rss_bytes = 0;
  // The JVM's own accounts (0: not reported; native-agent/jvm_counters.h).
  uint64_t heap_used_bytes = 0;
  uint64_t heap_committed_bytes = 0;
  uint64_t heap_max_bytes = 0;
  uint64_t heap_used_after_gc_bytes = 0;
  uint64_t old_used_after_gc_bytes = 0;
  uint64_t old_used_bytes = 0;  // the "old" pool, 0 without one
  uint64_t old_max_bytes = 0;
  uint64_t metaspace_used_bytes = 0;
  uint64_t direct_buffer_bytes = 0;
  uint64_t direct_buffer_max_bytes = 0;
  uint64_t mapped_buffer_bytes = 0;
  uint32_t java_threads = 0;
  uint64_t gc_collections = 0;
  uint64_t spark_execution_bytes = 0;
  uint64_t spark_storage_bytes = 0;
};

// One point of a JVM's memory over time: the batch's end and the figures a kill is judged by.
// When a JVM's points pass kMaxTimelinePoints, neighbours are merged (the later time, each
// figure's larger value), so a spike is never averaged away.
struct MemoryPoint {
  int64_t time_ms = 0;
  uint64_t rss_bytes = 0;
  uint64_t container_usage_bytes = 0;
  uint64_t heap_used_bytes = 0;  // the window's peak where reported, else the reading
  uint64_t python_rss_bytes = 0;
};

struct JvmMemory {
  std::string executor_id;
  std::string host;
  int32_t pid = 0;
  uint64_t readings = 0;
  MemoryReading last;  // the latest by time
  // The largest over the readings: resident set (its high-water mark included), the container's
  // usage (its kernel-kept peak included), the Python processes' resident sets.
  uint64_t max_rss_bytes = 0;
  uint64_t max_container_bytes = 0;
  uint64_t max_python_rss_bytes = 0;
  // The JVM's own accounts, largest over the readings (0: never reported).
  bool jvm_accounts = false;         // some reading carried them
  uint64_t max_heap_used_bytes = 0;  // the windows' peaks (about one reading a second)
  uint64_t max_heap_after_gc_bytes = 0;
  uint64_t max_old_after_gc_bytes = 0;
  uint64_t max_metaspace_bytes = 0;
  uint64_t max_direct_buffer_bytes = 0;
  uint64_t max_mapped_buffer_bytes = 0;
  uint64_t max_spark_execution_bytes = 0;
  uint64_t max_spark_storage_bytes = 0;
  // In time order, at most kMaxTimelinePoints; empty for JVMs past kMaxTimelineJvms.
  std::vector<MemoryPoint> timeline;
  // The kernel's OOM kills in this JVM's memory cgroup while it reported: its count at the
  // earliest reading (kills before it are not its own) and at the latest, and the first reading
  // that saw it rise after a lower one (the kill fell in (before_ms, at_ms]; -1: none seen).
  // A Python worker (or any process but the JVM) killed at the container's limit is told here;
  // a JVM killed itself reports nothing more.
  int64_t earliest_ms = -1;         // the earliest reading's time
  uint64_t oom_kills_at_start = 0;  // the count at the latest is last.container_oom_kills
  int64_t first_oom_kill_before_ms = -1;
  int64_t first_oom_kill_at_ms = -1;
  uint64_t oom_kills() const {
    return last.container_oom_kills - std::min(last.container_oom_kills, oom_kills_at_start);
  }
};

class ApplicationMemoryUse {
 public:
  static constexpr size_t kMaxJvms = 100'000;
  // Timelines: the first kMaxTimelineJvms JVMs keep one, of at most kMaxTimelinePoints points
  // (about 40 bytes each: ~2.4 MB at the limits).
  static constexpr size_t kMaxTimelineJvms = 1'000;
  static constexpr size_t kMaxTimelinePoints = 60;

  static void Receive(void* context, const flamegraph::MemoryUseRow& row);
  void Add(const flamegraph::MemoryUseRow& row);

  bool empty() const { return jvms_.empty(); }
  uint64_t jvms_left_out() const { return jvms_left_out_; }
  // The JVM of an executor id (the one with the latest reading when an id had several: a
  // restarted driver); null when none reported memory.
  const JvmMemory* Find(const std::string& executor_id) const;
  const std::vector<JvmMemory>& jvms() const { return jvms_; }

 private:
  static void AddPoint(std::vector<MemoryPoint>& timeline, const MemoryPoint& point);
  std::vector<JvmMemory> jvms_;
  std::map<std::pair<std::string, int32_t>, size_t> index_;
  uint64_t jvms_left_out_ = 0;
};

}  // namespace sparkprof::profile
