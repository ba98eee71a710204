// The Prometheus families the driver aggregator exports (names and units in one place).
#pragma once

#include <array>

#include "flamegraph/category.h"
#include "metrics/prometheus_registry.h"

namespace sparkprof::driver {

inline constexpr int kEventAccepted = 0;
inline constexpr int kEventRejected = 1;

struct AggregatorMetrics {
  // Registers every family in `registry`; family names are fixed, so only a duplicate registry
  // use can fail (a bug), reported as a Status.
  static Result<AggregatorMetrics> Register(metrics::PrometheusRegistry& registry);

  prometheus::Family<prometheus::Counter>* batches = nullptr;               // {outcome}
  prometheus::Counter* batch_bytes = nullptr;                               // accepted bytes
  prometheus::Counter* task_time_seconds[flamegraph::kCategoryCount] = {};  // {category}
  // {category}: only gc, jit and vm (the JVM's own threads); null for the others.
  prometheus::Counter* jvm_thread_cpu_seconds[flamegraph::kCategoryCount] = {};
  prometheus::Histogram* gc_pause_seconds = nullptr;
  // The agents' CpuUse per batch (native-agent/cpu_use.h), summed over the JVMs that send it.
  prometheus::Counter* jvm_process_cpu_seconds = nullptr;
  prometheus::Counter* agent_cpu_seconds = nullptr;
  prometheus::Counter* cgroup_throttled_seconds = nullptr;
  prometheus::Counter* cgroup_periods = nullptr;            // {state="all"}
  prometheus::Counter* cgroup_periods_throttled = nullptr;  // {state="throttled"}
  // The agents' MemoryUse, last report of each JVM: {executor_id, kind}.
  prometheus::Family<prometheus::Gauge>* jvm_memory_bytes = nullptr;
  prometheus::Counter* agent_samples = nullptr;
  prometheus::Counter* agent_samples_dropped_ring_full = nullptr;
  prometheus::Counter* agent_walk_failures = nullptr;
  prometheus::Counter* agent_stacks_dropped = nullptr;
  prometheus::Gauge* agent_native_memory_bytes = nullptr;  // summed over executors
  prometheus::Gauge* reporting_executors = nullptr;
  prometheus::Counter* stack_overflow_folds = nullptr;  // stacks folded by the node cap
  prometheus::Counter* flamegraphs_written = nullptr;
  prometheus::Counter* flamegraphs_over_limit = nullptr;
  // 1 for the application this driver runs: {application_id, application_name}. Its labels join
  // onto the other series (`* on() group_left(application_id, application_name)`).
  prometheus::Family<prometheus::Gauge>* application_info = nullptr;

  // The live application model (LiveApplication; definitions in docs/metrics.md).
  // Listener lines by outcome: [kEventAccepted] {outcome="accepted"}, [kEventRejected].
  std::array<prometheus::Counter*, 2> events = {};
  prometheus::Gauge* resource_wait_seconds = nullptr;
  prometheus::Gauge* phase_compute_seconds = nullptr;
  prometheus::Gauge* phase_task_wait_seconds = nullptr;
  prometheus::Gauge* phase_io_write_seconds = nullptr;
  prometheus::Gauge* phase_wall_seconds = nullptr;
  prometheus::Family<prometheus::Gauge>* phase_breakdown_ratio = nullptr;  // {phase}
  prometheus::Counter* spill_memory_bytes = nullptr;                       // {medium="memory"}
  prometheus::Counter* spill_disk_bytes = nullptr;                         // {medium="disk"}
  prometheus::Gauge* running_tasks = nullptr;
  prometheus::Gauge* pending_tasks = nullptr;
  prometheus::Gauge* executors = nullptr;
  prometheus::Gauge* task_slots = nullptr;
  prometheus::Gauge* stage_skew_ratio = nullptr;
  prometheus::Histogram* task_duration_compute_seconds = nullptr;  // {stage_kind="compute"}
  prometheus::Histogram* task_duration_write_seconds = nullptr;    // {stage_kind="write"}
};

}  // namespace sparkprof::driver
