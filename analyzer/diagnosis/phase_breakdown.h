// Where the application's wall time went. The same definitions feed the live metrics
// (spark_phase_*_seconds, spark_phase_breakdown_ratio{phase}) and docs/report-schema.md `phases`.
//
// Wall-clock partition (the seven phases sum to wall_ms; ratio = phase / wall_ms):
//   A sweep over [application start, application end] tracks, at every instant, the number of
//   running task attempts (launch..finish), the task slots (cores of the executors alive, the
//   "driver" executor of local mode included), and whether a write job is committing.
//   * resource_wait:  no task running and no slot registered yet (start until the first executor
//                     with cores, or the first task launch if earlier). A log without any
//                     executor with cores has no resource wait (unknown, counted as driver_only).
//   * io_write:       (a) no task running while a write job commits: from the last task end of a
//                     job whose stages write (SQL "task commit time"/"number of written files", or
//                     output bytes without shuffle output) until that job's end, and after it for
//                     the SQL "job commit time" the driver reports (within the SQL execution's
//                     end; write_commits.h); plus (b) the wall share of task-side commit time
//                     (SQL "task commit time") below.
//   * driver_only:    no task running, slots exist, no commit: planning, collect, gaps between
//   jobs.
//   * While >= 1 task runs, that wall time is split in proportion to slot time:
//       capacity slot-ms = sum over time of max(slots, running tasks);
//       task slot-ms     = sum over time of running tasks;
//       gc     = JVM GC time of tasks;  shuffle = fetch wait + shuffle write time (ns -> ms);
//       io_write (b) = task commit time of write stages;
//       compute = task slot-ms - gc - shuffle - io_write(b) (everything else a task does:
//                 CPU, reads, deserialisation, scheduler delay);
//       idle_slots = capacity slot-ms - task slot-ms.
//     phase wall ms = running wall ms x phase slot-ms / capacity slot-ms.
// Starved task time (not part of the partition): sum over time of pending task attempts while no
// slot is free, pending = tasks of submitted, not yet completed stage attempts not launched yet.
// It counts task-ms queued for a slot, including before any executor exists.
// Slot-starved wall time (not part of the partition either): wall time after the first slot
// existed during which >= 1 task was pending and no slot was free (running >= slots). It is
// disjoint from resource_wait, so resource_wait_ms + slot_starved_wall_ms is "the application
// waited for resources" (live metric spark_resource_wait_seconds, docs/metrics.md).
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/diagnosis/stage_stats.h"
#include "analyzer/model/application_model.h"

namespace sparkprof::diagnosis {

struct PhaseBreakdown {
  int64_t wall_ms = 0;
  int64_t resource_wait_ms = 0;
  int64_t driver_only_ms = 0;
  int64_t compute_ms = 0;
  int64_t shuffle_ms = 0;
  int64_t io_write_ms = 0;
  int64_t gc_ms = 0;
  int64_t idle_slots_ms = 0;

  // The raw figures the partition is built from.
  int64_t tasks_running_ms = 0;  // wall time with >= 1 task running
  int64_t commit_gap_ms = 0;     // io_write part (a)
  int64_t capacity_slot_ms = 0;
  int64_t task_slot_ms = 0;
  int64_t gc_slot_ms = 0;
  int64_t shuffle_slot_ms = 0;
  int64_t io_write_slot_ms = 0;  // task commit time
  int64_t compute_slot_ms = 0;
  int64_t idle_slot_ms = 0;
  int64_t starved_task_ms = 0;
  int64_t slot_starved_wall_ms = 0;
  int64_t first_slot_ms = -1;  // epoch ms the first slot existed
  int32_t peak_slots = 0;

  double Ratio(int64_t phase_ms) const {
    return wall_ms > 0 ? static_cast<double>(phase_ms) / static_cast<double>(wall_ms) : 0.0;
  }
};

struct PhaseBreakdownOptions {
  // For a model built live from every event since the application started: when no executor
  // with cores and no task launch has been seen yet, no slot exists *yet* (resource wait up to the
  // model's end), rather than "unknown" as in a log without executor events.
  bool live_model = false;
};

PhaseBreakdown ComputePhaseBreakdown(const model::ApplicationModel& model,
                                     const PhaseBreakdownOptions& options = {});
// The same, with the model's stage statistics (ComputeStageStats) already computed.
PhaseBreakdown ComputePhaseBreakdown(const model::ApplicationModel& model,
                                     const std::vector<StageStats>& stage_stats,
                                     const PhaseBreakdownOptions& options = {});

}  // namespace sparkprof::diagnosis
