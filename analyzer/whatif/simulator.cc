#include "analyzer/whatif/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

namespace sparkprof::whatif {

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 4;
constexpr double kSkewFactor = 2.0;  // fix_skew: tasks above 2x the stage median
// Bounds that keep a replay of hostile input finite: tasks per re-split stage, pieces per split
// task, a task's duration and any delay (a year).
constexpr int64_t kMaxStageTasks = 100'000;
constexpr int64_t kMaxPieces = 1'000;
constexpr int64_t kMaxMs = 365ll * 24 * 3600 * 1000;

// a - b, clamped to [0, kMaxMs] without overflowing on hostile timestamps.
int64_t Span(int64_t a, int64_t b) {
  const __int128 d = static_cast<__int128>(a) - static_cast<__int128>(b);
  return d <= 0 ? 0 : d >= kMaxMs ? kMaxMs : static_cast<int64_t>(d);
}

int64_t ParseCount(const std::string& text, bool& ok) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  ok = end != text.c_str() && *end == '\0' && value > 0 && value <= 1'000'000;
  return ok ? value : -1;
}

// One ended task attempt to replay: how long it held a slot, and -- when the run held it back
// while slots were free (delay scheduling: locality waits) -- how long after its stage's first
// task it launched; the replay does not launch it earlier than that.
struct Work {
  int64_t duration_ms;
  int64_t hold_offset_ms = -1;
  int64_t real_launch_ms = -1;  // relative to the application start (for computing the hold)
};

// A stage attempt that ran tasks.
struct Unit {
  int32_t stage_id = -1;
  int32_t attempt = 0;
  int32_t job = -1;
  std::string name;
  int64_t real_submit = -1;   // first task launch (or submission)
  int64_t real_end = -1;      // last task end
  std::vector<Work> tasks;    // in launch order
  std::vector<size_t> deps;   // units that must complete first
  int64_t delay_after_deps = 0;
  bool shuffle_read = false;  // re-split by shuffle_partitions
  // Simulation state.
  size_t deps_left = 0;
  size_t next_task = 0;
  size_t running = 0;
  int64_t sim_start = -1;
  int64_t sim_end = -1;
  bool released = false;
  int64_t wake_at = -1;  // a wake-up event is pending for a held task
};

struct JobInfo {
  int32_t job_id = -1;
  int64_t real_submit = -1;
  int64_t real_end = -1;
  int32_t anchor_job = -1;   // the last job that had ended before this one was submitted
  int64_t anchor_offset = 0; // real submit - real anchor time
  int64_t tail_ms = 0;       // real job end - real last task end of its units
  std::vector<size_t> units;
  size_t units_left = 0;
  int64_t sim_submit = -1;
  int64_t sim_end = -1;
};

struct ExecutorSlots {
  int64_t added = 0;    // relative to the application start
  int64_t removed = kNever;
  int32_t slots = 1;
};

