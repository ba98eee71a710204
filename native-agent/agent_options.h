// Agent options: `-agentpath:/path/libsparkprof.so=key=value,key=value`. Documented in one table
// in docs/agent.md; keep that table in step with kOptionHelp below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "native-agent/sampler.h"

namespace sparkprof::agent {

enum class WalkerChoice { kAsyncGetCallTrace, kJvmti };

inline constexpr uint64_t kDefaultRingMemoryBytes = uint64_t{256} << 20;  // `ringmemory=256m`

struct AgentOptions {
  SamplingMode mode = SamplingMode::kCpuWall;
  int64_t interval_ns = 10'000'000;  // 10 ms
  std::string out_path;              // "" = no standalone files; "%p" becomes the pid
  int64_t dump_seconds = 0;          // 0 = write files only at JVM exit
  int depth = 64;                    // frames kept per sample
  uint32_t ring = 32;                // sample slots per thread ring (rounded up to a power of 2)
  // All threads' rings together (ring_budget.h): rings shrink, then threads go unprofiled.
  uint64_t ring_memory_bytes = kDefaultRingMemoryBytes;
  uint32_t max_stacks = 20'000;  // distinct stacks per profile; more fold into "[overflow]"
  std::string prometheus;        // "HOST:PORT" or "PORT"; "" = no /metrics server
  WalkerChoice walker = WalkerChoice::kAsyncGetCallTrace;  // `walker=jvmti` forces the fallback
  std::string executor_id;  // `executor=`; "" = not given: "driver" until the plugin names it
  // `vmstructs=off`: the walker never reads or mends HotSpot's structures (anchor repair, stub
  // step-over; hotspot_layout.h), AsyncGetCallTrace alone.
  bool vm_structs = true;
  // `jvmthreads=off`: the GC/JIT/VM threads' CPU is not polled (jvm_internal_threads.h).
  bool jvm_internal_threads = true;
  // `monitors=off`: no JVMTI monitor contention events (monitor_waits.h).
  bool monitor_waits = true;
};

// Executor ids are 1..kMaxExecutorIdBytes bytes of well-formed UTF-8 without control characters:
// they travel in every batch and in the agent's status JSON and log lines.
inline constexpr size_t kMaxExecutorIdBytes = 256;
Status ValidateExecutorId(std::string_view id);

// Parses the option string (may be empty). Unknown keys, bad values and out-of-range numbers are
// errors whose message names the key, the value and what is allowed.
Result<AgentOptions> ParseAgentOptions(std::string_view text);

// "256m", "1g", "65536k", "1048576" (bytes); k, m, g are binary (KiB, MiB, GiB).
Result<uint64_t> ParseBytes(std::string_view text);

// "10ms", "500us", "1s", "2500000ns"; a bare number means milliseconds.
Result<int64_t> ParseDurationNs(std::string_view text);

// `out` with "%p" replaced by the process id.
std::string ExpandOutPath(const std::string& pattern, int pid);

extern const char kOptionHelp[];

}  // namespace sparkprof::agent
