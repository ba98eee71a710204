// The Prometheus families the driver aggregator exports (names and units in one place).
#pragma once

#include <array>

#include "flamegraph/category.h"
#include "metrics/registry.h"

namespace sparkprof::driver {

struct AggregatorMetrics {
  // Registers every family in `registry`; family names are fixed, so only a duplicate registry
  // use can fail (a bug), reported as a Status.
  static Result<AggregatorMetrics> Register(metrics::Registry& registry);

  metrics::Family<metrics::Counter>* batches = nullptr;                  // {outcome}
  metrics::Counter* batch_bytes = nullptr;                               // accepted bytes
  metrics::Counter* task_time_seconds[flamegraph::kCategoryCount] = {};  // {category}
  // {category}: only gc, jit and vm (the JVM's own threads); null for the others.
  metrics::Counter* jvm_thread_cpu_seconds[flamegraph::kCategoryCount] = {};
  metrics::Histogram* gc_pause_seconds = nullptr;
  metrics::Counter* agent_samples = nullptr;
  metrics::Counter* agent_samples_dropped_ring_full = nullptr;
  metrics::Counter* agent_walk_failures = nullptr;
  metrics::Counter* agent_stacks_dropped = nullptr;
  metrics::Gauge* agent_native_memory_bytes = nullptr;  // summed over executors
  metrics::Gauge* reporting_executors = nullptr;
  metrics::Counter* stack_overflow_folds = nullptr;  // stacks folded by the node cap
  metrics::Counter* flamegraphs_written = nullptr;
  metrics::Counter* flamegraphs_over_limit = nullptr;
  // 1 for the application this driver runs: {application_id, application_name}. Its labels join
  // onto the other series (`* on() group_left(application_id, application_name)`).
  metrics::Family<metrics::Gauge>* application_info = nullptr;

  // The live application model (LiveApplication; definitions in docs/metrics.md).
  metrics::Family<metrics::Counter>* events = nullptr;  // {outcome}: listener lines
  metrics::Gauge* resource_wait_seconds = nullptr;
  metrics::Gauge* phase_compute_seconds = nullptr;
  metrics::Gauge* phase_task_wait_seconds = nullptr;
  metrics::Gauge* phase_io_write_seconds = nullptr;
  metrics::Gauge* phase_wall_seconds = nullptr;
  metrics::Family<metrics::Gauge>* phase_breakdown_ratio = nullptr;  // {phase}
  metrics::Counter* spill_memory_bytes = nullptr;                    // {medium="memory"}
  metrics::Counter* spill_disk_bytes = nullptr;                      // {medium="disk"}
  metrics::Gauge* running_tasks = nullptr;
  metrics::Gauge* pending_tasks = nullptr;
  metrics::Gauge* executors = nullptr;
  metrics::Gauge* task_slots = nullptr;
  metrics::Gauge* stage_skew_ratio = nullptr;
  metrics::Histogram* task_duration_compute_seconds = nullptr;  // {stage_kind="compute"}
  metrics::Histogram* task_duration_write_seconds = nullptr;    // {stage_kind="write"}
};

}  // namespace sparkprof::driver
