// The run prepared once for many scenarios: executors and their slots, the stage attempts as
// units of work, jobs, dependencies, and the replay of the run as it was.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/whatif/simulator_internal.h"

namespace sparkprof::whatif {

namespace {

// A change of the slots free across the application (for finding locality waits): at a time
// relative to its start, by `delta`; `task`, when not 0, names a launch that may have waited.
struct SlotChange {
  int64_t at;
  int32_t delta;
  uint32_t task;
};

// Orders `changes` by time (those at one time in no particular order): least significant digit
// first radix sort of the time's offset from the earliest, 11 bits a pass, as many passes as
// the span of times needs (two for a day in milliseconds): the comparison sort's mispredicted
// branches made it most of a simulator's preparation.
void SortByTime(std::vector<SlotChange>& changes) {
  if (changes.size() < 2) return;
  int64_t least = changes.front().at, most = least;
  for (const SlotChange& c : changes) {
    least = std::min(least, c.at);
    most = std::max(most, c.at);
  }
  const uint64_t span = static_cast<uint64_t>(most) - static_cast<uint64_t>(least);
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<SlotChange> other(changes.size());
  std::vector<uint32_t> counts(kBuckets);
  for (int shift = 0; shift < 64 && (span >> shift) != 0; shift += kBits) {
    std::fill(counts.begin(), counts.end(), 0);
    auto digit = [&](const SlotChange& c) {
      return ((static_cast<uint64_t>(c.at) - static_cast<uint64_t>(least)) >> shift) &
             (kBuckets - 1);
    };
    for (const SlotChange& c : changes) ++counts[digit(c)];
    uint32_t next = 0;
    for (uint32_t& count : counts) next += std::exchange(count, next);
    for (const SlotChange& c : changes) other[counts[digit(c)]++] = c;
    changes.swap(other);
  }
}

// A stage's per-executor warm-up: its first task on each executor against the median of the
// tasks that were not first (at least 3 of them). The lower median excess is taken off those
// first tasks (at most each one's own excess) and returned; 0 when the run cannot show it.
// A first task given kSkewFactor x the others' median data (records, else input bytes) is slow
// because of its data, not the warm-up: it does not vote. Without this, a stage whose skewed
// task happened to be the first on its executor (2 executors: the upper of two excesses) had
// the skew taken as warm-up -- charged to every executor's first task and invisible to the
// skew fix, which then split ordinary tasks and predicted the stage longer.
// `seen` is scratch, an entry per executor (string table index; the last for none), `stamp` this
// call's own mark in it (a stamp per call instead of a set or a cleared array).
int64_t TakeWarmup(std::vector<Work>& tasks, const std::vector<uint32_t>& executors,
                   std::vector<uint32_t>& seen, uint32_t stamp) {
  std::vector<size_t> order(tasks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto earlier = [&](size_t a, size_t b) {
    return tasks[a].real_launch_ms < tasks[b].real_launch_ms;
  };
  // Usually in launch order already.
  if (!std::is_sorted(order.begin(), order.end(), earlier)) {
    std::stable_sort(order.begin(), order.end(), earlier);
  }
  std::vector<size_t> firsts;
  std::vector<int64_t> others;
  std::vector<int64_t> others_records;
  std::vector<int64_t> others_bytes;
  for (size_t i : order) {
    uint32_t& mark = seen[std::min<size_t>(executors[i], seen.size() - 1)];
    if (mark != stamp) {
      mark = stamp;
      firsts.push_back(i);
    } else {
      others.push_back(tasks[i].duration_ms);
      others_records.push_back(tasks[i].records);
      others_bytes.push_back(tasks[i].input_bytes);
    }
  }
  if (others.size() < 3 || firsts.empty()) return 0;
  auto median_of = [](std::vector<int64_t>& values) {
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    return values[values.size() / 2];
  };
  const int64_t median = median_of(others);
  const int64_t median_records = median_of(others_records);
  const int64_t median_bytes = median_of(others_bytes);
  auto more_data = [&](const Work& w) {
    if (median_records > 0) {
      return static_cast<double>(w.records) >= kSkewFactor * static_cast<double>(median_records);
    }
    return median_bytes > 0 &&
           static_cast<double>(w.input_bytes) >= kSkewFactor * static_cast<double>(median_bytes);
  };
  std::vector<int64_t> excess;
  std::vector<int64_t> votes;
  for (size_t i : firsts) {
    excess.push_back(std::max<int64_t>(tasks[i].duration_ms - median, 0));
    if (!more_data(tasks[i])) votes.push_back(excess.back());
  }
  if (votes.empty()) return 0;
  std::nth_element(votes.begin(), votes.begin() + (votes.size() - 1) / 2, votes.end());
  const int64_t warmup = votes[(votes.size() - 1) / 2];
  for (size_t k = 0; k < firsts.size(); ++k) {
    tasks[firsts[k]].duration_ms -= std::min(excess[k], warmup);
    tasks[firsts[k]].first_on_executor = true;
  }
  return warmup;
}

// The ended tasks with a launch on one executor: (launch, task), in launch order (task order
// among equal launches).
using Launches = std::vector<std::pair<int64_t, uint32_t>>;

// Per executor (by string table index), the ended tasks launched on it.
std::vector<Launches> LaunchesByExecutor(const model::ApplicationModel& m) {
  std::vector<Launches> launched_on(m.strings.size());
  for (uint32_t i = 0; i < m.tasks.size(); ++i) {
    const model::TaskAttempt& t = m.tasks[i];
    if (!t.ended() || t.executor == model::kNone || t.launch_time_ms < 0) continue;
    launched_on[t.executor].push_back({t.launch_time_ms, i});
  }
  for (auto& list : launched_on) {
    if (!std::is_sorted(list.begin(), list.end())) std::sort(list.begin(), list.end());
  }
  return launched_on;
}

// The most tasks at once on `list`'s executor, whose tasks held their slots to `ends` (sorted):
// launches against ends in time order, an end first at one instant; with `gaps`, also each
// launch's wait since the earliest end not yet reused (when it reused one).
int MostAtOnce(const Launches& list, const std::vector<int64_t>& ends, std::vector<int64_t>* gaps) {
  int most = 0;
  size_t ended = 0, reused = 0;
  for (size_t launch = 0; launch < list.size(); ++launch) {
    const int64_t at = list[launch].first;
    while (ended < ends.size() && ends[ended] <= at) ++ended;
    most = std::max(most, static_cast<int>(launch + 1 - ended));
    if (gaps != nullptr && reused < ended) {
      const int64_t gap = at - ends[reused++];
      if (gap >= 0 && gap < 1000) gaps->push_back(gap);
    }
  }
  return most;
}

// The tasks seen at once on each executor (by id), from launch to finish.
std::map<std::string, int32_t> ObservedConcurrency(const model::ApplicationModel& m,
                                                   const std::vector<Launches>& launched_on) {
  std::map<std::string, int32_t> concurrency;
  std::vector<int64_t> ends;
  for (uint32_t id = 0; id < launched_on.size(); ++id) {
    if (launched_on[id].empty()) continue;
    ends.clear();
    for (const auto& [launch, i] : launched_on[id]) {
      ends.push_back(std::max(m.tasks[i].finish_time_ms, launch));
    }
    std::sort(ends.begin(), ends.end());
    concurrency[m.strings.Get(id)] = MostAtOnce(launched_on[id], ends, nullptr);
  }
  return concurrency;
}

double TaskCpus(const model::ApplicationModel& m) {
  if (auto profile = m.resource_profiles.find(0);
      profile != m.resource_profiles.end() && profile->second.task_cpus >= 1) {
    return profile->second.task_cpus;
  }
  return 1;
}

// Executors with cores (the local-mode driver included); cores unknown -> observed concurrency.
// Fills the run's executors (by arrival) and its cores per executor; returns the slots of each
// executor that said its cores, by id.
std::map<std::string, int32_t> ListExecutors(const model::ApplicationModel& m,
                                             const std::map<std::string, int32_t>& concurrency,
                                             PreparedRun& run) {
  const int64_t start = m.start_time_ms;
  std::vector<ExecutorSlots>& executors = run.executors;
  std::set<std::string> listed;
  std::map<std::string, int32_t> slots_of;
  int32_t& real_cores = run.real_cores;
  for (const model::Executor& e : m.executors) {
    listed.insert(e.executor_id);
    const auto seen = concurrency.find(e.executor_id);
    const int32_t observed = seen != concurrency.end() ? seen->second : 0;
    // The cores the executor registered with; the tasks seen at once only when it did not say.
    // (The driver records a task's finish after fetching its result, while the executor's
    // slot is already running the next task: seen concurrency overstates the slots.)
    const int32_t slots =
        e.total_cores > 0
            ? std::max<int32_t>(
                  1, static_cast<int32_t>(std::min<double>(e.total_cores / run.task_cpus, 100'000)))
            : observed;
    if (slots <= 0) continue;
    if (e.is_driver() && observed == 0) continue;
    ExecutorSlots s;
    s.added = e.added_time_ms >= 0 ? Span(e.added_time_ms, start) : 0;
    s.removed = e.removed_time_ms >= 0 ? std::max(Span(e.removed_time_ms, start), s.added) : kNever;
    s.slots = slots;
    executors.push_back(s);
    slots_of[e.executor_id] = slots;
    real_cores = std::max(real_cores, e.total_cores > 0 ? e.total_cores : slots);
  }
  for (const auto& [id, observed] : concurrency) {  // executors only the tasks name
    if (listed.count(id) != 0 || observed <= 0) continue;
    executors.push_back({0, kNever, observed});
  }
  std::stable_sort(
      executors.begin(), executors.end(),
      [](const ExecutorSlots& a, const ExecutorSlots& b) { return a.added < b.added; });
  return slots_of;
}

// How long each task held its slot: to its finish, or to the launch that reused the slot if
// that came first (-1: its finish). The driver records a finish once it has the task's result,
// while the executor already runs the next task in the freed slot; under load that lag reaches
// a second.
std::vector<int64_t> SlotReleases(const model::ApplicationModel& m,
                                  const std::vector<Launches>& launched_on,
                                  const std::map<std::string, int32_t>& slots_of) {
  std::vector<int64_t> slot_released(m.tasks.size(), -1);
  for (uint32_t id = 0; id < launched_on.size(); ++id) {
    if (launched_on[id].empty()) continue;
    auto slots = slots_of.find(m.strings.Get(id));
    if (slots == slots_of.end()) continue;      // slots taken from the seen concurrency
    using Held = std::pair<int64_t, uint32_t>;  // finish, task
    std::priority_queue<Held, std::vector<Held>, std::greater<>> held;
    for (const auto& [launch, i] : launched_on[id]) {
      const model::TaskAttempt& t = m.tasks[i];
      while (!held.empty() && held.top().first <= t.launch_time_ms) held.pop();
      if (static_cast<int32_t>(held.size()) >= slots->second) {
        slot_released[held.top().second] = t.launch_time_ms;
        held.pop();
      }
      held.push({std::max(t.finish_time_ms, t.launch_time_ms), i});
    }
  }
  return slot_released;
}

// The dispatch gap: on each executor, from a task's end (its slot's release) to the launch
// that reuses its slot, when that launch came within a second (longer means no task was
// waiting). Median; 0 with fewer than 10 such launches.
int64_t MedianLaunchGapMs(const model::ApplicationModel& m,
                          const std::vector<Launches>& launched_on,
                          const std::vector<int64_t>& slot_released) {
  std::vector<int64_t> gaps;
  std::vector<int64_t> ends;
  for (const auto& list : launched_on) {
    ends.clear();
    for (const auto& [launch, i] : list) {
      const model::TaskAttempt& t = m.tasks[i];
      const int64_t end = slot_released[i] >= launch ? std::min(slot_released[i], t.finish_time_ms)
                                                     : t.finish_time_ms;
      ends.push_back(std::max(end, launch));
    }
    std::sort(ends.begin(), ends.end());
    MostAtOnce(list, ends, &gaps);
  }
  if (gaps.size() < 10) return 0;
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  return gaps[gaps.size() / 2];
}

// One ended task as a unit of work: its slot time and what the scenarios rescale.
Work WorkOf(const model::TaskAttempt& t, int64_t slot_released, int64_t start) {
  const int64_t released = slot_released >= t.launch_time_ms
                               ? std::min(slot_released, t.finish_time_ms)
                               : t.finish_time_ms;
  Work work{std::min(released - t.launch_time_ms, kMaxMs), -1, Span(t.launch_time_ms, start)};
  work.task_id = t.task_id;
  if (t.has_metrics) {
    const model::TaskAttemptMetrics& x = t.metrics;
    work.input_bytes = std::max<int64_t>(x.input_bytes_read, 0);
    work.records =
        std::max<int64_t>(x.input_records_read, 0) + std::max<int64_t>(x.shuffle_records_read, 0);
    work.shuffle_write_ms =
        std::clamp<int64_t>(x.shuffle_write_time_ns / 1'000'000, 0, work.duration_ms);
    work.fetch_wait_ms = std::min<int64_t>(x.shuffle_fetch_wait_time_ms, work.duration_ms);
    work.gc_ms = std::min<int64_t>(x.jvm_gc_time_ms, work.duration_ms);
    work.peak_memory_bytes = std::max<int64_t>(x.peak_execution_memory_bytes, 0);
    work.memory_spilled_bytes = std::max<int64_t>(x.memory_bytes_spilled, 0);
    work.disk_spilled_bytes = std::max<int64_t>(x.disk_bytes_spilled, 0);
  }
  return work;
}

// Delay scheduling as the run shows it: a task launched after >= 1 s during which a slot was
// free (app-wide) since its stage had started is held to its real offset in the replay.
void HoldLocalityWaits(const std::vector<ExecutorSlots>& executors, int64_t start,
                       std::vector<Unit>& units) {
  // Changes of the free slots (relative time, delta); a launch that may have been held (not
  // its stage's first task, >= 1 s after the stage started) names its task (1 + index into
  // `held`).
  std::vector<SlotChange> changes;
  std::vector<std::pair<Work*, int64_t>> held;  // task, its stage's start
  for (const ExecutorSlots& e : executors) {
    changes.push_back({e.added, e.slots, 0});
    if (e.removed < kNever) changes.push_back({e.removed, -e.slots, 0});
  }
  for (Unit& unit : units) {
    const int64_t stage_start = unit.real_submit - start;
    for (size_t i = 0; i < unit.tasks.size(); ++i) {
      Work& w = unit.tasks[i];
      uint32_t task = 0;
      if (i > 0 && w.real_launch_ms - 1000 >= stage_start) {
        held.push_back({&w, stage_start});
        task = static_cast<uint32_t>(held.size());
      }
      changes.push_back({w.real_launch_ms, -1, task});
      changes.push_back({w.real_launch_ms + w.duration_ms, 1, 0});
    }
  }
  SortByTime(changes);
  // Segments [time[i], time[i+1]) with free[i]; last_busy[i]: last segment <= i with free <= 0.
  // A task launched at times[g] was held when no segment of the second before it (from the
  // one holding its launch - 1 s to g - 1) had no free slot; those segments are known by the
  // time its launch's is, and the one holding launch - 1 s only moves forward.
  std::vector<int64_t> times;
  std::vector<int64_t> last_busy;
  int64_t free = 0;
  int64_t second_before = -1;  // the segment holding the current launch time - 1 s
  for (size_t i = 0; i < changes.size();) {
    const int64_t t = changes[i].at;
    const size_t group = i;
    while (i < changes.size() && changes[i].at == t) free += changes[i++].delta;
    for (size_t k = group; k < i; ++k) {
      if (changes[k].task == 0) continue;
      while (second_before + 1 < static_cast<int64_t>(times.size()) &&
             times[second_before + 1] <= t - 1000) {
        ++second_before;
      }
      const int64_t to = static_cast<int64_t>(times.size()) - 1;  // the one before t's
      if (second_before < 0 || to < second_before) continue;
      if (last_busy[to] < second_before) {
        auto [w, stage_start] = held[changes[k].task - 1];
        w->hold_offset_ms = w->real_launch_ms - stage_start;
      }
    }
    times.push_back(t);
    const int64_t previous = last_busy.empty() ? -1 : last_busy.back();
    last_busy.push_back(free <= 0 ? static_cast<int64_t>(times.size() - 1) : previous);
  }
}

// Units: stage attempts with ended tasks, their locality waits held (HoldLocalityWaits) and
// then their per-executor warm-up taken off. In this order: a hold is found from when the run's
// slots really freed, and a first task's slot freed at its real end, warm-up included (taken off
// first, a 4-slot executor's first task looked done seconds early, and the task that really
// waited for its slot looked held by a locality wait: pinned to its real offset, no change
// could move it).
std::vector<Unit> UnitsOfWork(const model::ApplicationModel& m,
                              const std::vector<int64_t>& slot_released,
                              const std::vector<ExecutorSlots>& executors) {
  std::vector<Unit> units;
  std::vector<std::vector<uint32_t>> unit_executors;  // per unit, per task
  for (const auto& [key, stage] : m.stages) {
    auto [begin, end] = m.TasksOf(stage);
    Unit unit;
    std::vector<uint32_t> task_executors;  // per task of the unit
    unit.stage_id = stage.stage_id;
    unit.attempt = stage.attempt;
    unit.name = stage.name;
    unit.job = stage.job_ids.empty() ? -1 : stage.job_ids.front();
    int64_t first = -1, last = -1;
    for (const uint32_t* it = begin; it != end; ++it) {
      const model::TaskAttempt& t = m.tasks[*it];
      if (!t.ended() || t.launch_time_ms < 0 || t.finish_time_ms < t.launch_time_ms) continue;
      unit.tasks.push_back(WorkOf(t, slot_released[*it], m.start_time_ms));
      task_executors.push_back(t.executor);
      first = first < 0 ? t.launch_time_ms : std::min(first, t.launch_time_ms);
      last = std::max(last, t.finish_time_ms);
      if (t.has_metrics && t.metrics.shuffle_bytes_read() > 0) unit.shuffle_read = true;
    }
    if (unit.tasks.empty()) continue;
    unit.real_submit = first;
    unit.real_end = last;
    units.push_back(std::move(unit));
    unit_executors.push_back(std::move(task_executors));
  }
  HoldLocalityWaits(executors, m.start_time_ms, units);
  std::vector<uint32_t> warmup_seen(m.strings.size() + 1, 0);
  for (size_t u = 0; u < units.size(); ++u) {
    const auto stamp = static_cast<uint32_t>(u + 1);  // a new one per unit
    units[u].warmup_ms = TakeWarmup(units[u].tasks, unit_executors[u], warmup_seen, stamp);
  }
  return units;
}

// Jobs (with a submission) by id, and the job each unit belongs to: the latest job listing its
// stage submitted before it (-1: none).
std::map<int32_t, JobInfo> AssignUnitsToJobs(const model::ApplicationModel& m,
                                             std::vector<Unit>& units) {
  std::map<int32_t, JobInfo> job_map;
  for (const auto& [id, job] : m.jobs) {
    if (job.submission_time_ms < 0) continue;
    JobInfo info;
    info.job_id = id;
    info.real_submit = job.submission_time_ms;
    info.real_end = job.completion_time_ms >= job.submission_time_ms ? job.completion_time_ms
                                                                     : job.submission_time_ms;
    job_map[id] = info;
  }
  std::unordered_map<int32_t, std::vector<int32_t>> jobs_of_stage;
  for (const auto& [id, job] : m.jobs) {
    for (int32_t s : job.stage_ids) jobs_of_stage[s].push_back(id);
  }
  for (size_t u = 0; u < units.size(); ++u) {
    Unit& unit = units[u];
    int32_t best = -1;
    for (int32_t id : jobs_of_stage[unit.stage_id]) {
      auto job = job_map.find(id);
      if (job == job_map.end()) continue;
      if (best < 0 || (job->second.real_submit <= unit.real_submit &&
                       job->second.real_submit >= job_map[best].real_submit)) {
        best = id;
      }
    }
    unit.job = best;
    if (best >= 0) job_map[best].units.push_back(u);
  }
  return job_map;
}

// Dependencies: parents' latest attempts that ended before this one started; the previous
// attempt of the same stage. A unit is released that long after its dependencies (or its job's
// submission) as it was in the run.
void LinkDependencies(const model::ApplicationModel& m, const std::map<int32_t, JobInfo>& job_map,
                      std::unordered_map<int32_t, std::vector<size_t>>& units_of_stage,
                      std::vector<Unit>& units) {
  for (size_t u = 0; u < units.size(); ++u) units_of_stage[units[u].stage_id].push_back(u);
  for (size_t u = 0; u < units.size(); ++u) {
    Unit& unit = units[u];
    const model::StageAttempt& stage = m.stages.at({unit.stage_id, unit.attempt});
    int64_t ready_at = -1;
    std::vector<int32_t> parents = stage.parent_ids;
    if (unit.attempt > 0) parents.push_back(unit.stage_id);
    for (int32_t parent : parents) {
      size_t chosen = units.size();
      for (size_t index : units_of_stage[parent]) {
        if (index == u) continue;
        if (units[index].real_end <= unit.real_submit &&
            (chosen == units.size() || units[index].real_end > units[chosen].real_end)) {
          chosen = index;
        }
      }
      if (chosen == units.size()) continue;
      unit.deps.push_back(chosen);
      ready_at = std::max(ready_at, units[chosen].real_end);
    }
    auto job = job_map.find(unit.job);
    if (unit.deps.empty()) {
      const int64_t anchor = job != job_map.end() ? job->second.real_submit : m.start_time_ms;
      unit.delay_after_deps = Span(unit.real_submit, anchor);
    } else {
      unit.delay_after_deps = Span(unit.real_submit, ready_at);
    }
  }
}

// The jobs with their anchors (the last job ended before each was submitted) and tails (job end
// after its last task), in job id order.
std::vector<JobInfo> AnchorJobs(const model::ApplicationModel& m, const std::vector<Unit>& units,
                                std::map<int32_t, JobInfo>& job_map) {
  std::vector<JobInfo> jobs;
  for (auto& [id, job] : job_map) {
    int64_t last_task = -1;
    for (size_t u : job.units) last_task = std::max(last_task, units[u].real_end);
    // No JobEnd (an incomplete log): the job ran until its last task.
    if (m.jobs.at(id).completion_time_ms < job.real_submit) {
      job.real_end = std::max(job.real_submit, last_task);
    }
    job.tail_ms = last_task >= 0 ? Span(job.real_end, last_task) : 0;
    int64_t anchor_time = m.start_time_ms;
    for (const auto& [other_id, other] : job_map) {
      if (other_id == id || other.real_end > job.real_submit) continue;
      if (other.real_end > anchor_time || (other.real_end == anchor_time && job.anchor_job < 0)) {
        anchor_time = other.real_end;
        job.anchor_job = other_id;
      }
    }
    job.anchor_offset = Span(job.real_submit, anchor_time);
    jobs.push_back(job);
  }
  return jobs;
}

// Units outside any job (trimmed logs): a job of their own each, released at their real start.
void AddOrphanJobs(int64_t start, std::vector<Unit>& units, std::vector<JobInfo>& jobs) {
  for (size_t u = 0; u < units.size(); ++u) {
    if (units[u].job >= 0) continue;
    JobInfo orphan;
    orphan.job_id = -1000 - static_cast<int32_t>(u);
    orphan.real_submit = units[u].real_submit;
    orphan.real_end = units[u].real_end;
    orphan.anchor_offset = Span(units[u].real_submit, start);
    orphan.units.push_back(u);
    units[u].job = orphan.job_id;
    units[u].deps.clear();
    units[u].delay_after_deps = 0;
    jobs.push_back(orphan);
  }
}

// The application's time after its last job ended.
int64_t AppTailMs(const model::ApplicationModel& m, const std::vector<JobInfo>& jobs) {
  int64_t last_job_end = m.start_time_ms;
  for (const JobInfo& job : jobs) last_job_end = std::max(last_job_end, job.real_end);
  return Span(m.end_time_ms, last_job_end);
}

ShuffleWrites ShuffleWritesOf(const model::ApplicationModel& m) {
  ShuffleWrites writes;
  for (const model::TaskAttempt& t : m.tasks) {
    if (!t.has_metrics) continue;
    writes.bytes += std::max<int64_t>(t.metrics.shuffle_bytes_written, 0);
    writes.ms += std::max<int64_t>(t.metrics.shuffle_write_time_ns, 0) / 1'000'000;
  }
  return writes;
}

// What the memory rescaling reads, from the run's settings and task metrics.
MemoryRelation MemoryOf(const model::ApplicationModel& m, bool local_mode,
                        const ShuffleWrites& writes) {
  MemoryRelation memory;
  const std::string heap_key = local_mode ? "spark.driver.memory" : "spark.executor.memory";
  int64_t heap_mb = -1;
  if (auto profile = m.resource_profiles.find(0); !local_mode &&
                                                  profile != m.resource_profiles.end() &&
                                                  profile->second.executor_memory_mb > 0) {
    heap_mb = profile->second.executor_memory_mb;
  }
  if (heap_mb <= 0) heap_mb = ParseSizeBytes(PropertyOr(m, heap_key.c_str(), "1g"), kMiB) / kMiB;
  memory.heap_mb = heap_mb > 0 ? heap_mb : 1024;
  const double fraction =
      std::strtod(PropertyOr(m, "spark.memory.fraction", "0.6").c_str(), nullptr);
  memory.fraction = fraction > 0.05 && fraction <= 1 ? fraction : 0.6;
  for (const model::Executor& e : m.executors) {
    memory.live_bytes = std::max(memory.live_bytes, e.peaks.on_heap_unified_memory_bytes);
  }
  int64_t memory_spilled = 0, disk_spilled = 0;
  for (const model::TaskAttempt& t : m.tasks) {
    if (!t.has_metrics) continue;
    memory_spilled += std::max<int64_t>(t.metrics.memory_bytes_spilled, 0);
    disk_spilled += std::max<int64_t>(t.metrics.disk_bytes_spilled, 0);
  }
  const double write_ms_per_byte = writes.bytes >= (16 << 20) && writes.ms > 0
                                       ? static_cast<double>(writes.ms) / writes.bytes
                                       : 1000.0 / (100.0 * kMiB);
  memory.spill_ms_per_byte = 2 * write_ms_per_byte;
  if (memory_spilled > 0) {
    memory.disk_per_memory = static_cast<double>(disk_spilled) / memory_spilled;
  }
  return memory;
}

// The run replayed as it was: the baseline, and how far it is from the run's wall time.
void ReplayAsRun(PreparedRun& run) {
  Prediction& p = run.base;
  run.baseline = Replay(run.units, run.jobs, run.executors, run.app_tail_ms, p.actual_wall_ms,
                        run.launch_gap_ms);
  p.baseline_wall_ms = run.baseline.wall_ms;
  p.baseline_core_hours = run.baseline.core_hours;
  p.self_prediction_error =
      p.actual_wall_ms > 0
          ? std::fabs(static_cast<double>(p.baseline_wall_ms - p.actual_wall_ms)) / p.actual_wall_ms
          : 0;
}

}  // namespace

std::unique_ptr<const PreparedRun> PrepareRun(const model::ApplicationModel& m) {
  auto run = std::make_unique<PreparedRun>();
  run->model = &m;
  Prediction& p = run->base;
  p.actual_wall_ms = m.duration_ms();

  const std::vector<Launches> launched_on = LaunchesByExecutor(m);
  run->task_cpus = TaskCpus(m);
  const std::map<std::string, int32_t> slots_of =
      ListExecutors(m, ObservedConcurrency(m, launched_on), *run);
  p.actual_executors = static_cast<int32_t>(run->executors.size());
  p.actual_cores_per_executor = run->real_cores;
  const std::vector<int64_t> slot_released = SlotReleases(m, launched_on, slots_of);
  p.actual_core_hours = CoreHours(run->executors, p.actual_wall_ms);
  run->launch_gap_ms = MedianLaunchGapMs(m, launched_on, slot_released);

  run->units = UnitsOfWork(m, slot_released, run->executors);
  std::map<int32_t, JobInfo> job_map = AssignUnitsToJobs(m, run->units);
  LinkDependencies(m, job_map, run->units_of_stage, run->units);
  run->jobs = AnchorJobs(m, run->units, job_map);
  AddOrphanJobs(m.start_time_ms, run->units, run->jobs);
  run->app_tail_ms = AppTailMs(m, run->jobs);

  ReplayAsRun(*run);
  run->local_mode = std::all_of(m.executors.begin(), m.executors.end(),
                                [](const model::Executor& e) { return e.is_driver(); });
  run->shuffle_writes = ShuffleWritesOf(m);
  run->memory = MemoryOf(m, run->local_mode, run->shuffle_writes);
  return run;
}

}  // namespace sparkprof::whatif
