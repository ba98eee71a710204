#include "driver-aggregator/aggregator_metrics.h"

#include <string>

namespace sparkprof::driver {
namespace {

// The unlabelled child of a new counter or gauge family.
Result<prometheus::Counter*> AddCounter(metrics::PrometheusRegistry& registry,
                                        const std::string& name, const std::string& help) {
  SPARKPROF_ASSIGN_OR_RETURN(auto* family, registry.AddCounter(name, help));
  return &family->Add({});
}

Result<prometheus::Gauge*> AddGauge(metrics::PrometheusRegistry& registry, const std::string& name,
                                    const std::string& help) {
  SPARKPROF_ASSIGN_OR_RETURN(auto* family, registry.AddGauge(name, help));
  return &family->Add({});
}

}  // namespace

Result<AggregatorMetrics> AggregatorMetrics::Register(metrics::PrometheusRegistry& registry) {
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
                          "Sampled task time by category: on CPU (compute, serialization, "
                          "s3a_write, s3a_read, shuffle_write, shuffle_read, spill, file_io, gc, "
                          "other, jit, vm, python) and off CPU (python_wait, shuffle_fetch_wait, "
                          "io_wait, lock_wait, sleep, cpu_starved, off_cpu_other; agent mode "
                          "cpu+wall), summed over executors; gc is stop-the-world pause "
                          "overlap."));
  for (int i = 0; i < flamegraph::kCategoryCount; ++i) {
    auto category = static_cast<flamegraph::Category>(i);
    m.task_time_seconds[i] =
        &task_time->Add({{"category", std::string(flamegraph::CategoryName(category))}});
  }
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* jvm_thread_cpu,
      registry.AddCounter("spark_jvm_thread_cpu_seconds_total",
                          "CPU of the executors' own JVM threads by category (gc: GC workers and "
                          "concurrent GC, jit: compiler threads, vm: the VM thread and helpers), "
                          "summed over executors; not task time."));
  for (auto category :
       {flamegraph::Category::kGc, flamegraph::Category::kJit, flamegraph::Category::kVm}) {
    m.jvm_thread_cpu_seconds[flamegraph::CategoryIndex(category)] =
        &jvm_thread_cpu->Add({{"category", std::string(flamegraph::CategoryName(category))}});
  }

  SPARKPROF_ASSIGN_OR_RETURN(
      m.jvm_process_cpu_seconds,
      AddCounter(registry, "spark_jvm_process_cpu_seconds_total",
                 "CPU of the JVMs whose agents report their CPU use (executors, and the driver "
                 "when it samples its own JVM), summed: every thread, task or not."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.agent_cpu_seconds,
      AddCounter(registry, "spark_agent_cpu_seconds_total",
                 "The sparkprof agents' own CPU, summed over the JVMs that report it: their "
                 "threads, batch encoding, stack walks and monitor-wait callbacks (what profiling "
                 "costs; against spark_jvm_process_cpu_seconds_total)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.cgroup_throttled_seconds,
      AddCounter(registry, "spark_cgroup_cpu_throttled_seconds_total",
                 "Time the JVMs' cgroups were throttled by their CPU quota (CFS throttled time, "
                 "summed over each cgroup's CPUs and over the JVMs)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* periods,
      registry.AddCounter("spark_cgroup_cpu_periods_total",
                          "CFS enforcement periods of the JVMs' cgroups, all of them and those in "
                          "which the CPU quota ran out (throttled), summed over the JVMs."));
  m.cgroup_periods = &periods->Add({{"state", "all"}});
  m.cgroup_periods_throttled = &periods->Add({{"state", "throttled"}});

  SPARKPROF_ASSIGN_OR_RETURN(
      m.jvm_memory_bytes,
      registry.AddGauge("spark_jvm_memory_bytes",
                        "Memory of each JVM whose agent reports it, at its last batch, by kind: "
                        "rss and rss_peak (the process's resident set and its high-water mark), "
                        "container_usage, container_limit and container_peak (its memory "
                        "cgroup), python_rss (the Python processes below it, summed); the JVM's "
                        "own accounts: heap_used, heap_used_peak, heap_committed, heap_max, "
                        "heap_after_gc, old_after_gc, metaspace, direct_buffers, direct_max, "
                        "mapped_buffers; Spark's spark_execution and spark_storage. "
                        "executor_id is \"driver\" for the driver; as many executors as the "
                        "driver keeps agent health for (docs/metrics.md)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* gc,
      registry.AddHistogram("spark_gc_pause_seconds",
                            "Stop-the-world GC pauses reported by the executors' agents.",
                            {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}));
  m.gc_pause_seconds = &gc->Add({});

  SPARKPROF_ASSIGN_OR_RETURN(
      m.agent_samples, AddCounter(registry, "spark_agent_samples_total",
                                  "Stack samples taken by the agents, summed over executors."));
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* dropped,
      registry.AddCounter("spark_agent_samples_dropped_total",
                          "Samples the agents counted but could not keep, summed over executors."));
  m.agent_samples_dropped_ring_full = &dropped->Add({{"reason", "ring_full"}});
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
  SPARKPROF_ASSIGN_OR_RETURN(m.reporting_executors,
                             AddGauge(registry, "spark_agent_reporting_executors",
                                      "Executors whose agent has sent at least one batch."));

  SPARKPROF_ASSIGN_OR_RETURN(
      m.stack_overflow_folds,
      AddCounter(registry, "sparkprof_driver_stacks_folded_total",
                 "Stacks folded into [overflow] because a stage's call tree was full."));
  SPARKPROF_ASSIGN_OR_RETURN(m.flamegraphs_written,
                             AddCounter(registry, "sparkprof_driver_flamegraphs_written_total",
                                        "Stage flame graph files written."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.flamegraphs_over_limit,
      AddCounter(registry, "sparkprof_driver_flamegraphs_over_limit_total",
                 "Stage flame graphs not written: the application has max_flamegraph_files "
                 "already (its samples stay in profile.sparkprof)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.application_info,
      registry.AddGauge("spark_application_info",
                        "1 for the Spark application this driver runs, labelled with its id and "
                        "name (spark.app.name)."));

  SPARKPROF_ASSIGN_OR_RETURN(
      auto* events, registry.AddCounter("sparkprof_driver_events_total",
                                        "Listener events received as event-log JSON lines, by "
                                        "outcome (accepted, rejected: not an event, too long, or "
                                        "after the application's report)."));
  m.events[kEventAccepted] = &events->Add({{"outcome", "accepted"}});
  m.events[kEventRejected] = &events->Add({{"outcome", "rejected"}});
  SPARKPROF_ASSIGN_OR_RETURN(
      m.resource_wait_seconds,
      AddGauge(registry, "spark_resource_wait_seconds",
               "Wall time the application waited for resources: application start until the "
               "first executor slot (or first task), plus later wall time with pending tasks "
               "and no free slot."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.phase_compute_seconds,
      AddGauge(registry, "spark_phase_compute_seconds",
               "Wall time in the compute phase (running tasks' on-CPU share outside GC, shuffle "
               "and commit; all of that share, waits included, when no task logged a CPU time), "
               "from the engine's phase breakdown."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.phase_task_wait_seconds,
      AddGauge(registry, "spark_phase_task_wait_seconds",
               "Wall time in the task wait phase (running tasks' share off CPU outside GC, "
               "shuffle and commit: Python workers, I/O, locks, sleeps, run delay; 0 when no "
               "task logged a CPU time), from the engine's phase breakdown."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.phase_io_write_seconds,
      AddGauge(registry, "spark_phase_io_write_seconds",
               "Wall time in the I/O write phase (job commits with no task running, plus the "
               "wall share of task commit time)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.phase_wall_seconds,
      AddGauge(registry, "spark_phase_wall_seconds",
               "Wall time the phase breakdown covers: application start until now (or its end)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.phase_breakdown_ratio,
      registry.AddGauge("spark_phase_breakdown_ratio",
                        "Share of wall time per phase (resource_wait, driver_only, compute, "
                        "task_wait, shuffle, io_write, gc, idle_slots); the phases sum to 1."));
  for (const char* phase : {"resource_wait", "driver_only", "compute", "task_wait", "shuffle",
                            "io_write", "gc", "idle_slots"}) {
    m.phase_breakdown_ratio->Add({{"phase", phase}});
  }
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* spill, registry.AddCounter("spark_spill_bytes_total",
                                       "Bytes spilled by finished task attempts: medium=memory "
                                       "is the in-memory size of spilled data, medium=disk its "
                                       "size on disk."));
  m.spill_memory_bytes = &spill->Add({{"medium", "memory"}});
  m.spill_disk_bytes = &spill->Add({{"medium", "disk"}});
  SPARKPROF_ASSIGN_OR_RETURN(m.running_tasks, AddGauge(registry, "spark_running_tasks",
                                                       "Task attempts started and not ended."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.pending_tasks,
      AddGauge(registry, "spark_pending_tasks",
               "Tasks of submitted, not yet completed stage attempts that were not launched."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.executors, AddGauge(registry, "spark_executors",
                            "Executors registered and not removed (the driver not counted)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.task_slots, AddGauge(registry, "spark_task_slots",
                             "Cores of the registered executors (local mode: the driver's)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      m.stage_skew_ratio,
      AddGauge(registry, "spark_stage_skew_ratio",
               "Worst max/median task duration over running stages and stages completed in the "
               "last minute (running tasks count with their elapsed time); 0 when no stage has "
               "5 successful tasks."));
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* durations,
      registry.AddHistogram(
          "spark_task_duration_seconds",
          "Durations of successful task attempts (launch to finish) of "
          "completed stages, by stage_kind: write (the stage writes output: "
          "SQL task commit time, written files, or output without shuffle "
          "output) or compute (every other stage).",
          {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}));
  m.task_duration_compute_seconds = &durations->Add({{"stage_kind", "compute"}});
  m.task_duration_write_seconds = &durations->Add({{"stage_kind", "write"}});
  return m;
}

}  // namespace sparkprof::driver
