// Encodes the drain's pending profile into one flatbuffers Batch (schema/profile.fbs): the bytes
// the executor plugin ships to the driver. Only the strings and stacks the batch uses are written,
// re-indexed from the drain's tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "native-agent/cpu_use.h"
#include "native-agent/drain.h"
#include "native-agent/jvm_counters.h"
#include "native-agent/memory_use.h"
#include "native-agent/profile_writers.h"
#include "native-agent/s3a_rows.h"

namespace sparkprof::agent {

struct BatchHeader {
  std::string executor_id;
  std::string host;
  int pid = 0;
  int64_t start_epoch_ns = 0;
  int64_t end_epoch_ns = 0;
  int64_t interval_ns = 0;
  std::string mode;
};

// The JVM's own memory accounts for a batch's MemoryUse (schema fields after python_rss_bytes).
struct JvmMemoryFigures {
  uint64_t heap_used_bytes = 0;       // Runtime's figures, else the counters'
  JvmMemoryReading counters;          // known = false: the counters were not found
  uint64_t heap_used_peak_bytes = 0;  // over the batch's window
  JavaMemoryReading java;
  uint64_t spark_execution_bytes = 0;
  uint64_t spark_storage_bytes = 0;
};

// A monitor wait row (schema MonitorWait) with its names as the drain's string ids.
struct MonitorWaitRow {
  int32_t stage_id = -1;
  int32_t stage_attempt = -1;
  uint32_t monitor_class = 0;
  std::vector<uint32_t> waiter;  // root first; empty: not taken
  std::vector<uint32_t> holder;
  int64_t holder_thread = -1;  // string id, -1: unknown
  uint64_t waits = 0;
  uint64_t wait_ns = 0;
};

std::vector<uint8_t> EncodeBatch(const BatchHeader& header, const Profile& pending,
                                 const StringTable& strings, const std::vector<GcPause>& pauses,
                                 const HealthSnapshot& health, const std::vector<S3aRow>& s3a = {},
                                 const CpuUseDelta* cpu = nullptr,
                                 const MemoryUseReading* memory = nullptr,
                                 const std::vector<MonitorWaitRow>& monitors = {},
                                 const JvmMemoryFigures* jvm_memory = nullptr);

}  // namespace sparkprof::agent
