#include "analyzer/diagnosis/phase_breakdown.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "analyzer/diagnosis/stage_stats.h"
#include "analyzer/diagnosis/write_commits.h"
#include "common/radix_sort.h"

namespace sparkprof::diagnosis {

namespace {

// A change at one instant; applied in time order (ends before starts at the same ms).
struct Change {
  int64_t time_ms;
  int order;  // 0: ends/removals, 1: starts/additions
  int slots = 0;
  int running = 0;
  int pending = 0;
  int committing = 0;
};

// Slot-ms are summed in double (slots x ms overflows int64 on hostile timestamps); back to int64,
// saturating instead of the undefined out-of-range conversion.
int64_t SaturatingMs(double ms) {
  constexpr double kMax = 9.2e18;  // just below INT64_MAX, exactly representable
  if (!(ms > -kMax)) return ms != ms ? 0 : static_cast<int64_t>(-kMax);
  if (ms >= kMax) return static_cast<int64_t>(kMax);
  return static_cast<int64_t>(ms);
}

// Sorts changes by (time_ms, order), times within [start, end]. Changes of one ms and order
// commute, so any order among them will do; each change's key is its time since `start` and its
// order packed into one integer.
template <typename C>
void SortByTimeAndOrder(std::vector<C>& changes, int64_t start, int64_t end) {
  if (end - start >= (int64_t{1} << 60)) {  // hostile timestamps: the packed key would overflow
    std::sort(changes.begin(), changes.end(), [](const C& a, const C& b) {
      return a.time_ms != b.time_ms ? a.time_ms < b.time_ms : a.order < b.order;
    });
    return;
  }
  RadixSortByKey(changes, [start](const C& c) {
    return static_cast<uint64_t>(c.time_ms - start) << 2 | static_cast<uint64_t>(c.order);
  });
}

}  // namespace

PhaseBreakdown ComputePhaseBreakdown(const model::ApplicationModel& model,
                                     const PhaseBreakdownOptions& options) {
  return ComputePhaseBreakdown(model, ComputeStageStats(model), options);
}

PhaseBreakdown ComputePhaseBreakdown(const model::ApplicationModel& model,
                                     const std::vector<StageStats>& stage_stats,
                                     const PhaseBreakdownOptions& options) {
  PhaseBreakdown p;
  const int64_t start = model.start_time_ms;
  const int64_t end = model.end_time_ms;
  p.wall_ms = model.duration_ms();
  if (p.wall_ms <= 0) return p;
  auto clamp = [&](int64_t t) { return std::clamp(t, start, end); };

  std::vector<Change> changes;
  // Two per executor and task, one per pending-count change (at most one per task and two per
  // stage), two per write commit: reserved, not grown.
  changes.reserve(2 * model.executors.size() + 3 * model.tasks.size() + 2 * model.stages.size() +
                  2 * model.jobs.size());
  int64_t first_launch = -1;
  for (const model::Executor& executor : model.executors) {
    if (executor.total_cores <= 0) continue;
    int64_t added = executor.added_time_ms >= 0 ? executor.added_time_ms : start;
    int64_t removed = executor.removed_time_ms >= 0 ? executor.removed_time_ms : end;
    if (removed < added) continue;
    changes.push_back({clamp(added), 1, executor.total_cores, 0, 0, 0});
    changes.push_back({clamp(removed), 0, -executor.total_cores, 0, 0, 0});
    p.first_slot_ms = p.first_slot_ms < 0 ? clamp(added) : std::min(p.first_slot_ms, clamp(added));
  }
  for (const model::TaskAttempt& task : model.tasks) {
    if (task.launch_time_ms < 0) continue;
    int64_t launch = clamp(task.launch_time_ms);
    int64_t finish = task.ended() ? clamp(std::max(task.finish_time_ms, task.launch_time_ms)) : end;
    changes.push_back({launch, 1, 0, 1, 0, 0});
    changes.push_back({finish, 0, 0, -1, 0, 0});
    first_launch = first_launch < 0 ? launch : std::min(first_launch, launch);
  }
  if (p.first_slot_ms < 0 && options.live_model && first_launch < 0) {
    // Live: every event since the start was seen and no slot has registered yet.
    p.first_slot_ms = end;
  } else if (p.first_slot_ms < 0) {
    // No executor with cores in the log (older or trimmed logs): when slots appeared is unknown,
    // so nothing is called resource wait; the time before the first task counts as driver-only.
    p.first_slot_ms = start;
  } else if (first_launch >= 0 && first_launch < p.first_slot_ms) {
    p.first_slot_ms = first_launch;
  }
  // Write jobs: committing from the last task end of the job's stages until the job end, and on
  // after it for the SQL "job commit time" (write_commits.h).
  for (const WriteCommit& commit : ComputeWriteCommits(model, stage_stats)) {
    if (commit.commit_end_ms <= commit.last_task_end_ms) continue;
    changes.push_back({clamp(commit.last_task_end_ms), 1, 0, 0, 0, 1});
    changes.push_back({clamp(commit.commit_end_ms), 0, 0, 0, 0, -1});
  }
  // Pending tasks, per stage attempt: its task count from submission; each launch of one of its
  // attempts takes one (floored at 0: retries can outnumber tasks); completion releases the rest.
  int64_t pending_total = 0;
  {
    struct StageChange {
      int64_t time_ms;
      int order;
      int kind;        // 0 submit, 1 launch, 2 complete
      int32_t tasks;   // a submit's task count
      uint32_t stage;  // index into `pending`
    };
    std::vector<StageChange> stage_changes;
    stage_changes.reserve(2 * model.stages.size() + model.tasks.size());
    // Stage attempts in the model's order; a task's is found once, by key.
    std::map<std::pair<int32_t, int32_t>, uint32_t> stage_index;
    for (const auto& [key, stage] : model.stages) {
      const auto index = static_cast<uint32_t>(stage_index.size());
      stage_index.emplace(key, index);
      if (stage.submission_time_ms < 0 || stage.num_tasks <= 0) continue;
      stage_changes.push_back({clamp(stage.submission_time_ms), 0, 0, stage.num_tasks, index});
      int64_t completed = stage.completion_time_ms >= 0 ? clamp(stage.completion_time_ms) : end;
      stage_changes.push_back({completed, 2, 2, 0, index});
    }
    for (const model::TaskAttempt& task : model.tasks) {
      if (task.launch_time_ms < 0) continue;
      auto found = stage_index.find({task.stage_id, task.stage_attempt});
      if (found == stage_index.end()) continue;  // no pending count to take from
      stage_changes.push_back({clamp(task.launch_time_ms), 1, 1, 0, found->second});
    }
    // Changes at the same ms and of the same order commute (sums, and a peak that only grows
    // or only shrinks within them), so their relative order does not matter.
    SortByTimeAndOrder(stage_changes, start, end);
    std::vector<int64_t> pending_of(stage_index.size(), 0);
    for (const StageChange& c : stage_changes) {
      int64_t& pending = pending_of[c.stage];
      int64_t delta = 0;
      if (c.kind == 0) {
        delta = c.tasks;
      } else if (c.kind == 1) {
        delta = pending > 0 ? -1 : 0;
      } else {
        delta = -pending;
      }
      pending += delta;
      if (delta != 0) changes.push_back({c.time_ms, 2, 0, 0, static_cast<int>(delta), 0});
    }
    SortByTimeAndOrder(changes, start, end);
  }

  int64_t slots = 0, running = 0, committing = 0;
  int64_t now = start;
  double capacity_slot_ms = 0, task_slot_ms = 0, starved = 0;
  int64_t starved_wall = 0;
  int64_t running_wall = 0, commit_gap = 0, wait = 0, driver_only = 0;
  auto add_span = [](std::vector<std::pair<int64_t, int64_t>>& spans, int64_t from, int64_t to) {
    if (to <= from) return;
    if (!spans.empty() && spans.back().second == from) {
      spans.back().second = to;
    } else {
      spans.emplace_back(from, to);
    }
  };
  auto add_driver_only = [&](int64_t from, int64_t to) {
    add_span(p.driver_only_spans, from, to);
    add_span(p.no_task_spans, from, to);
  };
  auto advance = [&](int64_t to) {
    int64_t dt = to - now;
    if (dt <= 0) return;
    if (running > 0) {
      running_wall += dt;
      capacity_slot_ms += static_cast<double>(std::max(slots, running)) * dt;
      task_slot_ms += static_cast<double>(running) * dt;
    } else if (committing > 0) {
      commit_gap += dt;
      add_span(p.no_task_spans, std::max(now, p.first_slot_ms), to);  // first_slot_ms is set
    } else if (p.first_slot_ms < 0 || now < p.first_slot_ms) {
      int64_t waiting = p.first_slot_ms < 0 ? dt : std::min(dt, p.first_slot_ms - now);
      wait += waiting;
      driver_only += dt - waiting;
      add_driver_only(now + waiting, to);
    } else {
      driver_only += dt;
      add_driver_only(now, to);
    }
    if (running == 0 && committing == 0 && slots <= 0 && pending_total > 0 &&
        p.first_slot_ms >= 0) {
      add_span(p.waiting_without_slots_spans, std::max(now, p.first_slot_ms), to);
    }
    if (pending_total > 0 && slots - running <= 0) {
      starved += static_cast<double>(pending_total) * dt;
      if (p.first_slot_ms >= 0) {
        const int64_t after_first_slot =
            std::min(dt, to - std::max(now, std::min(to, p.first_slot_ms)));
        starved_wall += after_first_slot;
        if (after_first_slot > 0)
          p.peak_queued_tasks = std::max(p.peak_queued_tasks, pending_total);
      }
    }
    now = to;
  };
  for (const Change& c : changes) {
    advance(c.time_ms);
    slots += c.slots;
    running += c.running;
    committing += c.committing;
    pending_total += c.pending;
    p.peak_slots = std::max<int32_t>(p.peak_slots, static_cast<int32_t>(slots));
  }
  advance(end);

  // Task-side split from metrics (successful and failed attempts alike: both held a slot).
  int64_t gc = 0, shuffle = 0, task_commit = 0, cpu = 0;
  // The measured attempts' own work (duration - gc - shuffle) and their time in the sweep.
  double measured_work_ms = 0, measured_slot_ms = 0;
  for (const model::TaskAttempt& task : model.tasks) {
    if (!task.has_metrics || task.duration_ms() < 0) continue;
    int64_t duration = task.duration_ms();
    int64_t task_gc = std::min<int64_t>(task.metrics.jvm_gc_time_ms, duration);
    int64_t task_shuffle = std::min<int64_t>(
        task.metrics.shuffle_fetch_wait_time_ms + task.metrics.shuffle_write_time_ns / 1'000'000,
        duration - task_gc);
    gc += task_gc;
    shuffle += task_shuffle;
    const int64_t work = std::max<int64_t>(duration - task_gc - task_shuffle, 0);
    measured_work_ms += static_cast<double>(work);
    measured_slot_ms +=
        static_cast<double>(clamp(task.finish_time_ms) - clamp(task.launch_time_ms));
    if (task.metrics.executor_cpu_time_ns > 0) {
      p.cpu_measured = true;
      cpu += std::clamp<int64_t>(task.metrics.executor_cpu_time_ns / 1'000'000, 0, work);
    }
  }
  for (const StageStats& s : stage_stats) {
    if (s.write_stage) task_commit += std::min(s.task_commit_ms, s.total_task_ms);
  }
  p.task_slot_ms = SaturatingMs(task_slot_ms);
  p.capacity_slot_ms = SaturatingMs(capacity_slot_ms);
  // Metrics come from the same attempts the sweep counted, but keep the parts within the whole.
  double scale = 1.0;
  if (gc + shuffle + task_commit > p.task_slot_ms && gc + shuffle + task_commit > 0) {
    scale = static_cast<double>(p.task_slot_ms) / static_cast<double>(gc + shuffle + task_commit);
  }
  p.gc_slot_ms = SaturatingMs(static_cast<double>(gc) * scale);
  p.shuffle_slot_ms = SaturatingMs(static_cast<double>(shuffle) * scale);
  p.io_write_slot_ms = SaturatingMs(static_cast<double>(task_commit) * scale);
  const int64_t task_work_slot_ms =
      std::max<int64_t>(p.task_slot_ms - p.gc_slot_ms - p.shuffle_slot_ms - p.io_write_slot_ms, 0);
  p.compute_slot_ms = task_work_slot_ms;
  if (p.cpu_measured) {
    // Attempts without metrics (running at the log's end or live, lost with their executor) are
    // on CPU for the share the measured attempts were.
    const double unmeasured_slot_ms =
        std::max(static_cast<double>(p.task_slot_ms) - measured_slot_ms, 0.0);
    const double cpu_share =
        measured_work_ms > 0 ? static_cast<double>(cpu) / measured_work_ms : 0.0;
    p.compute_slot_ms =
        std::min(SaturatingMs(static_cast<double>(cpu) * scale + unmeasured_slot_ms * cpu_share),
                 task_work_slot_ms);
  }
  p.task_wait_slot_ms = task_work_slot_ms - p.compute_slot_ms;
  p.idle_slot_ms = std::max<int64_t>(p.capacity_slot_ms - p.task_slot_ms, 0);
  p.starved_task_ms = SaturatingMs(starved);
  p.slot_starved_wall_ms = starved_wall;

  p.tasks_running_ms = running_wall;
  p.commit_gap_ms = commit_gap;
  p.resource_wait_ms = wait;
  p.driver_only_ms = driver_only;
  auto share = [&](int64_t slot_ms) -> int64_t {
    if (capacity_slot_ms <= 0) return 0;
    return SaturatingMs(std::round(static_cast<double>(running_wall) *
                                   static_cast<double>(slot_ms) / capacity_slot_ms));
  };
  p.gc_ms = share(p.gc_slot_ms);
  p.shuffle_ms = share(p.shuffle_slot_ms);
  p.idle_slots_ms = share(p.idle_slot_ms);
  p.task_wait_ms = share(p.task_wait_slot_ms);
  int64_t task_commit_wall = share(p.io_write_slot_ms);
  p.io_write_ms = commit_gap + task_commit_wall;
  // compute takes the rounding remainder so the partition sums exactly to the running time.
  p.compute_ms = std::max<int64_t>(
      running_wall - p.gc_ms - p.shuffle_ms - p.idle_slots_ms - task_commit_wall - p.task_wait_ms,
      0);
  return p;
}

std::array<int64_t, kPhaseCount> PhaseMs(const PhaseBreakdown& p) {
  return {p.resource_wait_ms, p.driver_only_ms, p.compute_ms, p.task_wait_ms,
          p.shuffle_ms,       p.io_write_ms,    p.gc_ms,      p.idle_slots_ms};
}

std::vector<std::pair<sparkprof::Category, int64_t>> TaskWaitByKind(
    const PhaseBreakdown& phases, const profile::ApplicationProfile* profile) {
  std::vector<std::pair<sparkprof::Category, int64_t>> by_kind;
  if (profile == nullptr || !profile->has_off_cpu() || phases.task_wait_ms <= 0) return by_kind;
  profile::CategoryNs off_cpu_ns{};
  double total_ns = 0;
  for (const profile::StageProfile& stage : profile->stages) {
    for (int i = 0; i < kCategoryCount; ++i) {
      const auto category = static_cast<sparkprof::Category>(i);
      if (!IsOffCpu(category) || category == sparkprof::Category::kShuffleFetchWait) continue;
      off_cpu_ns[i] += stage.category_ns[i];
      total_ns += static_cast<double>(stage.category_ns[i]);
    }
  }
  if (total_ns <= 0) return by_kind;
  int64_t assigned = 0;
  for (int i = 0; i < kCategoryCount; ++i) {
    if (off_cpu_ns[i] == 0) continue;
    const auto ms = static_cast<int64_t>(std::floor(static_cast<double>(phases.task_wait_ms) *
                                                    static_cast<double>(off_cpu_ns[i]) / total_ns));
    by_kind.emplace_back(static_cast<sparkprof::Category>(i), ms);
    assigned += ms;
  }
  // Most first (category order among equals); the largest takes what flooring left.
  std::stable_sort(by_kind.begin(), by_kind.end(), [&](const auto& a, const auto& b) {
    return off_cpu_ns[CategoryIndex(a.first)] > off_cpu_ns[CategoryIndex(b.first)];
  });
  by_kind.front().second += phases.task_wait_ms - assigned;
  return by_kind;
}

}  // namespace sparkprof::diagnosis
