#include "analyzer/profile/memory_use.h"

#include <algorithm>

namespace sparkprof::profile {

void ApplicationMemoryUse::Receive(void* context, const flamegraph::MemoryUseRow& row) {
  static_cast<ApplicationMemoryUse*>(context)->Add(row);
}

void ApplicationMemoryUse::Add(const flamegraph::MemoryUseRow& row) {
  const std::pair<std::string, int32_t> key(std::string(row.executor_id.substr(0, 256)), row.pid);
  auto it = index_.find(key);
  if (it == index_.end()) {
    if (jvms_.size() >= kMaxJvms) {
      ++jvms_left_out_;
      return;
    }
    it = index_.emplace(key, jvms_.size()).first;
    jvms_.push_back({key.first, std::string(row.host.substr(0, 256)), row.pid});
  }
  JvmMemory& jvm = jvms_[it->second];
  MemoryReading reading;
  reading.time_ms = row.end_epoch_ns / 1'000'000;
  reading.rss_bytes = row.rss_bytes;
  reading.rss_peak_bytes = row.rss_peak_bytes;
  reading.threads = row.threads;
  reading.cgroup_version = row.cgroup_version;
  reading.container_usage_bytes = row.cgroup_usage_bytes;
  reading.container_limit_bytes = row.cgroup_limit_bytes;
  reading.container_peak_bytes = row.cgroup_peak_bytes;
  reading.container_anon_bytes = row.cgroup_anon_bytes;
  reading.container_file_bytes = row.cgroup_file_bytes;
  reading.container_oom_kills = row.cgroup_oom_kills;
  reading.container_oom_kills_counted = row.cgroup_oom_kills_counted;
  reading.python_processes = row.python_processes;
  reading.python_rss_bytes = row.python_rss_bytes;
  reading.heap_used_bytes = row.heap_used_bytes;
  reading.heap_committed_bytes = row.heap_committed_bytes;
  reading.heap_max_bytes = row.heap_max_bytes;
  reading.heap_used_after_gc_bytes = row.heap_used_after_gc_bytes;
  reading.old_used_after_gc_bytes = row.old_used_after_gc_bytes;
  for (const flamegraph::HeapPoolRow& pool : row.heap_pools) {
    if (pool.name == "old") {
      reading.old_used_bytes = pool.used_bytes;
      reading.old_max_bytes = pool.max_bytes;
    }
  }
  reading.metaspace_used_bytes = row.metaspace_used_bytes;
  reading.direct_buffer_bytes = row.direct_buffer_bytes;
  reading.direct_buffer_max_bytes = row.direct_buffer_max_bytes;
  reading.mapped_buffer_bytes = row.mapped_buffer_bytes;
  reading.java_threads = row.java_threads;
  reading.gc_collections = row.gc_collections;
  reading.spark_execution_bytes = row.spark_execution_bytes;
  reading.spark_storage_bytes = row.spark_storage_bytes;
  ++jvm.readings;
  // The OOM-kill count: readings come in time order per JVM; one that does not only moves the
  // start or end count (the first rise is timed only between readings seen in order).
  if (jvm.readings == 1 || reading.time_ms < jvm.earliest_ms) {
    jvm.earliest_ms = reading.time_ms;
    jvm.oom_kills_at_start = reading.container_oom_kills;
  }
  if (jvm.readings > 1 && reading.time_ms >= jvm.last.time_ms &&
      reading.container_oom_kills > jvm.last.container_oom_kills && jvm.first_oom_kill_at_ms < 0) {
    jvm.first_oom_kill_before_ms = jvm.last.time_ms;
    jvm.first_oom_kill_at_ms = reading.time_ms;
  }
  if (jvm.readings == 1 || reading.time_ms >= jvm.last.time_ms) jvm.last = reading;
  jvm.max_rss_bytes = std::max({jvm.max_rss_bytes, row.rss_bytes, row.rss_peak_bytes});
  jvm.max_container_bytes =
      std::max({jvm.max_container_bytes, row.cgroup_usage_bytes, row.cgroup_peak_bytes});
  jvm.max_python_rss_bytes = std::max(jvm.max_python_rss_bytes, row.python_rss_bytes);
  if (row.heap_max_bytes > 0 || row.heap_used_bytes > 0) jvm.jvm_accounts = true;
  const uint64_t heap_peak = std::max(row.heap_used_bytes, row.heap_used_peak_bytes);
  jvm.max_heap_used_bytes = std::max(jvm.max_heap_used_bytes, heap_peak);
  jvm.max_heap_after_gc_bytes = std::max(jvm.max_heap_after_gc_bytes, row.heap_used_after_gc_bytes);
  jvm.max_old_after_gc_bytes = std::max(jvm.max_old_after_gc_bytes, row.old_used_after_gc_bytes);
  jvm.max_metaspace_bytes = std::max(jvm.max_metaspace_bytes, row.metaspace_used_bytes);
  jvm.max_direct_buffer_bytes = std::max(jvm.max_direct_buffer_bytes, row.direct_buffer_bytes);
  jvm.max_mapped_buffer_bytes = std::max(jvm.max_mapped_buffer_bytes, row.mapped_buffer_bytes);
  jvm.max_spark_execution_bytes =
      std::max(jvm.max_spark_execution_bytes, row.spark_execution_bytes);
  jvm.max_spark_storage_bytes = std::max(jvm.max_spark_storage_bytes, row.spark_storage_bytes);
  if (it->second < kMaxTimelineJvms) {
    AddPoint(jvm.timeline, MemoryPoint{reading.time_ms, row.rss_bytes, row.cgroup_usage_bytes,
                                       heap_peak, row.python_rss_bytes});
  }
}

void ApplicationMemoryUse::AddPoint(std::vector<MemoryPoint>& timeline, const MemoryPoint& point) {
  // Batches arrive per executor in time order; a late one is put in its place.
  auto at = std::upper_bound(
      timeline.begin(), timeline.end(), point.time_ms,
      [](int64_t time_ms, const MemoryPoint& other) { return time_ms < other.time_ms; });
  timeline.insert(at, point);
  if (timeline.size() <= kMaxTimelinePoints) return;
  // Full: merge neighbours pairwise (later time, larger figures), halving the points.
  std::vector<MemoryPoint> merged;
  merged.reserve(timeline.size() / 2 + 1);
  for (size_t i = 0; i < timeline.size(); i += 2) {
    MemoryPoint joined = timeline[i];
    if (i + 1 < timeline.size()) {
      const MemoryPoint& next = timeline[i + 1];
      joined.time_ms = next.time_ms;
      joined.rss_bytes = std::max(joined.rss_bytes, next.rss_bytes);
      joined.container_usage_bytes =
          std::max(joined.container_usage_bytes, next.container_usage_bytes);
      joined.heap_used_bytes = std::max(joined.heap_used_bytes, next.heap_used_bytes);
      joined.python_rss_bytes = std::max(joined.python_rss_bytes, next.python_rss_bytes);
    }
    merged.push_back(joined);
  }
  timeline = std::move(merged);
}

const JvmMemory* ApplicationMemoryUse::Find(const std::string& executor_id) const {
  const JvmMemory* found = nullptr;
  for (const JvmMemory& jvm : jvms_) {
    if (jvm.executor_id == executor_id &&
        (found == nullptr || jvm.last.time_ms > found->last.time_ms)) {
      found = &jvm;
    }
  }
  return found;
}

}  // namespace sparkprof::profile
