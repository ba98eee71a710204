// Treats the input as one executor or driver log file (plain text, a YARN aggregated log with
// container sections, kernel lines) or a Kubernetes pod description: the reader must survive any
// bytes, keep its bounds, and every hit must point at a process it knows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "analyzer/executor_logs/executor_logs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkprof::executor_logs;
  LogReadLimits limits;
  limits.scan.max_bytes_per_file = 1 << 20;
  limits.scan.max_lines_per_file = 10'000;
  limits.scan.max_line_bytes = 1024;
  limits.max_hits = 64;
  limits.max_pod_json_bytes = 1 << 20;
  ExecutorLogs logs =
      ReadExecutorLogBytes("fuzz.log", std::string(reinterpret_cast<const char*>(data), size),
                           "application_1_0001", limits);
  if (logs.hits.size() > limits.max_hits) std::abort();
  for (const LogHit& hit : logs.hits) {
    if (hit.process >= logs.processes.size()) std::abort();
    if (hit.text.size() > kMaxHitTextBytes) std::abort();
    (void)ReadingOf(hit, logs.ExecutorOf(hit) == "driver");
  }
  for (const LogProcess& process : logs.processes) (void)logs.CauseFor(process.executor_id);
  return 0;
}