// The work of a stage after the scenario's re-split (shuffle partitions, skew fix).
std::vector<Work> Reshape(std::vector<Work> tasks, const Unit& unit, const Scenario& scenario,
                          int64_t fixed_ms) {
  if (tasks.empty()) return tasks;
  const bool fix_here =
      scenario.fix_skew &&
      (scenario.skew_stages.empty() ||
       std::find(scenario.skew_stages.begin(), scenario.skew_stages.end(), unit.stage_id) !=
           scenario.skew_stages.end());
  int64_t new_count = -1;
  if (auto stage = scenario.stage_partitions.find(unit.stage_id);
      stage != scenario.stage_partitions.end()) {
    new_count = stage->second;
  } else if (scenario.shuffle_partitions > 0 && unit.shuffle_read) {
    new_count = scenario.shuffle_partitions;
  }
  if (fix_here && tasks.size() >= 5) {
    std::vector<int64_t> durations;
    for (const Work& w : tasks) durations.push_back(w.duration_ms);
    std::nth_element(durations.begin(), durations.begin() + durations.size() / 2, durations.end());
    const int64_t median = std::max<int64_t>(durations[durations.size() / 2], 1);
    std::vector<Work> split;
    for (const Work& w : tasks) {
      if (static_cast<double>(w.duration_ms) <= kSkewFactor * static_cast<double>(median)) {
        split.push_back(w);
        continue;
      }
      // AQE-style split: pieces of about the median's work, each paying the fixed task cost.
      const int64_t work = std::max<int64_t>(w.duration_ms - fixed_ms, 1);
      const int64_t piece = std::max<int64_t>(median - fixed_ms, 1);
      const int64_t pieces =
          std::clamp<int64_t>((work + piece - 1) / piece, 1,
                              std::min<int64_t>(kMaxPieces, kMaxStageTasks / static_cast<int64_t>(tasks.size()) + 1));
      for (int64_t i = 0; i < pieces; ++i) split.push_back({fixed_ms + work / pieces});
    }
    tasks = std::move(split);
  }
  new_count = std::min(new_count, kMaxStageTasks);
  if (new_count > 0 && static_cast<int64_t>(tasks.size()) != new_count) {
    // The stage's work (durations less the fixed per-task cost) spread over the new count, in
    // partition order, fractional: a task's work goes where its partitions go.
    const size_t old_count = tasks.size();
    const size_t count = static_cast<size_t>(new_count);
    std::vector<double> work;
    for (const Work& w : tasks) work.push_back(std::max<double>(w.duration_ms - fixed_ms, 0));
    std::vector<Work> out(count, Work{fixed_ms});
    for (size_t i = 0; i < old_count; ++i) {
      // Old task i covers [i/old, (i+1)/old) of the key space.
      const double begin = static_cast<double>(i) / old_count;
      const double end = static_cast<double>(i + 1) / old_count;
      size_t first = static_cast<size_t>(begin * count);
      for (size_t j = first; j < count; ++j) {
        const double lo = std::max(begin, static_cast<double>(j) / count);
        const double hi = std::min(end, static_cast<double>(j + 1) / count);
        if (hi <= lo) break;
        out[j].duration_ms += static_cast<int64_t>(std::llround(work[i] * (hi - lo) * old_count));
      }
    }
    tasks = std::move(out);
  }
  return tasks;
}

struct RunResult {
  int64_t wall_ms = 0;
  double core_hours = 0;
  std::vector<std::pair<int64_t, int64_t>> unit_spans;  // sim start, end per unit
  std::vector<int64_t> unit_tasks;
};

