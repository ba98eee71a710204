// Memory around the application's JVMs (the agent's Batch.memory, native-agent/memory_use.h;
// issue 29): per JVM, its last reading and the largest of each figure over the run, for what an
// executor used before it was lost and how close it came to its container's limit. At most
// kMaxJvms JVMs are kept (docs/limits.md); later ones are counted.
#pragma once

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
  uint32_t python_processes = 0;
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
};

class ApplicationMemoryUse {
 public:
  static constexpr size_t kMaxJvms = 100'000;

  static void Receive(void* context, const flamegraph::MemoryUseRow& row);
  void Add(const flamegraph::MemoryUseRow& row);

  bool empty() const { return jvms_.empty(); }
  uint64_t jvms_left_out() const { return jvms_left_out_; }
  // The JVM of an executor id (the one with the latest reading when an id had several: a
  // restarted driver); null when none reported memory.
  const JvmMemory* Find(const std::string& executor_id) const;
  const std::vector<JvmMemory>& jvms() const { return jvms_; }

 private:
  std::vector<JvmMemory> jvms_;
  std::map<std::pair<std::string, int32_t>, size_t> index_;
  uint64_t jvms_left_out_ = 0;
};

}  // namespace sparkprof::profile
