#include "driver-aggregator/aggregator_metrics.h"

#include <string>

namespace sparkprof::driver {
namespace {

// The unlabelled child of a new counter or gauge family.
Result<metrics::Counter*> AddCounter(metrics::Registry& registry, std::string name,
                                     std::string help) {
  SPARKPROF_ASSIGN_OR_RETURN(auto* family, registry.AddCounter(std::move(name), std::move(help)));
  return &family->WithLabels();
}

Result<metrics::Gauge*> AddGauge(metrics::Registry& registry, std::string name, std::string help) {
  SPARKPROF_ASSIGN_OR_RETURN(auto* family, registry.AddGauge(std::move(name), std::move(help)));
  return &family->WithLabels();
}

}  // namespace

Result<AggregatorMetrics> AggregatorMetrics::Register(metrics::Registry& registry) {
  AggregatorMetrics m;
  SPARKPROF_ASSIGN_OR_RETURN(
      m.batches, registry.AddCounter("sparkprof_driver_batches_total",
                                     "Profile batches received from executors, by outcome "
                                     "(accepted, too_large, invalid, unsupported_version, "
                                     "rate_limited)."));
  SPARKPROF_ASSIGN_OR_RETURN(m.batch_bytes,
                             AddCounter(registry, "sparkprof_driver_batch_bytes_total",
                                        "Bytes of accepted profile batches."));

  SPARKPROF_ASSIGN_OR_RETURN(
      auto* task_time,
      registry.AddCounter("spark_task_time_seconds_total",
                          "Sampled task time by category (compute, serialization, s3a_write, "
                          "s3a_read, shuffle_write, shuffle_read, spill, file_io, gc, other), "
                          "summed over executors; gc is stop-the-world pause overlap."));
  for (int i = 0; i < flamegraph::kCategoryCount; ++i) {
    auto category = static_cast<flamegraph::Category>(i);
    m.task_time_seconds[i] =
        &task_time->WithLabels({{"category", std::string(flamegraph::CategoryName(category))}});
  }

  SPARKPROF_ASSIGN_OR_RETURN(
      auto* gc, registry.AddHistogram("spark_gc_pause_seconds",
                                      "Stop-the-world GC pauses reported by the executors' agents.",
                                      {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                                       10}));
  m.gc_pause_seconds = &gc->WithLabels();

  SPARKPROF_ASSIGN_OR_RETURN(
      m.agent_samples, AddCounter(registry, "spark_agent_samples_total",
                                  "Stack samples taken by the agents, summed over executors."));
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* dropped,
      registry.AddCounter("spark_agent_samples_dropped_total",
                          "Samples the agents counted but could not keep, summed over executors."));
  m.agent_samples_dropped_ring_full = &dropped->WithLabels({{"reason", "ring_full"}});
  SPARKPROF_ASSIGN_OR_RETURN(
      m.agent_walk_failures,
      AddCounter(registry, "spark_agent_walk_failures_total",
                 "Samples whose stack walk failed (GC, no Java frames), summed over executors."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.agent_stacks_dropped,
      AddCounter(registry, "spark_agent_stacks_dropped_total",
                 "Samples folded into [overflow] by the agents' distinct-stack cap."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.agent_native_memory_bytes,
      AddGauge(registry, "spark_agent_native_memory_bytes",
               "Native memory held by the agents, summed over executors (last report of each)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.reporting_executors, AddGauge(registry, "spark_agent_reporting_executors",
                                      "Executors whose agent has sent at least one batch."));

  SPARKPROF_ASSIGN_OR_RETURN(
      m.stack_overflow_folds,
      AddCounter(registry, "sparkprof_driver_stacks_folded_total",
                 "Stacks folded into [overflow] because a stage's call tree was full."));
  SPARKPROF_ASSIGN_OR_RETURN(m.flamegraphs_written,
                             AddCounter(registry, "sparkprof_driver_flamegraphs_written_total",
                                        "Stage flame graph files written."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.application_info,
      registry.AddGauge("spark_application_info",
                        "1 for the Spark application this driver runs, labelled with its id and "
                        "name (spark.app.name)."));
  return m;
}

}  // namespace sparkprof::driver