// The discrete-event replay.
RunResult Replay(std::vector<Unit> units, std::vector<JobInfo> jobs,
                 const std::vector<ExecutorSlots>& executors, int64_t app_tail_ms,
                 int64_t real_wall_ms, int64_t launch_gap_ms) {
  RunResult result;
  std::unordered_map<int32_t, size_t> job_index;
  for (size_t j = 0; j < jobs.size(); ++j) job_index[jobs[j].job_id] = j;
  std::vector<std::vector<size_t>> dependents(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    units[u].deps_left = units[u].deps.size();
    for (size_t d : units[u].deps) dependents[d].push_back(u);
  }
  std::vector<std::vector<size_t>> anchored(jobs.size());  // jobs waiting for a job's end
  std::vector<size_t> from_start;
  for (size_t j = 0; j < jobs.size(); ++j) {
    jobs[j].units_left = jobs[j].units.size();
    auto anchor = job_index.find(jobs[j].anchor_job);
    if (jobs[j].anchor_job >= 0 && anchor != job_index.end()) {
      anchored[anchor->second].push_back(j);
    } else {
      from_start.push_back(j);
    }
  }

  // Events: (time, kind, index). Kinds: 1 job submit, 2 unit release, 3 job end, 4 executor
  // arrival/leaving, 5 a slot free again after the dispatch gap. Task ends are in `running`.
  using Event = std::tuple<int64_t, int, size_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  for (size_t j : from_start) events.push({jobs[j].anchor_offset, 1, j});
  for (size_t e = 0; e < executors.size(); ++e) {
    events.push({executors[e].added, 4, e});
    if (executors[e].removed < kNever) events.push({executors[e].removed, 4, e});
  }
  // Free slots per executor; ready units in FIFO order (job, stage, attempt).
  std::vector<int32_t> free_slots(executors.size(), 0);
  std::vector<bool> alive(executors.size(), false);
  std::set<std::tuple<int32_t, int32_t, int32_t, size_t>> ready;
  // Running tasks: when each ends and on which executor.
  std::priority_queue<std::tuple<int64_t, size_t, size_t>, std::vector<std::tuple<int64_t, size_t, size_t>>,
                      std::greater<>>
      running;  // end, unit, executor
  int64_t last_job_end = 0;
  size_t jobs_done = 0;

  auto release_unit = [&](size_t u, int64_t at) { events.push({at, 2, u}); };
  auto job_done = [&](size_t j, int64_t at) {
    jobs[j].sim_end = at;
    last_job_end = std::max(last_job_end, at);
    ++jobs_done;
    for (size_t next : anchored[j]) events.push({at + jobs[next].anchor_offset, 1, next});
  };
  auto unit_done = [&](size_t u, int64_t at) {
    units[u].sim_end = at;
    for (size_t d : dependents[u]) {
      if (--units[d].deps_left == 0) release_unit(d, at + units[d].delay_after_deps);
    }
    auto j = job_index.find(units[u].job);
    if (j != job_index.end() && --jobs[j->second].units_left == 0) {
      events.push({at + jobs[j->second].tail_ms, 3, j->second});
    }
  };

  auto dispatch = [&](int64_t now) {
    while (!ready.empty()) {
      // The first ready unit (FIFO) whose next task is not held back by the run's locality wait.
      auto first = ready.begin();
      for (; first != ready.end(); ++first) {
        Unit& candidate = units[std::get<3>(*first)];
        const Work& next = candidate.tasks[candidate.next_task];
        if (next.hold_offset_ms < 0 || candidate.sim_start < 0 ||
            candidate.sim_start + next.hold_offset_ms <= now) {
          break;
        }
        const int64_t wake = candidate.sim_start + next.hold_offset_ms;
        if (candidate.wake_at != wake) {
          candidate.wake_at = wake;
          events.push({wake, 6, std::get<3>(*first)});
        }
      }
      if (first == ready.end()) return;
      // The executor with a free slot that arrived first (Spark offers resources round-robin;
      // for wall time only the count of free slots matters).
      size_t executor = executors.size();
      for (size_t e = 0; e < executors.size(); ++e) {
        if (alive[e] && free_slots[e] > 0) {
          executor = e;
          break;
        }
      }
      if (executor == executors.size()) return;
      const size_t u = std::get<3>(*first);
      Unit& unit = units[u];
      if (unit.sim_start < 0) unit.sim_start = now;
      const int64_t duration = unit.tasks[unit.next_task].duration_ms;
      ++unit.next_task;
      ++unit.running;
      if (unit.next_task == unit.tasks.size()) ready.erase(first);
      --free_slots[executor];
      running.push({now + std::max<int64_t>(duration, 0), u, executor});
    }
  };

  int64_t now = 0;
  const size_t guard_limit = 50'000'000;
  size_t steps = 0;
  while ((!events.empty() || !running.empty()) && ++steps < guard_limit) {
    const int64_t next_event = events.empty() ? kNever : std::get<0>(events.top());
    const int64_t next_end = running.empty() ? kNever : std::get<0>(running.top());
    if (next_end <= next_event) {
      auto [at, u, executor] = running.top();
      running.pop();
      now = at;
      // The slot takes the run's dispatch gap (status update, scheduling, launch) to be reused.
      if (launch_gap_ms > 0) {
        events.push({now + launch_gap_ms, 5, executor});
      } else {
        ++free_slots[executor];
      }
      if (--units[u].running == 0 && units[u].next_task == units[u].tasks.size()) {
        unit_done(u, now);
      }
    } else {
      auto [at, kind, index] = events.top();
      events.pop();
      now = at;
      if (kind == 1) {  // job submit
        JobInfo& job = jobs[index];
        job.sim_submit = now;
        if (job.units.empty()) {
          events.push({now + Span(job.real_end, job.real_submit), 3, index});
        }
        for (size_t u : job.units) {
          if (units[u].deps.empty()) release_unit(u, now + units[u].delay_after_deps);
        }
      } else if (kind == 2) {  // unit release
        Unit& unit = units[index];
        if (unit.released) continue;
        unit.released = true;
        if (unit.tasks.empty()) {
          unit_done(index, now);
        } else {
          ready.insert({unit.job, unit.stage_id, unit.attempt, index});
        }
      } else if (kind == 3) {
        job_done(index, now);
      } else if (kind == 5) {
        ++free_slots[index];
      } else if (kind == 6) {
        // a held task may launch now: dispatch below
      } else if (kind == 4) {
        if (!alive[index] && now < executors[index].removed) {
          alive[index] = true;
          free_slots[index] += executors[index].slots;
        } else if (alive[index] && now >= executors[index].removed) {
          alive[index] = false;
          free_slots[index] -= executors[index].slots;  // running tasks finish, nothing new
        }
      }
    }
    // Process everything at this instant before dispatching.
    const int64_t next_event2 = events.empty() ? kNever : std::get<0>(events.top());
    const int64_t next_end2 = running.empty() ? kNever : std::get<0>(running.top());
    if (std::min(next_event2, next_end2) > now) dispatch(now);
  }
  result.wall_ms = last_job_end + app_tail_ms;
  if (jobs.empty()) result.wall_ms = real_wall_ms;
  for (const Unit& unit : units) {
    result.unit_spans.push_back({unit.sim_start, unit.sim_end});
    result.unit_tasks.push_back(static_cast<int64_t>(unit.tasks.size()));
  }
  for (const ExecutorSlots& e : executors) {
    const int64_t held = std::min(e.removed, result.wall_ms) - std::min(e.added, result.wall_ms);
    result.core_hours += static_cast<double>(std::max<int64_t>(held, 0)) * e.slots / 3'600'000.0;
  }
  return result;
}

}  // namespace

