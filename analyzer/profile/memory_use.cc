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
  reading.python_processes = row.python_processes;
  reading.python_rss_bytes = row.python_rss_bytes;
  ++jvm.readings;
  if (jvm.readings == 1 || reading.time_ms >= jvm.last.time_ms) jvm.last = reading;
  jvm.max_rss_bytes = std::max({jvm.max_rss_bytes, row.rss_bytes, row.rss_peak_bytes});
  jvm.max_container_bytes =
      std::max({jvm.max_container_bytes, row.cgroup_usage_bytes, row.cgroup_peak_bytes});
  jvm.max_python_rss_bytes = std::max(jvm.max_python_rss_bytes, row.python_rss_bytes);
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
