// Where the application's wall time went. The same definitions feed the live metrics
// (spark_phase_*_seconds, spark_phase_breakdown_ratio{phase}) and docs/report-schema.md `phases`.
//
// Wall-clock partition (the eight phases, kPhaseNames, sum to wall_ms; ratio = phase / wall_ms):
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
//                     jobs.
//   * While >= 1 task runs, that wall time is split in proportion to slot time:
//       capacity slot-ms = sum over time of max(slots, running tasks);
//       task slot-ms     = sum over time of running tasks;
//       gc     = JVM GC time of tasks;  shuffle = fetch wait + shuffle write time (ns -> ms);
//       io_write (b) = task commit time of write stages;
//       task work = task slot-ms - gc - shuffle - io_write(b) (everything else a task does);
//       compute   = its on-CPU part: per task attempt with metrics, min(executor CPU time
//                   (ns -> ms), duration - its gc - its shuffle), summed, scaled like gc and
//                   shuffle; plus, for the slot time of attempts without metrics (running at
//                   the log's end or live, lost with their executor), the share of their work
//                   the measured attempts spent on CPU; at most task work;
//       task_wait = task work - compute: off CPU with no metric of its own (the task's Python
//                   worker, reads, locks, sleeps, runnable without a core), and the task's time
//                   outside the executor's CPU time metric (deserialising the task, sending
//                   its result);
//       idle_slots = capacity slot-ms - task slot-ms.
//     phase wall ms = running wall ms x phase slot-ms / capacity slot-ms; compute takes the
//     rounding remainder.
//   When no task attempt with metrics has a CPU time (Spark before 2.1 and some platforms do not
//   log "Executor CPU Time"), cpu_measured is false: task work is all compute (waits included) and
//   task_wait is 0, as before the split; the reports say so.
//   What task_wait waited on is in the agent's profile, when one with off-CPU samples exists
//   (TaskWaitByKind); otherwise the reports call it unattributed.
// Starved task time (not part of the partition): sum over time of pending task attempts while no
// slot is free, pending = tasks of submitted, not yet completed stage attempts not launched yet.
// It counts task-ms queued for a slot, including before any executor exists.
// Slot-starved wall time (not part of the partition either): wall time after the first slot
// existed during which >= 1 task was pending and no slot was free (running >= slots). It is
// disjoint from resource_wait, so resource_wait_ms + slot_starved_wall_ms is "the application
// waited for resources" (live metric spark_resource_wait_seconds, docs/metrics.md).
// Peak queued tasks: the most pending task attempts during that slot-starved time (a state that
// lasted at least a millisecond).
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "analyzer/diagnosis/stage_stats.h"
#include "analyzer/model/application_model.h"
#include "analyzer/profile/stage_profiles.h"
#include "common/category.h"

namespace sparkprof::diagnosis {

struct PhaseBreakdown {
  int64_t wall_ms = 0;
  int64_t resource_wait_ms = 0;
  int64_t driver_only_ms = 0;
  int64_t compute_ms = 0;
  int64_t task_wait_ms = 0;
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
  int64_t io_write_slot_ms = 0;   // task commit time
  int64_t compute_slot_ms = 0;    // on CPU (all of the task work when !cpu_measured)
  int64_t task_wait_slot_ms = 0;  // the rest of the task work
  // Some task attempt with metrics logged an executor CPU time: compute is on-CPU time only.
  bool cpu_measured = false;
  int64_t idle_slot_ms = 0;
  int64_t starved_task_ms = 0;
  int64_t slot_starved_wall_ms = 0;
  // The most tasks pending at once while no slot was free, after the first slot existed (the
  // backlog slot_starved_wall_ms counts the time of): a queue a reader can picture.
  int64_t peak_queued_tasks = 0;
  int64_t first_slot_ms = -1;  // epoch ms the first slot existed (a time, not a duration)
  int32_t peak_slots = 0;
  // Where driver_only_ms lies: [start, end) in epoch ms, sorted, disjoint, summing to it.
  std::vector<std::pair<int64_t, int64_t>> driver_only_spans;
  // Every stretch with no task running from the first slot on (the driver working alone or
  // committing a write: driver_only_spans plus the commit gaps), the same way, maximal.
  std::vector<std::pair<int64_t, int64_t>> no_task_spans;
  // The part of driver_only_spans when no executor was alive after the first one while tasks
  // were ready to run (executors lost or refused at start-up, the application waiting for new
  // ones): a wait for resources, not the driver's work; the rules that judge the driver's time
  // leave it out (driver-bound, idle-executors).
  std::vector<std::pair<int64_t, int64_t>> waiting_without_slots_spans;

  double Ratio(int64_t phase_ms) const {
    return wall_ms > 0 ? static_cast<double>(phase_ms) / static_cast<double>(wall_ms) : 0.0;
  }
};

// The phases in report order: their name in JSON and metrics, and for people.
inline constexpr int kPhaseCount = 8;
inline constexpr std::array<const char*, kPhaseCount> kPhaseNames = {
    "resource_wait", "driver_only", "compute", "task_wait",
    "shuffle",       "io_write",    "gc",      "idle_slots"};
inline constexpr std::array<const char*, kPhaseCount> kPhaseLabels = {
    "resource wait", "driver only", "compute", "task wait",
    "shuffle",       "I/O write",   "GC",      "idle slots"};
// The phases' wall ms, in kPhaseNames' order.
std::array<int64_t, kPhaseCount> PhaseMs(const PhaseBreakdown& phases);

// task_wait_ms by what the task threads waited on, from a profile with off-CPU samples: split in
// proportion to its off-CPU categories summed over the stages, shuffle_fetch_wait left out (Spark's
// fetch wait metric already puts that in the shuffle phase). Most first, summing to task_wait_ms.
// Empty without such a profile, without off-CPU samples other than shuffle fetch waits, or
// without task wait: the reports then call task_wait unattributed.
std::vector<std::pair<sparkprof::Category, int64_t>> TaskWaitByKind(
    const PhaseBreakdown& phases, const profile::ApplicationProfile* profile);

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