bool ApplySetting(const std::string& assignment, Scenario& scenario, std::string& error) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) {
    error = "--set wants key=value, got \"" + assignment + "\"";
    return false;
  }
  const std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  if (key != "spark.executor.instances" && key != "spark.executor.cores" &&
      key != "spark.sql.shuffle.partitions") {
    error = "cannot simulate " + key +
            " (supported: spark.executor.instances, spark.executor.cores, "
            "spark.sql.shuffle.partitions)";
    return false;
  }
  bool ok = false;
  const int64_t count = ParseCount(value, ok);
  if (!ok) {
    error = key + ": \"" + value + "\" is not a positive count";
    return false;
  }
  if (key == "spark.executor.instances") {
    scenario.executors = static_cast<int32_t>(count);
  } else if (key == "spark.executor.cores") {
    scenario.cores_per_executor = static_cast<int32_t>(count);
  } else {
    scenario.shuffle_partitions = static_cast<int32_t>(count);
  }
  return true;
}

bool ApplyFix(const std::string& fix, Scenario& scenario, std::string& error) {
  if (fix == "skew") {
    scenario.fix_skew = true;
    return true;
  }
  error = "cannot simulate --fix " + fix + " (supported: skew)";
  return false;
}

Prediction Simulate(const model::ApplicationModel& m, const Scenario& scenario) {
  Prediction p;
  const int64_t start = m.start_time_ms;
  p.actual_wall_ms = m.duration_ms();

  // Executors with cores (the local-mode driver included); cores unknown -> observed concurrency.
  std::map<std::string, int32_t> concurrency;
  {
    std::map<std::string, std::vector<std::pair<int64_t, int>>> changes;
    for (const model::TaskAttempt& t : m.tasks) {
      if (!t.ended() || t.executor == model::kNone || t.launch_time_ms < 0) continue;
      auto& list = changes[m.strings.Get(t.executor)];
      list.push_back({t.launch_time_ms, 1});
      list.push_back({std::max(t.finish_time_ms, t.launch_time_ms), -1});
    }
    for (auto& [id, list] : changes) {
      std::sort(list.begin(), list.end(),
                [](const auto& a, const auto& b) { return a.first != b.first ? a.first < b.first : a.second < b.second; });
      int current = 0, most = 0;
      for (const auto& [t, d] : list) most = std::max(most, current += d);
      concurrency[id] = most;
    }
  }
  // The dispatch gap: on each executor, from a task's end to the launch that reuses its slot,
  // when that launch came within a second (longer means no task was waiting). Median.
  int64_t launch_gap_ms = 0;
  {
    std::map<std::string, std::vector<std::pair<int64_t, int>>> timeline;  // time, +1 end / 0 launch
    for (const model::TaskAttempt& t : m.tasks) {
      if (!t.ended() || t.executor == model::kNone || t.launch_time_ms < 0) continue;
      auto& list = timeline[m.strings.Get(t.executor)];
      list.push_back({t.launch_time_ms, 1});
      list.push_back({std::max(t.finish_time_ms, t.launch_time_ms), 0});
    }
    std::vector<int64_t> gaps;
    for (auto& [id, list] : timeline) {
      std::sort(list.begin(), list.end());
      std::deque<int64_t> freed;
      for (const auto& [time, launch] : list) {
        if (!launch) {
          freed.push_back(time);
        } else if (!freed.empty()) {
          const int64_t gap = time - freed.front();
          freed.pop_front();
          if (gap >= 0 && gap < 1000) gaps.push_back(gap);
        }
      }
    }
    if (gaps.size() >= 10) {
      std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
      launch_gap_ms = gaps[gaps.size() / 2];
    }
  }
  double task_cpus = 1;
  if (auto profile = m.resource_profiles.find(0);
      profile != m.resource_profiles.end() && profile->second.task_cpus >= 1) {
    task_cpus = profile->second.task_cpus;
  }
  std::vector<ExecutorSlots> executors;
  std::set<std::string> listed;
  int32_t real_cores = 0;
  for (const model::Executor& e : m.executors) {
    listed.insert(e.executor_id);
    const auto seen = concurrency.find(e.executor_id);
    const int32_t observed = seen != concurrency.end() ? seen->second : 0;
    int32_t slots = e.total_cores > 0 ? static_cast<int32_t>(std::min<double>(e.total_cores / task_cpus, 100'000)) : observed;
    slots = std::max(slots, observed);
    if (slots <= 0) continue;
    if (e.is_driver() && observed == 0) continue;
    ExecutorSlots s;
    s.added = e.added_time_ms >= 0 ? Span(e.added_time_ms, start) : 0;
    s.removed = e.removed_time_ms >= 0 ? std::max(Span(e.removed_time_ms, start), s.added) : kNever;
    s.slots = slots;
    executors.push_back(s);
    real_cores = std::max(real_cores, e.total_cores > 0 ? e.total_cores : slots);
  }
  for (const auto& [id, observed] : concurrency) {  // executors only the tasks name
    if (listed.count(id) != 0 || observed <= 0) continue;
    executors.push_back({0, kNever, observed});
  }
  std::stable_sort(executors.begin(), executors.end(),
                   [](const ExecutorSlots& a, const ExecutorSlots& b) { return a.added < b.added; });
  p.actual_executors = static_cast<int32_t>(executors.size());
  p.actual_cores_per_executor = real_cores;
  for (const ExecutorSlots& e : executors) {
    const int64_t held = std::min(e.removed, p.actual_wall_ms) - std::min(e.added, p.actual_wall_ms);
    p.actual_core_hours += static_cast<double>(std::max<int64_t>(held, 0)) * e.slots / 3'600'000.0;
  }

  // Units: stage attempts with ended tasks.
  std::vector<Unit> units;
  std::map<std::pair<int32_t, int32_t>, size_t> unit_of;
  for (const auto& [key, stage] : m.stages) {
    auto [begin, end] = m.TasksOf(stage);
    Unit unit;
    unit.stage_id = stage.stage_id;
    unit.attempt = stage.attempt;
    unit.name = stage.name;
    unit.job = stage.job_ids.empty() ? -1 : stage.job_ids.front();
    int64_t first = -1, last = -1;
    for (const uint32_t* it = begin; it != end; ++it) {
      const model::TaskAttempt& t = m.tasks[*it];
      if (!t.ended() || t.launch_time_ms < 0 || t.finish_time_ms < t.launch_time_ms) continue;
      unit.tasks.push_back({std::min(t.finish_time_ms - t.launch_time_ms, kMaxMs), -1,
                            Span(t.launch_time_ms, start)});
      first = first < 0 ? t.launch_time_ms : std::min(first, t.launch_time_ms);
      last = std::max(last, t.finish_time_ms);
      if (t.has_metrics && t.metrics.shuffle_bytes_read() > 0) unit.shuffle_read = true;
    }
    if (unit.tasks.empty()) continue;
    unit.real_submit = first;
    unit.real_end = last;
    unit_of[key] = units.size();
    units.push_back(std::move(unit));
  }
  // Delay scheduling as the run shows it: a task launched after >= 1 s during which a slot was
  // free (app-wide) since its stage had started is held to its real offset in the replay.
  {
    std::vector<std::pair<int64_t, int>> changes;  // relative time, delta of free slots
    for (const ExecutorSlots& e : executors) {
      changes.push_back({e.added, e.slots});
      if (e.removed < kNever) changes.push_back({e.removed, -e.slots});
    }
    for (const Unit& unit : units) {
      for (const Work& w : unit.tasks) {
        changes.push_back({w.real_launch_ms, -1});
        changes.push_back({w.real_launch_ms + w.duration_ms, 1});
      }
    }
    std::sort(changes.begin(), changes.end());
    // Segments [time[i], time[i+1]) with free[i]; last_busy[i]: last segment <= i with free <= 0.
    std::vector<int64_t> times;
    std::vector<int64_t> last_busy;
    int64_t free = 0;
    for (size_t i = 0; i < changes.size();) {
      const int64_t t = changes[i].first;
      while (i < changes.size() && changes[i].first == t) free += changes[i++].second;
      times.push_back(t);
      const int64_t previous = last_busy.empty() ? -1 : last_busy.back();
      last_busy.push_back(free <= 0 ? static_cast<int64_t>(times.size() - 1) : previous);
    }
    auto segment_at = [&](int64_t t) {  // the segment containing time t (-1 before the first)
      return static_cast<int64_t>(std::upper_bound(times.begin(), times.end(), t) - times.begin()) - 1;
    };
    for (Unit& unit : units) {
      const int64_t stage_start = unit.real_submit - start;
      for (size_t i = 1; i < unit.tasks.size(); ++i) {
        Work& w = unit.tasks[i];
        const int64_t window_start = std::max(stage_start, w.real_launch_ms - 1000);
        if (w.real_launch_ms - window_start < 1000) continue;
        const int64_t from = segment_at(window_start);
        const int64_t to = segment_at(w.real_launch_ms - 1);
        if (from < 0 || to < from) continue;
        if (last_busy[to] < from) w.hold_offset_ms = w.real_launch_ms - stage_start;
      }
    }
  }
  // Jobs and the job each unit belongs to: the latest job listing its stage submitted before it.
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
  // Dependencies: parents' latest attempts that ended before this one started; the previous
  // attempt of the same stage.
  std::unordered_map<int32_t, std::vector<size_t>> units_of_stage;
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
      const int64_t anchor = job != job_map.end() ? job->second.real_submit : start;
      unit.delay_after_deps = Span(unit.real_submit, anchor);
    } else {
      unit.delay_after_deps = Span(unit.real_submit, ready_at);
    }
  }
  // Job anchors and tails.
  std::vector<JobInfo> jobs;
  for (auto& [id, job] : job_map) {
    int64_t last_task = -1;
    for (size_t u : job.units) last_task = std::max(last_task, units[u].real_end);
    // No JobEnd (an incomplete log): the job ran until its last task.
    if (m.jobs.at(id).completion_time_ms < job.real_submit) {
      job.real_end = std::max(job.real_submit, last_task);
    }
    job.tail_ms = last_task >= 0 ? Span(job.real_end, last_task) : 0;
    int64_t anchor_time = start;
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
  // Units outside any job (trimmed logs): released at their real start.
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
  int64_t last_job_end = start;
  for (const JobInfo& job : jobs) last_job_end = std::max(last_job_end, job.real_end);
  const int64_t app_tail = Span(m.end_time_ms, last_job_end);

  RunResult baseline = Replay(units, jobs, executors, app_tail, p.actual_wall_ms, launch_gap_ms);
  p.baseline_wall_ms = baseline.wall_ms;
  p.baseline_core_hours = baseline.core_hours;
  p.self_prediction_error =
      p.actual_wall_ms > 0
          ? std::fabs(static_cast<double>(p.baseline_wall_ms - p.actual_wall_ms)) / p.actual_wall_ms
          : 0;

  // The scenario.
  std::vector<ExecutorSlots> changed = executors;
  if (scenario.cores_per_executor > 0) {
    for (ExecutorSlots& e : changed) {
      e.slots = std::max<int32_t>(1, static_cast<int32_t>(scenario.cores_per_executor / task_cpus));
    }
    p.changes.push_back("spark.executor.cores=" + std::to_string(scenario.cores_per_executor) +
                        " (was " + std::to_string(real_cores) + ")");
  }
  if (scenario.executors > 0 && !changed.empty()) {
    const size_t wanted = static_cast<size_t>(scenario.executors);
    const size_t had = changed.size();
    if (wanted < had) {
      changed.resize(wanted);
    } else {
      // New executors arrive when the last one of the run did and stay as long as the longest.
      const ExecutorSlots last = changed.back();
      while (changed.size() < wanted) changed.push_back(last);
    }
    p.changes.push_back("spark.executor.instances=" + std::to_string(wanted) + " (was " +
                        std::to_string(had) + ")");
  }
  std::vector<Unit> reshaped = units;
  if (scenario.fix_skew || scenario.shuffle_partitions > 0 || !scenario.stage_partitions.empty()) {
    for (Unit& unit : reshaped) {
      // Fixed cost per task: the shortest task of the stage (launch, deserialisation, result).
      int64_t fixed = kNever;
      for (const Work& w : unit.tasks) fixed = std::min(fixed, w.duration_ms);
      if (fixed == kNever) fixed = 0;
      unit.tasks = Reshape(unit.tasks, unit, scenario, std::min<int64_t>(fixed, 200));
    }
    if (scenario.fix_skew) p.changes.push_back("skew fixed: tasks above 2x their stage's median split into median-sized tasks");
    for (const auto& [stage, count] : scenario.stage_partitions) {
      p.changes.push_back("stage " + std::to_string(stage) + " re-split to " +
                          std::to_string(count) + " tasks");
    }
    if (scenario.shuffle_partitions > 0) {
      p.changes.push_back("spark.sql.shuffle.partitions=" +
                          std::to_string(scenario.shuffle_partitions) +
                          " (stages that read a shuffle re-split to that many tasks)");
    }
  }
  RunResult predicted =
      Replay(reshaped, jobs, changed, app_tail, p.actual_wall_ms, launch_gap_ms);
  p.predicted_wall_ms = predicted.wall_ms;
  p.predicted_core_hours = predicted.core_hours;
  p.predicted_executors = static_cast<int32_t>(changed.size());
  p.predicted_cores_per_executor =
      scenario.cores_per_executor > 0 ? scenario.cores_per_executor : real_cores;

  for (size_t u = 0; u < units.size(); ++u) {
    StagePrediction s;
    s.stage_id = units[u].stage_id;
    s.attempt = units[u].attempt;
    s.name = units[u].name;
    s.actual_ms = Span(units[u].real_end, units[u].real_submit);
    s.baseline_ms = baseline.unit_spans[u].second - baseline.unit_spans[u].first;
    s.predicted_ms = predicted.unit_spans[u].second - predicted.unit_spans[u].first;
    s.actual_tasks = static_cast<int64_t>(units[u].tasks.size());
    s.predicted_tasks = predicted.unit_tasks[u];
    p.stages.push_back(s);
  }
  p.assumptions = {
      "task durations are replayed as the run measured them (launch to finish), so executor "
      "speed, GC and I/O per task stay as they were",
      "driver-only gaps between jobs, the delay between a stage's parents and its first task, "
      "and each job's time after its last task (result fetch, commit) are kept",
      "tasks go FIFO to the first free slot, which is reused after the run's median dispatch gap "
      "(" + std::to_string(launch_gap_ms) + " ms); locality waits and speculation are not "
      "modelled"};
  if (scenario.shuffle_partitions > 0) {
    p.assumptions.push_back(
        "a re-split stage's work (task time less its shortest task) is spread evenly over the new "
        "partitions in key order, so a hot partition stays hot; spill and GC per task are not "
        "rescaled");
  }
  if (scenario.executors > 0) {
    p.assumptions.push_back(
        "added executors arrive when the run's last executor arrived; removed ones are the "
        "latest to arrive");
  }
  return p;
}

}  // namespace sparkprof::whatif
