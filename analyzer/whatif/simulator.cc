#include "analyzer/whatif/simulator.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <set>
#include <unordered_map>
#include <utility>

#include "analyzer/whatif/broadcast_joins.h"

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

constexpr int64_t kMiB = 1 << 20;

// A Spark size ("512m", "8g", "1t", "64k", "1048576b"); a bare number is in `unit` bytes.
// -1 when it is not one.
int64_t ParseSizeBytes(const std::string& text, int64_t unit) {
  if (text.empty()) return -1;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value >= 0) || value > 1e15) return -1;
  std::string suffix(end);
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (suffix.size() == 2 && suffix[1] == 'b' && suffix[0] != 'b') suffix.pop_back();  // "mb"
  double scale = static_cast<double>(unit);
  if (suffix == "b") scale = 1;
  else if (suffix == "k") scale = 1024.0;
  else if (suffix == "m") scale = 1024.0 * 1024;
  else if (suffix == "g") scale = 1024.0 * 1024 * 1024;
  else if (suffix == "t") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!suffix.empty()) return -1;
  const double bytes = value * scale;
  return bytes > 9e18 ? -1 : static_cast<int64_t>(bytes);
}

// One ended task attempt to replay: how long it held a slot, and -- when the run held it back
// while slots were free (delay scheduling: locality waits) -- how long after its stage's first
// task it launched; the replay does not launch it earlier than that.
struct Work {
  int64_t duration_ms;
  int64_t hold_offset_ms = -1;
  int64_t real_launch_ms = -1;  // relative to the application start (for computing the hold)
  // What the scenario's rescaling reads, from the task's metrics (0 without metrics).
  int64_t input_bytes = 0;
  int64_t records = 0;  // input and shuffle records read: the data the task was given
  int64_t shuffle_write_ms = 0;
  int64_t fetch_wait_ms = 0;
  int64_t gc_ms = 0;
  int64_t peak_memory_bytes = 0;
  int64_t memory_spilled_bytes = 0;
  int64_t disk_spilled_bytes = 0;
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
  // The first task of the stage on each executor takes this much longer (the stage's closure
  // and broadcasts deserialised, code warmed up, a Python worker started): taken off the run's
  // first tasks, added to the first task each simulated executor runs.
  int64_t warmup_ms = 0;
};

// A unit's state in one replay (the units themselves are shared by every replay).
struct UnitState {
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
};

struct ExecutorSlots {
  int64_t added = 0;    // relative to the application start
  int64_t removed = kNever;
  int32_t slots = 1;
};

// The most slots alive at once (at least 1).
int64_t PeakSlots(const std::vector<ExecutorSlots>& executors) {
  std::vector<std::pair<int64_t, int64_t>> changes;  // (time, slots): removals sort first
  for (const ExecutorSlots& e : executors) {
    changes.push_back({e.added, e.slots});
    if (e.removed < kNever) changes.push_back({e.removed, -int64_t{e.slots}});
  }
  std::sort(changes.begin(), changes.end());
  int64_t alive = 0, peak = 1;
  for (const auto& [at, delta] : changes) peak = std::max(peak, alive += delta);
  return peak;
}

// The work of a stage after the scenario's re-split: the skew fix, then `count` tasks (the
// new shuffle partitions or a file scan's new split; -1 to keep the count). `slots`: the most
// task slots the scenario's executors offer at once.
std::vector<Work> Reshape(std::vector<Work> tasks, const Unit& unit, const Scenario& scenario,
                          int64_t fixed_ms, int64_t count, int64_t slots) {
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
  } else if (count > 0) {
    new_count = count;
  }
  if (fix_here && tasks.size() >= 5) {
    std::vector<int64_t> durations;
    for (const Work& w : tasks) durations.push_back(w.duration_ms);
    std::nth_element(durations.begin(), durations.begin() + durations.size() / 2, durations.end());
    const int64_t median = std::max<int64_t>(durations[durations.size() / 2], 1);
    // AQE-style split: pieces of about the median task, each paying the fixed task cost -- but
    // no more pieces than pay for themselves. n pieces of a task with `work` beyond the fixed
    // cost f, on S slots, cost n x f more task time (n x f / S of the stage's time) and cut
    // its last piece to work / n + f, which holds one slot while the other S - 1 could share
    // it: the stage's end ~ (n f) / S + (work / n) (S - 1) / S, least at n = sqrt(work (S - 1)
    // / f). Median-sized pieces on a cluster with few slots paid the fixed cost dozens of
    // times over and the "fixed" stage came out longer than the skewed one; on one slot a split
    // saves nothing.
    const double spare_slots = static_cast<double>(std::max<int64_t>(slots, 1) - 1);
    std::vector<Work> split;
    for (const Work& w : tasks) {
      if (static_cast<double>(w.duration_ms) <= kSkewFactor * static_cast<double>(median)) {
        split.push_back(w);
        continue;
      }
      const int64_t work = std::max<int64_t>(w.duration_ms - fixed_ms, 1);
      const int64_t piece = std::max<int64_t>(median - fixed_ms, 1);
      const double worth = std::ceil(std::sqrt(static_cast<double>(work) * spare_slots /
                                               static_cast<double>(std::max<int64_t>(fixed_ms, 1))));
      const int64_t pieces = std::clamp<int64_t>(
          std::min<int64_t>((work + piece - 1) / piece,
                            static_cast<int64_t>(std::min(worth, double(kMaxPieces)))),
          1,
          std::min<int64_t>(kMaxPieces,
                            kMaxStageTasks / static_cast<int64_t>(tasks.size()) + 1));
      if (pieces == 1) {
        split.push_back(w);
        continue;
      }
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
  }
  return warmup;
}

// A Spark duration ("60s", "500ms", "2min", "1h"; a bare number in `unit_ms`), -1 when not one.
int64_t ParseDurationMs(const std::string& text, int64_t unit_ms) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value >= 0) || value > 1e12) return -1;
  const std::string suffix(end);
  double scale = static_cast<double>(unit_ms);
  if (suffix == "ms") scale = 1;
  else if (suffix == "s") scale = 1000;
  else if (suffix == "m" || suffix == "min") scale = 60'000;
  else if (suffix == "h") scale = 3'600'000;
  else if (!suffix.empty()) return -1;
  return static_cast<int64_t>(std::min(value * scale, static_cast<double>(kMaxMs)));
}

// The memory a task's execution could use: Spark's unified pool, (heap - 300 MiB reserved) x
// spark.memory.fraction, shared by the executor's concurrent tasks.
double PoolPerTaskBytes(int64_t heap_mb, double fraction, int32_t slots) {
  const double usable = std::max(static_cast<double>(heap_mb - 300) * kMiB * fraction, 16.0 * kMiB);
  return usable / std::max(slots, 1);
}

// What the memory rescaling reads from the run.
struct MemoryRelation {
  int64_t heap_mb = 1024;
  double fraction = 0.6;
  int64_t live_bytes = 0;         // the executors' peak storage + execution memory in use
  double spill_ms_per_byte = 0;   // per disk byte spilled: written and read back
  double disk_per_memory = 0.5;   // disk bytes per in-memory byte spilled
};

// What a scenario's heap (and/or slots) per executor changes for every task alike: the pool a
// task had and gets, and the factor on GC time (a copying collector's cost per allocated byte is
// about 1 / (heap - live): GC work grows as the free heap over the live data shrinks).
struct MemoryChange {
  MemoryChange(const MemoryRelation& r, int64_t new_heap_mb, int32_t slots, int32_t new_slots)
      : old_pool(PoolPerTaskBytes(r.heap_mb, r.fraction, slots)),
        new_pool(PoolPerTaskBytes(new_heap_mb, r.fraction, new_slots)) {
    const double heap = static_cast<double>(r.heap_mb) * kMiB;
    const double new_heap = static_cast<double>(new_heap_mb) * kMiB;
    const double live = std::min(static_cast<double>(r.live_bytes), 0.9 * heap);
    gc_factor =
        std::clamp((heap - live) / std::max(new_heap - live, 0.05 * new_heap), 0.2, 10.0);
  }
  double old_pool;
  double new_pool;
  double gc_factor;
};

// One task with another heap (and/or slots) per executor: its spill from the pool it would
// get (the pool it spilled at, scaled), its GC from the heap's headroom over the live data.
void RescaleMemory(Work& w, const MemoryRelation& r, const MemoryChange& change) {
  const double old_pool = change.old_pool;
  const double new_pool = change.new_pool;
  // Without a peak (old Spark, Photon) a task that spilled is taken to have filled its pool.
  const double peak = w.peak_memory_bytes > 0 || w.memory_spilled_bytes == 0
                          ? static_cast<double>(w.peak_memory_bytes)
                          : old_pool;
  const double need = peak + static_cast<double>(w.memory_spilled_bytes);
  // A task that spilled held its pool's limit at its peak; that limit moves with the pool.
  const double limit = w.memory_spilled_bytes > 0 ? peak * new_pool / old_pool : new_pool;
  const double spilled_memory = std::max(0.0, need - limit);
  const double disk_ratio =
      w.memory_spilled_bytes > 0
          ? static_cast<double>(w.disk_spilled_bytes) / static_cast<double>(w.memory_spilled_bytes)
          : r.disk_per_memory;
  const double other_ms = static_cast<double>(std::max<int64_t>(w.duration_ms - w.gc_ms, 0));
  // A spilled byte is written and read back at the run's own disk rate. (Pricing it like a
  // byte the task read instead predicted a sort 46% faster without spill; the real run was 2%
  // faster: the spill files stay in the page cache and the sort dominates.)
  const double spill_ms = std::min(static_cast<double>(w.disk_spilled_bytes) * r.spill_ms_per_byte,
                                   0.8 * other_ms);
  const double new_spill_ms = std::min(spilled_memory * disk_ratio * r.spill_ms_per_byte,
                                       10.0 * std::max(other_ms, 1.0));
  const double gc_factor = change.gc_factor;
  const double duration = static_cast<double>(w.duration_ms) - spill_ms + new_spill_ms -
                          static_cast<double>(w.gc_ms) * (1.0 - gc_factor);
  w.duration_ms = std::clamp<int64_t>(std::llround(duration), 1, kMaxMs);
  w.gc_ms = std::llround(static_cast<double>(w.gc_ms) * gc_factor);
}

// spark.speculation on, for one stage's tasks: a task still running multiplier x the stage's
// median, once `quantile` of the tasks have finished, gets a copy on a free slot; the first to
// finish wins. The copy takes the median scaled by the task's records over the median's (a hot
// partition's copy is as slow: skew is not helped). The original is cut to when the copy would
// win; the copy is added as a task held until it would launch. Returns the copies added.
int64_t Speculate(Unit& unit, double multiplier, double quantile) {
  const size_t n = unit.tasks.size();
  if (n < 2) return 0;
  std::vector<int64_t> durations, finishes, records;
  const int64_t stage_start = unit.tasks.front().real_launch_ms;
  int64_t first = stage_start;
  for (const Work& w : unit.tasks) first = std::min(first, w.real_launch_ms);
  for (const Work& w : unit.tasks) {
    durations.push_back(w.duration_ms);
    finishes.push_back(w.real_launch_ms - first + w.duration_ms);
    if (w.records > 0) records.push_back(w.records);
  }
  std::sort(durations.begin(), durations.end());
  std::sort(finishes.begin(), finishes.end());
  std::sort(records.begin(), records.end());
  const int64_t median = durations[n / 2];
  const int64_t median_records = records.size() == n ? records[n / 2] : 0;
  const size_t quantile_index =
      std::min(n - 1, static_cast<size_t>(std::ceil(quantile * static_cast<double>(n))) - 1);
  const int64_t quantile_at = finishes[quantile_index];
  const int64_t threshold = std::max<int64_t>(std::llround(multiplier * median), 100);
  std::vector<Work> copies;
  for (Work& w : unit.tasks) {
    if (w.duration_ms <= threshold || w.real_launch_ms < 0) continue;
    const int64_t launch = w.real_launch_ms - first;
    const int64_t copy_at = std::max(launch + threshold, quantile_at);
    if (copy_at >= launch + w.duration_ms) continue;
    double scale = 1.0;
    if (median_records > 0 && w.records > 0) {
      scale = std::max(1.0, static_cast<double>(w.records) / static_cast<double>(median_records));
    }
    const int64_t copy_ms =
        std::min<int64_t>(std::llround(static_cast<double>(median) * scale), kMaxMs);
    const int64_t ends = std::min(launch + w.duration_ms, copy_at + copy_ms);
    Work copy{ends - copy_at};
    copy.hold_offset_ms = copy_at;
    copies.push_back(copy);
    w.duration_ms = ends - launch;
  }
  std::sort(copies.begin(), copies.end(),
            [](const Work& a, const Work& b) { return a.hold_offset_ms < b.hold_offset_ms; });
  unit.tasks.insert(unit.tasks.end(), copies.begin(), copies.end());
  return static_cast<int64_t>(copies.size());
}

// Dynamic allocation as Spark's ExecutorAllocationManager runs it, simplified: while tasks wait
// for a slot for a backlog timeout, executors are requested (1, 2, 4, ... per round, up to what
// the waiting and running tasks need and `max`); each arrives `startup_ms` after its request;
// an executor idle for `idle_timeout_ms` is released while more than max(min, needed) remain.
struct Allocation {
  bool enabled = false;
  int32_t initial = 0;
  int32_t min = 0;
  int32_t max = 0;
  int32_t slots = 1;  // per executor
  int64_t first_arrival_ms = 0;
  int64_t startup_ms = 1000;
  int64_t backlog_ms = 1000;
  int64_t idle_timeout_ms = 60'000;
};

struct RunResult {
  int64_t wall_ms = 0;
  int32_t peak_executors = 0;  // alive at once
  double core_hours = 0;
  std::vector<std::pair<int64_t, int64_t>> unit_spans;  // sim start, end per unit
  std::vector<int64_t> unit_tasks;
};

// A replay's scheduled happenings other than task ends: (time, kind, index), earliest first;
// at one instant lower kinds first, then lower indices (a unit released at an instant is ready
// before dynamic allocation looks at the backlog then). Compared field by field: the replay's
// heaps compare these millions of times.
struct Event {
  int64_t at;
  int32_t kind;
  size_t index;
  bool operator>(const Event& other) const {
    if (at != other.at) return at > other.at;
    if (kind != other.kind) return kind > other.kind;
    return index > other.index;
  }
};

// A running task's end: when, which unit's task, on which executor (units and executors fit
// in 32 bits).
struct TaskEnd {
  int64_t at;
  size_t unit;
  size_t executor;
};

// The running tasks' ends, earliest first, in a radix heap of 64-ary digits: the replay's clock
// never goes back and a task ends no earlier than the instant it was dispatched, so no end pushed
// is earlier than the last one popped. An end sits at the level of the highest 6-bit digit in
// which its time differs from that last time, in the bucket of its digit there; a level's
// non-empty buckets are the bits of one word. Level 0 holds ends whose time differs from the
// last only in the lowest digit: a bucket there holds one time. When level 0 is empty, the
// lowest bucket of the lowest level is spread over lower levels once its least time is the new
// last (an end moves down a few levels in its life, never up). No comparisons between ends
// decide the order (the binary heap's mispredicted branches were most of a replay). Ends at one
// instant leave in no particular order: the replay takes every end of an instant before it
// dispatches, and what an end changes (slots, counters, events in their own total order) adds
// up the same in any order.
class TaskEnds {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  void push(int64_t at, size_t unit, size_t executor) {
    const uint64_t key = Key(at);
    uint32_t node = free_;
    if (node != kEnd) {
      free_ = nodes_[node].next;
    } else {
      node = static_cast<uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[node].key = key;
    nodes_[node].unit = static_cast<uint32_t>(unit);
    nodes_[node].executor = static_cast<uint32_t>(executor);
    Link(node, LevelOf(key));
    if (least_known_) least_ = std::min(least_, key);
    ++size_;
  }
  // The earliest end's time (not empty).
  [[gnu::always_inline]] int64_t top_at() {
    if (!least_known_) {
      least_known_ = true;
      least_ = kNone;
      for (uint32_t n = LowestBucket(); n != kEnd; n = nodes_[n].next) {
        least_ = std::min(least_, nodes_[n].key);
      }
    }
    return static_cast<int64_t>(least_ ^ kSignBit);
  }
  // Takes the earliest end (not empty).
  [[gnu::always_inline]] TaskEnd pop() {
    if (occupied_[0] == 0) {
      const int level = __builtin_ctz(levels_);
      const int digit = __builtin_ctzll(occupied_[level]);
      uint32_t n = heads_[level][digit];
      if (!least_known_) {
        least_ = kNone;
        for (uint32_t m = n; m != kEnd; m = nodes_[m].next) {
          least_ = std::min(least_, nodes_[m].key);
        }
      }
      last_ = least_;
      heads_[level][digit] = kEnd;
      occupied_[level] &= occupied_[level] - 1;
      if (occupied_[level] == 0) levels_ &= ~(1u << level);
      while (n != kEnd) {
        const uint32_t next = nodes_[n].next;
        Link(n, LevelOf(nodes_[n].key));
        n = next;
      }
    }
    const int digit = __builtin_ctzll(occupied_[0]);
    const uint32_t n = heads_[0][digit];
    const Node node = nodes_[n];
    heads_[0][digit] = node.next;
    if (node.next == kEnd) {
      occupied_[0] &= occupied_[0] - 1;
      if (occupied_[0] == 0) levels_ &= ~1u;
    }
    nodes_[n].next = free_;
    free_ = n;
    last_ = node.key;
    --size_;
    least_known_ = occupied_[0] != 0 || size_ == 0;
    least_ = occupied_[0] != 0 ? (last_ & ~kDigitMask) | static_cast<uint64_t>(
                                     __builtin_ctzll(occupied_[0]))
                               : kNone;
    return {static_cast<int64_t>(node.key ^ kSignBit), node.unit, node.executor};
  }

 private:
  struct Node {
    uint64_t key;  // the time, sign bit flipped: orders as the time does
    uint32_t unit;
    uint32_t executor;
    uint32_t next;  // the next end in its bucket (or on the free list)
  };
  static constexpr int kDigitBits = 6;
  static constexpr uint64_t kDigitMask = 63;
  static constexpr int kLevels = 11;  // 66 bits
  static constexpr uint32_t kEnd = std::numeric_limits<uint32_t>::max();
  static constexpr uint64_t kSignBit = uint64_t{1} << 63;
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  static uint64_t Key(int64_t at) { return static_cast<uint64_t>(at) ^ kSignBit; }
  int LevelOf(uint64_t key) const {
    const uint64_t differ = key ^ last_;
    return differ == 0 ? 0 : (63 - __builtin_clzll(differ)) / kDigitBits;
  }
  void Link(uint32_t node, int level) {
    const int digit = static_cast<int>((nodes_[node].key >> (kDigitBits * level)) & kDigitMask);
    nodes_[node].next = heads_[level][digit];
    heads_[level][digit] = node;
    occupied_[level] |= uint64_t{1} << digit;
    levels_ |= 1u << level;
  }
  // The first end of the lowest non-empty bucket of the lowest non-empty level (not empty).
  uint32_t LowestBucket() const {
    const int level = __builtin_ctz(levels_);
    return heads_[level][__builtin_ctzll(occupied_[level])];
  }
  std::vector<Node> nodes_;
  uint32_t free_ = kEnd;  // the free list of nodes_
  std::array<std::array<uint32_t, 64>, kLevels> heads_ = MakeHeads();
  std::array<uint64_t, kLevels> occupied_{};  // per level, its non-empty buckets
  uint32_t levels_ = 0;                        // the levels with a non-empty bucket
  uint64_t last_ = 0;                          // the last end popped (no end is earlier)
  uint64_t least_ = kNone;                     // the earliest end, when least_known_
  bool least_known_ = true;
  size_t size_ = 0;
  static std::array<std::array<uint32_t, 64>, kLevels> MakeHeads() {
    std::array<std::array<uint32_t, 64>, kLevels> heads;
    for (auto& level : heads) level.fill(kEnd);
    return heads;
  }
};

// A min-heap with four children a node: half the levels of a binary heap (the replay's events
// other than task ends). Items that compare equal are equal, so the order they leave in is the
// one any heap gives.
template <typename T>
class QuaternaryHeap {
 public:
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const T& top() const { return items_.front(); }
  void push(const T& item) {
    size_t at = items_.size();
    items_.push_back(item);
    while (at > 0) {
      const size_t parent = (at - 1) / 4;
      if (!(items_[parent] > item)) break;
      items_[at] = items_[parent];
      at = parent;
    }
    items_[at] = item;
  }
  void pop() {
    const T last = items_.back();
    items_.pop_back();
    const size_t count = items_.size();
    if (count == 0) return;
    size_t at = 0;
    while (true) {
      const size_t first = 4 * at + 1;
      if (first >= count) break;
      size_t least = first;
      const size_t end = std::min(first + 4, count);
      for (size_t child = first + 1; child < end; ++child) {
        if (items_[least] > items_[child]) least = child;
      }
      if (!(last > items_[least])) break;
      items_[at] = items_[least];
      at = least;
    }
    items_[at] = last;
  }

 private:
  std::vector<T> items_;
};

// The executors that can take a task now (alive, with a free slot), as a bitset: the replay
// dispatches to the first one, found a word at a time instead of a scan over every executor.
class FreeExecutors {
 public:
  explicit FreeExecutors(size_t executors) : words_((executors + 63) / 64, 0) {}
  void Resize(size_t executors) { words_.resize((executors + 63) / 64, 0); }
  void Set(size_t executor, bool free) {
    const size_t word = executor / 64;
    const uint64_t bit = uint64_t{1} << (executor % 64);
    if (free) {
      words_[word] |= bit;
      first_word_ = std::min(first_word_, word);
    } else {
      words_[word] &= ~bit;
    }
  }
  // The lowest free executor, or `none`.
  size_t First(size_t none) {
    while (first_word_ < words_.size() && words_[first_word_] == 0) ++first_word_;
    if (first_word_ == words_.size()) return none;
    return first_word_ * 64 + static_cast<size_t>(__builtin_ctzll(words_[first_word_]));
  }

 private:
  std::vector<uint64_t> words_;
  size_t first_word_ = 0;  // no set bit below this word
};

// The discrete-event replay.
RunResult Replay(const std::vector<Unit>& units, const std::vector<JobInfo>& jobs,
                 std::vector<ExecutorSlots> executors, int64_t app_tail_ms,
                 int64_t real_wall_ms, int64_t launch_gap_ms,
                 const Allocation& allocation = Allocation{}) {
  RunResult result;
  std::unordered_map<int32_t, size_t> job_index;
  for (size_t j = 0; j < jobs.size(); ++j) job_index[jobs[j].job_id] = j;
  std::vector<UnitState> states(units.size());
  std::vector<std::vector<size_t>> dependents(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    states[u].deps_left = units[u].deps.size();
    for (size_t d : units[u].deps) dependents[d].push_back(u);
  }
  std::vector<std::vector<size_t>> anchored(jobs.size());  // jobs waiting for a job's end
  std::vector<size_t> from_start;
  std::vector<size_t> units_left(jobs.size());  // per job, its units not yet done
  for (size_t j = 0; j < jobs.size(); ++j) {
    units_left[j] = jobs[j].units.size();
    auto anchor = job_index.find(jobs[j].anchor_job);
    if (jobs[j].anchor_job >= 0 && anchor != job_index.end()) {
      anchored[anchor->second].push_back(j);
    } else {
      from_start.push_back(j);
    }
  }

  // Events. Kinds: 1 job submit, 2 unit release, 3 job end, 4 executor arrival/leaving, 5 a slot
  // free again after the dispatch gap, 6 a held task's wake-up, 7 dynamic allocation's backlog
  // check, 8 an idle executor's release check. Task ends are in `running`. Kind 5 is always
  // `launch_gap_ms` after a task end, so those come in time order: a queue of their own
  // (`slot_frees`), merged with the heap by the same order. Several at one instant only add up
  // slots, so their order among themselves does not matter.
  QuaternaryHeap<Event> events;
  std::deque<Event> slot_frees;
  for (size_t j : from_start) events.push({jobs[j].anchor_offset, 1, j});
  if (allocation.enabled) {
    executors.assign(static_cast<size_t>(std::max(allocation.initial, 0)),
                     ExecutorSlots{allocation.first_arrival_ms, kNever, allocation.slots});
  }
  for (size_t e = 0; e < executors.size(); ++e) {
    events.push({executors[e].added, 4, e});
    if (executors[e].removed < kNever) events.push({executors[e].removed, 4, e});
  }
  // Free slots per executor; ready units in FIFO order (job, stage, attempt).
  std::vector<int32_t> free_slots(executors.size(), 0);
  std::vector<uint8_t> alive(executors.size(), 0);  // bytes: read at every dispatch
  std::vector<int32_t> busy(executors.size(), 0);  // tasks running on each executor
  std::vector<int64_t> idle_since(executors.size(), 0);
  // Dynamic allocation state: executors requested and not yet arrived, the next round's size.
  int32_t requested = 0;
  int32_t to_add = 1;
  bool tick_pending = false;
  int32_t alive_count = 0;
  // At most 100k executors however many tasks wait (hostile input stays bounded).
  const int32_t executor_cap = allocation.enabled ? std::clamp(allocation.max, 1, 100'000) : 0;
  FreeExecutors free_executors(executors.size());
  auto refresh = [&](size_t e) { free_executors.Set(e, alive[e] && free_slots[e] > 0); };
  std::set<std::tuple<int32_t, int32_t, int32_t, size_t>> ready;
  // Per unit with a warm-up, the executors that ran one of its tasks (a bitset), kept while the
  // unit still has tasks to dispatch.
  std::vector<std::vector<uint64_t>> warmed(units.size());
  // Running tasks: when each ends and on which executor.
  TaskEnds running;
  int64_t last_job_end = 0;
  size_t jobs_done = 0;

  auto release_unit = [&](size_t u, int64_t at) { events.push({at, 2, u}); };
  auto job_done = [&](size_t j, int64_t at) {
    last_job_end = std::max(last_job_end, at);
    ++jobs_done;
    for (size_t next : anchored[j]) events.push({at + jobs[next].anchor_offset, 1, next});
  };
  auto unit_done = [&](size_t u, int64_t at) {
    states[u].sim_end = at;
    for (size_t d : dependents[u]) {
      if (--states[d].deps_left == 0) release_unit(d, at + units[d].delay_after_deps);
    }
    auto j = job_index.find(units[u].job);
    if (j != job_index.end() && --units_left[j->second] == 0) {
      events.push({at + jobs[j->second].tail_ms, 3, j->second});
    }
  };

  auto dispatch = [&](int64_t now) {
    while (!ready.empty()) {
      // The executor with a free slot that arrived first (Spark offers resources round-robin;
      // for wall time only the count of free slots matters). None free: nothing to do until a
      // slot frees, which is an event of its own that dispatches again (and sees the held tasks
      // then); a task end's slot is not free until the dispatch gap has passed.
      const size_t executor = free_executors.First(executors.size());
      if (executor == executors.size()) return;
      // The first ready unit (FIFO) whose next task is not held back by the run's locality wait.
      auto first = ready.begin();
      for (; first != ready.end(); ++first) {
        const size_t c = std::get<3>(*first);
        UnitState& candidate = states[c];
        const Work& next = units[c].tasks[candidate.next_task];
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
      const size_t u = std::get<3>(*first);
      const Unit& unit = units[u];
      UnitState& state = states[u];
      if (state.sim_start < 0) state.sim_start = now;
      int64_t duration = unit.tasks[state.next_task].duration_ms;
      if (unit.warmup_ms > 0) {
        std::vector<uint64_t>& ran = warmed[u];
        if (ran.size() <= executor / 64) ran.resize(executor / 64 + 1, 0);
        const uint64_t bit = uint64_t{1} << (executor % 64);
        if ((ran[executor / 64] & bit) == 0) {
          ran[executor / 64] |= bit;
          duration = std::min(duration + unit.warmup_ms, kMaxMs);
        }
      }
      ++state.next_task;
      ++state.running;
      // The unit's next task is read at the next dispatch: fetch it now (tasks are 96 bytes).
      if (state.next_task < unit.tasks.size()) __builtin_prefetch(&unit.tasks[state.next_task]);
      if (state.next_task == unit.tasks.size()) {
        ready.erase(first);
        std::vector<uint64_t>().swap(warmed[u]);
      }
      --free_slots[executor];
      refresh(executor);
      ++busy[executor];
      running.push(now + std::max<int64_t>(duration, 0), u, executor);
    }
  };

  int64_t now = 0;
  const size_t guard_limit = 50'000'000;
  size_t steps = 0;
  // The next event of the heap and of `slot_frees`; nullptr when both are empty.
  auto next_event = [&]() -> const Event* {
    if (slot_frees.empty()) return events.empty() ? nullptr : &events.top();
    if (events.empty() || events.top() > slot_frees.front()) return &slot_frees.front();
    return &events.top();
  };
  auto next_time = [&]() {
    const Event* event = next_event();
    const int64_t next_event_at = event == nullptr ? kNever : event->at;
    return std::min(next_event_at, running.empty() ? kNever : running.top_at());
  };
  while ((!events.empty() || !slot_frees.empty() || !running.empty()) && ++steps < guard_limit) {
    const Event* upcoming = next_event();
    const int64_t next_event_at = upcoming == nullptr ? kNever : upcoming->at;
    const int64_t next_end = running.empty() ? kNever : running.top_at();
    if (next_end <= next_event_at) {
      const TaskEnd ended = running.pop();
      const int64_t at = ended.at;
      const size_t u = ended.unit;
      const size_t executor = ended.executor;
      now = at;
      if (--busy[executor] == 0 && allocation.enabled) {
        idle_since[executor] = now;
        events.push({now + allocation.idle_timeout_ms, 8, executor});
      }
      // The slot takes the run's dispatch gap (status update, scheduling, launch) to be reused.
      if (launch_gap_ms > 0) {
        slot_frees.push_back({now + launch_gap_ms, 5, executor});
      } else {
        ++free_slots[executor];
        refresh(executor);
      }
      if (--states[u].running == 0 && states[u].next_task == units[u].tasks.size()) {
        unit_done(u, now);
      }
    } else {
      const auto [at, kind, index] = *upcoming;
      if (!events.empty() && upcoming == &events.top()) {
        events.pop();
      } else {
        slot_frees.pop_front();
      }
      now = at;
      if (kind == 1) {  // job submit
        const JobInfo& job = jobs[index];
        if (job.units.empty()) {
          events.push({now + Span(job.real_end, job.real_submit), 3, index});
        }
        for (size_t u : job.units) {
          if (units[u].deps.empty()) release_unit(u, now + units[u].delay_after_deps);
        }
      } else if (kind == 2) {  // unit release
        const Unit& unit = units[index];
        if (states[index].released) continue;
        states[index].released = true;
        if (unit.tasks.empty()) {
          unit_done(index, now);
        } else {
          ready.insert({unit.job, unit.stage_id, unit.attempt, index});
        }
      } else if (kind == 3) {
        job_done(index, now);
      } else if (kind == 5) {
        ++free_slots[index];
        refresh(index);
      } else if (kind == 6) {
        // a held task may launch now: dispatch below
      } else if (kind == 7) {
        tick_pending = false;
        // Tasks waiting for a slot and the executors they need (Spark's maxNeeded).
        int64_t waiting = 0;
        for (const auto& entry : ready) {
          const size_t u = std::get<3>(entry);
          waiting += static_cast<int64_t>(units[u].tasks.size() - states[u].next_task);
        }
        int64_t running_tasks = static_cast<int64_t>(running.size());
        const int32_t have = requested + alive_count;
        const int64_t needed = std::min<int64_t>(
            executor_cap, (waiting + running_tasks + allocation.slots - 1) / allocation.slots);
        if (waiting > 0 && have < needed) {
          const int32_t add = static_cast<int32_t>(std::min<int64_t>(to_add, needed - have));
          for (int32_t i = 0; i < add; ++i) {
            executors.push_back({now + allocation.startup_ms, kNever, allocation.slots});
            free_slots.push_back(0);
            alive.push_back(0);
            busy.push_back(0);
            idle_since.push_back(0);
            free_executors.Resize(executors.size());
            events.push({now + allocation.startup_ms, 4, executors.size() - 1});
          }
          requested += add;
          to_add = std::min(to_add * 2, 1 << 20);
          if (have + add < needed) {
            events.push({now + allocation.backlog_ms, 7, 0});
            tick_pending = true;
          }
        } else if (waiting == 0) {
          to_add = 1;
        }
      } else if (kind == 8) {
        // Released when idle for the timeout, while more than max(min, needed) executors remain.
        if (!alive[index] || busy[index] > 0 || executors[index].removed < kNever ||
            now - idle_since[index] < allocation.idle_timeout_ms) {
          continue;
        }
        const int32_t have = alive_count;
        const int64_t needed =
            (static_cast<int64_t>(running.size()) + allocation.slots - 1) / allocation.slots;
        if (have - 1 < std::max<int64_t>(allocation.min, needed)) continue;
        executors[index].removed = now;
        alive[index] = 0;
        --alive_count;
        free_slots[index] = 0;
        refresh(index);
      } else if (kind == 4) {
        if (!alive[index] && now < executors[index].removed) {
          if (executors[index].added == now && allocation.enabled && requested > 0 &&
              index >= static_cast<size_t>(std::max(allocation.initial, 0))) {
            --requested;
          }
          alive[index] = 1;
          free_slots[index] += executors[index].slots;
          refresh(index);
          idle_since[index] = now;
          result.peak_executors = std::max(result.peak_executors, ++alive_count);
          if (allocation.enabled) events.push({now + allocation.idle_timeout_ms, 8, index});
        } else if (alive[index] && now >= executors[index].removed) {
          alive[index] = 0;
          --alive_count;
          free_slots[index] -= executors[index].slots;  // running tasks finish, nothing new
          refresh(index);
        }
      }
    }
    // Process everything at this instant before dispatching.
    if (next_time() > now) {
      dispatch(now);
      // Tasks left waiting: dynamic allocation looks again after the backlog timeout.
      if (allocation.enabled && !tick_pending && !ready.empty()) {
        events.push({now + allocation.backlog_ms, 7, 0});
        tick_pending = true;
      }
    }
  }
  result.wall_ms = last_job_end + app_tail_ms;
  if (jobs.empty()) result.wall_ms = real_wall_ms;
  for (size_t u = 0; u < units.size(); ++u) {
    const UnitState& state = states[u];
    result.unit_spans.push_back(
        {units[u].tasks.empty() ? state.sim_end : state.sim_start, state.sim_end});
    result.unit_tasks.push_back(static_cast<int64_t>(units[u].tasks.size()));
  }
  for (const ExecutorSlots& e : executors) {
    const int64_t held = std::min(e.removed, result.wall_ms) - std::min(e.added, result.wall_ms);
    result.core_hours += static_cast<double>(std::max<int64_t>(held, 0)) * e.slots / 3'600'000.0;
  }
  return result;
}

}  // namespace

const char* const kSupportedSettings =
    "spark.executor.instances, spark.executor.cores, spark.executor.memory, "
    "spark.sql.shuffle.partitions, spark.sql.files.maxPartitionBytes, "
    "spark.dynamicAllocation.enabled, spark.dynamicAllocation.minExecutors, "
    "spark.dynamicAllocation.maxExecutors, spark.speculation";

bool ApplySetting(const std::string& assignment, Scenario& scenario, std::string& error) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) {
    error = "--set wants key=value, got \"" + assignment + "\"";
    return false;
  }
  const std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  auto count = [&](int32_t& field) {
    bool ok = false;
    const int64_t parsed = ParseCount(value, ok);
    if (!ok) error = key + ": \"" + value + "\" is not a whole number from 1 to 1000000";
    if (ok) field = static_cast<int32_t>(parsed);
    return ok;
  };
  auto flag = [&](int32_t& field) {
    if (value != "true" && value != "false") {
      error = key + ": \"" + value + "\" is not true or false";
      return false;
    }
    field = value == "true" ? 1 : 0;
    return true;
  };
  if (key == "spark.executor.instances") return count(scenario.executors);
  if (key == "spark.executor.cores") return count(scenario.cores_per_executor);
  if (key == "spark.sql.shuffle.partitions") return count(scenario.shuffle_partitions);
  if (key == "spark.dynamicAllocation.enabled") return flag(scenario.dynamic_allocation);
  if (key == "spark.speculation") return flag(scenario.speculation);
  if (key == "spark.dynamicAllocation.minExecutors") {
    // 0 is a valid minimum: parse it apart from the positive counts.
    if (value == "0") {
      scenario.min_executors = 0;
      return true;
    }
    return count(scenario.min_executors);
  }
  if (key == "spark.dynamicAllocation.maxExecutors") return count(scenario.max_executors);
  if (key == "spark.executor.memory" || key == "spark.sql.files.maxPartitionBytes") {
    // spark.executor.memory without a unit is MiB, maxPartitionBytes bytes (as Spark reads them).
    const bool memory = key == "spark.executor.memory";
    const int64_t bytes = ParseSizeBytes(value, memory ? kMiB : 1);
    const int64_t low = memory ? 32 * kMiB : 1024;
    if (bytes < low || bytes > (int64_t{1} << 50)) {
      error = key + ": \"" + value + "\" is not a size (e.g. " +
              (memory ? "8g, 4096m" : "128m, 268435456") + ")";
      return false;
    }
    if (memory) {
      scenario.executor_memory_mb = bytes / kMiB;
    } else {
      scenario.max_partition_bytes = bytes;
    }
    return true;
  }
  error = "cannot simulate " + key + " (supported: " + kSupportedSettings + ")";
  return false;
}

bool ApplyFix(const std::string& fix, Scenario& scenario, std::string& error) {
  if (fix == "skew") {
    scenario.fix_skew = true;
    return true;
  }
  if (fix == "broadcast") {
    scenario.fix_broadcast = true;
    return true;
  }
  error = "cannot simulate --fix " + fix + " (supported: skew, broadcast)";
  return false;
}

namespace {

// A Spark property of the run; `fallback` when it is not set or empty.
std::string PropertyOr(const model::ApplicationModel& m, const char* key,
                       const std::string& fallback) {
  const std::string* value = m.SparkProperty(key);
  return value != nullptr && !value->empty() ? *value : fallback;
}

// What the memory rescaling reads, from the run's settings and task metrics.
MemoryRelation MemoryOf(const model::ApplicationModel& m, bool local_mode) {
  MemoryRelation memory;
  const std::string heap_key = local_mode ? "spark.driver.memory" : "spark.executor.memory";
  int64_t heap_mb = -1;
  if (auto profile = m.resource_profiles.find(0);
      !local_mode && profile != m.resource_profiles.end() &&
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
  int64_t written_bytes = 0, written_ms = 0, memory_spilled = 0, disk_spilled = 0;
  for (const model::TaskAttempt& t : m.tasks) {
    if (!t.has_metrics) continue;
    written_bytes += std::max<int64_t>(t.metrics.shuffle_bytes_written, 0);
    written_ms += std::max<int64_t>(t.metrics.shuffle_write_time_ns, 0) / 1'000'000;
    memory_spilled += std::max<int64_t>(t.metrics.memory_bytes_spilled, 0);
    disk_spilled += std::max<int64_t>(t.metrics.disk_bytes_spilled, 0);
  }
  const double write_ms_per_byte = written_bytes >= (16 << 20) && written_ms > 0
                                       ? static_cast<double>(written_ms) / written_bytes
                                       : 1000.0 / (100.0 * kMiB);
  memory.spill_ms_per_byte = 2 * write_ms_per_byte;
  if (memory_spilled > 0) {
    memory.disk_per_memory = static_cast<double>(disk_spilled) / memory_spilled;
  }
  return memory;
}

}  // namespace

// Everything a scenario starts from, built once from the model.
struct Simulator::Prepared {
  const model::ApplicationModel* model = nullptr;
  Prediction base;  // the run's actual figures and its replay as run (baseline)
  double task_cpus = 1;
  int32_t real_cores = 0;
  std::vector<ExecutorSlots> executors;
  int64_t launch_gap_ms = 0;
  std::vector<Unit> units;
  std::unordered_map<int32_t, std::vector<size_t>> units_of_stage;
  std::vector<JobInfo> jobs;
  int64_t app_tail_ms = 0;
  RunResult baseline;
  bool local_mode = false;
  MemoryRelation memory;
  // The units with their tasks' memory rescaled, for the last (heap, slots, new slots) asked:
  // the cost frontier simulates several executor counts of one instance type in a row.
  struct Rescaled {
    int64_t heap_mb = -1;
    int32_t slots = 0;
    int32_t new_slots = 0;
    std::shared_ptr<const std::vector<Unit>> units;
  };
  mutable std::mutex rescaled_mutex;
  mutable Rescaled rescaled;
};

Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;
Simulator::~Simulator() = default;

Simulator::Simulator(const model::ApplicationModel& m) {
  auto prepared = std::make_unique<Prepared>();
  Prepared& r = *prepared;
  r.model = &m;
  Prediction& p = r.base;
  const int64_t start = m.start_time_ms;
  p.actual_wall_ms = m.duration_ms();

  // Executors with cores (the local-mode driver included); cores unknown -> observed concurrency.
  // The ended tasks with a launch on each executor (by string table index): (launch, task), in
  // launch order (task order among equal launches).
  std::vector<std::vector<std::pair<int64_t, uint32_t>>> launched_on(m.strings.size());
  for (uint32_t i = 0; i < m.tasks.size(); ++i) {
    const model::TaskAttempt& t = m.tasks[i];
    if (!t.ended() || t.executor == model::kNone || t.launch_time_ms < 0) continue;
    launched_on[t.executor].push_back({t.launch_time_ms, i});
  }
  for (auto& list : launched_on) {
    if (!std::is_sorted(list.begin(), list.end())) std::sort(list.begin(), list.end());
  }
  // The most tasks at once on `list`'s executor, whose tasks held their slots to `ends` (sorted):
  // launches against ends in time order, an end first at one instant; with `gaps`, also each
  // launch's wait since the earliest end not yet reused (when it reused one).
  std::vector<int64_t> ends;
  auto sweep = [&](const std::vector<std::pair<int64_t, uint32_t>>& list,
                   std::vector<int64_t>* gaps) {
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
  };
  std::map<std::string, int32_t> concurrency;
  for (uint32_t id = 0; id < launched_on.size(); ++id) {
    if (launched_on[id].empty()) continue;
    ends.clear();
    for (const auto& [launch, i] : launched_on[id]) {
      ends.push_back(std::max(m.tasks[i].finish_time_ms, launch));
    }
    std::sort(ends.begin(), ends.end());
    concurrency[m.strings.Get(id)] = sweep(launched_on[id], nullptr);
  }
  double& task_cpus = r.task_cpus;
  if (auto profile = m.resource_profiles.find(0);
      profile != m.resource_profiles.end() && profile->second.task_cpus >= 1) {
    task_cpus = profile->second.task_cpus;
  }
  std::vector<ExecutorSlots>& executors = r.executors;
  std::set<std::string> listed;
  std::map<std::string, int32_t> slots_of;
  int32_t& real_cores = r.real_cores;
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
                  1, static_cast<int32_t>(std::min<double>(e.total_cores / task_cpus, 100'000)))
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
  std::stable_sort(executors.begin(), executors.end(),
                   [](const ExecutorSlots& a, const ExecutorSlots& b) { return a.added < b.added; });
  p.actual_executors = static_cast<int32_t>(executors.size());
  p.actual_cores_per_executor = real_cores;
  // How long each task held its slot: to its finish, or to the launch that reused the slot if
  // that came first. The driver records a finish once it has the task's result, while the
  // executor already runs the next task in the freed slot; under load that lag reaches a second.
  std::vector<int64_t> slot_released(m.tasks.size(), -1);
  {
    for (uint32_t id = 0; id < launched_on.size(); ++id) {
      if (launched_on[id].empty()) continue;
      auto slots = slots_of.find(m.strings.Get(id));
      if (slots == slots_of.end()) continue;  // slots taken from the seen concurrency
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
  }
  for (const ExecutorSlots& e : executors) {
    const int64_t held = std::min(e.removed, p.actual_wall_ms) - std::min(e.added, p.actual_wall_ms);
    p.actual_core_hours += static_cast<double>(std::max<int64_t>(held, 0)) * e.slots / 3'600'000.0;
  }

  // The dispatch gap: on each executor, from a task's end (its slot's release) to the launch
  // that reuses its slot, when that launch came within a second (longer means no task was
  // waiting). Median.
  int64_t& launch_gap_ms = r.launch_gap_ms;
  {
    std::vector<int64_t> gaps;
    for (const auto& list : launched_on) {
      ends.clear();
      for (const auto& [launch, i] : list) {
        const model::TaskAttempt& t = m.tasks[i];
        const int64_t end = slot_released[i] >= launch
                                ? std::min(slot_released[i], t.finish_time_ms)
                                : t.finish_time_ms;
        ends.push_back(std::max(end, launch));
      }
      std::sort(ends.begin(), ends.end());
      sweep(list, &gaps);
    }
    if (gaps.size() >= 10) {
      std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
      launch_gap_ms = gaps[gaps.size() / 2];
    }
  }
  // Units: stage attempts with ended tasks.
  std::vector<Unit>& units = r.units;
  std::vector<uint32_t> warmup_seen(m.strings.size() + 1, 0);
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
      const int64_t released =
          slot_released[*it] >= t.launch_time_ms ? std::min(slot_released[*it], t.finish_time_ms)
                                                 : t.finish_time_ms;
      Work work{std::min(released - t.launch_time_ms, kMaxMs), -1,
                Span(t.launch_time_ms, start)};
      if (t.has_metrics) {
        const model::TaskAttemptMetrics& x = t.metrics;
        work.input_bytes = std::max<int64_t>(x.input_bytes_read, 0);
        work.records = std::max<int64_t>(x.input_records_read, 0) +
                       std::max<int64_t>(x.shuffle_records_read, 0);
        work.shuffle_write_ms = std::clamp<int64_t>(x.shuffle_write_time_ns / 1'000'000, 0,
                                                    work.duration_ms);
        work.fetch_wait_ms = std::min<int64_t>(x.shuffle_fetch_wait_time_ms, work.duration_ms);
        work.gc_ms = std::min<int64_t>(x.jvm_gc_time_ms, work.duration_ms);
        work.peak_memory_bytes = std::max<int64_t>(x.peak_execution_memory_bytes, 0);
        work.memory_spilled_bytes = std::max<int64_t>(x.memory_bytes_spilled, 0);
        work.disk_spilled_bytes = std::max<int64_t>(x.disk_bytes_spilled, 0);
      }
      unit.tasks.push_back(work);
      task_executors.push_back(t.executor);
      first = first < 0 ? t.launch_time_ms : std::min(first, t.launch_time_ms);
      last = std::max(last, t.finish_time_ms);
      if (t.has_metrics && t.metrics.shuffle_bytes_read() > 0) unit.shuffle_read = true;
    }
    if (unit.tasks.empty()) continue;
    const auto stamp = static_cast<uint32_t>(units.size() + 1);  // a new one per unit
    unit.warmup_ms = TakeWarmup(unit.tasks, task_executors, warmup_seen, stamp);
    unit.real_submit = first;
    unit.real_end = last;
    units.push_back(std::move(unit));
  }
  // Delay scheduling as the run shows it: a task launched after >= 1 s during which a slot was
  // free (app-wide) since its stage had started is held to its real offset in the replay.
  {
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
  std::unordered_map<int32_t, std::vector<size_t>>& units_of_stage = r.units_of_stage;
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
  std::vector<JobInfo>& jobs = r.jobs;
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
  r.app_tail_ms = Span(m.end_time_ms, last_job_end);

  r.baseline = Replay(units, jobs, executors, r.app_tail_ms, p.actual_wall_ms, launch_gap_ms);
  p.baseline_wall_ms = r.baseline.wall_ms;
  p.baseline_core_hours = r.baseline.core_hours;
  p.self_prediction_error =
      p.actual_wall_ms > 0
          ? std::fabs(static_cast<double>(p.baseline_wall_ms - p.actual_wall_ms)) / p.actual_wall_ms
          : 0;

  r.local_mode = std::all_of(m.executors.begin(), m.executors.end(),
                             [](const model::Executor& e) { return e.is_driver(); });
  r.memory = MemoryOf(m, r.local_mode);
  prepared_ = std::move(prepared);
}

Prediction Simulate(const model::ApplicationModel& model, const Scenario& scenario) {
  return Simulator(model).Simulate(scenario);
}

const Simulator& LazySimulator::Get() const {
  std::call_once(once_, [this] { simulator_ = std::make_unique<Simulator>(model_); });
  return *simulator_;
}

Prediction Simulator::Simulate(const Scenario& scenario) const {
  const Prepared& r = *prepared_;
  const model::ApplicationModel& m = *r.model;
  Prediction p = r.base;
  const double task_cpus = r.task_cpus;
  const int32_t real_cores = r.real_cores;
  const std::vector<ExecutorSlots>& executors = r.executors;
  const int64_t launch_gap_ms = r.launch_gap_ms;
  const std::vector<Unit>& units = r.units;
  const std::vector<JobInfo>& jobs = r.jobs;
  const int64_t app_tail = r.app_tail_ms;
  const RunResult& baseline = r.baseline;
  const bool local_mode = r.local_mode;
  const MemoryRelation& memory = r.memory;

  // The scenario. Executors first: the scan re-split reads the new slot count.
  const int32_t slots_per_executor =
      executors.empty() ? 1
                        : std::max_element(executors.begin(), executors.end(),
                                           [](const ExecutorSlots& a, const ExecutorSlots& b) {
                                             return a.slots < b.slots;
                                           })->slots;
  std::vector<ExecutorSlots> changed = executors;
  int32_t new_slots_per_executor = slots_per_executor;
  if (scenario.cores_per_executor > 0) {
    new_slots_per_executor =
        std::max<int32_t>(1, static_cast<int32_t>(scenario.cores_per_executor / task_cpus));
    for (ExecutorSlots& e : changed) e.slots = new_slots_per_executor;
    p.changes.push_back("spark.executor.cores=" + std::to_string(scenario.cores_per_executor) +
                        " (was " + std::to_string(real_cores) + ")");
  }
  auto property = [&](const char* key, const std::string& fallback) {
    return PropertyOr(m, key, fallback);
  };
  const bool run_dynamic = property("spark.dynamicAllocation.enabled", "false") == "true";
  const bool dynamic =
      !local_mode && !changed.empty() &&
      (scenario.dynamic_allocation == 1 ||
       (scenario.dynamic_allocation < 0 &&
        (scenario.min_executors >= 0 || scenario.max_executors > 0)));
  Allocation allocation;
  if (dynamic) {
    auto count_property = [&](const char* key, int32_t fallback) {
      bool ok = false;
      const int64_t value = ParseCount(property(key, ""), ok);
      return ok ? static_cast<int32_t>(value) : property(key, "") == "0" ? 0 : fallback;
    };
    allocation.enabled = true;
    allocation.min = scenario.min_executors >= 0
                         ? scenario.min_executors
                         : count_property("spark.dynamicAllocation.minExecutors", 0);
    allocation.max = scenario.max_executors > 0
                         ? scenario.max_executors
                         : count_property("spark.dynamicAllocation.maxExecutors", 100'000);
    allocation.max = std::max(allocation.max, std::max(allocation.min, 1));
    allocation.initial =
        scenario.executors > 0
            ? scenario.executors
            : std::max({allocation.min,
                        count_property("spark.dynamicAllocation.initialExecutors", 0),
                        run_dynamic ? 0 : count_property("spark.executor.instances", 0)});
    allocation.initial = std::min(allocation.initial, allocation.max);
    allocation.slots = new_slots_per_executor;
    allocation.first_arrival_ms = kNever;
    for (const ExecutorSlots& e : executors) {
      allocation.first_arrival_ms = std::min(allocation.first_arrival_ms, e.added);
    }
    // An executor arrives as long after its request as the run's first one after the start.
    allocation.startup_ms = std::clamp<int64_t>(allocation.first_arrival_ms, 500, 60'000);
    allocation.backlog_ms = std::max<int64_t>(
        ParseDurationMs(property("spark.dynamicAllocation.schedulerBacklogTimeout", "1s"), 1000),
        1);
    allocation.idle_timeout_ms = std::max<int64_t>(
        ParseDurationMs(property("spark.dynamicAllocation.executorIdleTimeout", "60s"), 1000), 1);
    p.changes.push_back("dynamic allocation " + std::string(run_dynamic ? "kept on" : "on") +
                        ": " + std::to_string(allocation.initial) + " initial, min " +
                        std::to_string(allocation.min) + ", max " +
                        (allocation.max >= 100'000 ? std::string("unbounded")
                                                   : std::to_string(allocation.max)) +
                        " executors");
  } else if (scenario.dynamic_allocation == 0 && run_dynamic && !changed.empty()) {
    // Off: a fixed set, from the run's first executor arrival to the end.
    int32_t peak = 0;
    std::vector<std::pair<int64_t, int>> changes;
    for (const ExecutorSlots& e : executors) {
      changes.push_back({e.added, 1});
      if (e.removed < kNever) changes.push_back({e.removed, -1});
    }
    std::sort(changes.begin(), changes.end());
    int32_t current = 0;
    for (const auto& [t, d] : changes) peak = std::max(peak, current += d);
    const int32_t count = scenario.executors > 0 ? scenario.executors : std::max(peak, 1);
    ExecutorSlots fixed = changed.front();
    fixed.removed = kNever;
    changed.assign(static_cast<size_t>(count), fixed);
    p.changes.push_back("dynamic allocation off: " + std::to_string(count) +
                        " executors held from the first one's arrival to the end");
  } else if (scenario.executors > 0 && !changed.empty()) {
    const size_t wanted = static_cast<size_t>(scenario.executors);
    const size_t had = changed.size();
    if (wanted < had) {
      // The first to arrive stay; one that the run lost mid-way is replaced (Spark asks for
      // another), so the kept ones live until the last executor of the run left.
      int64_t last_removed = 0;
      for (const ExecutorSlots& e : changed) last_removed = std::max(last_removed, e.removed);
      changed.resize(wanted);
      for (ExecutorSlots& e : changed) e.removed = std::max(e.removed, last_removed);
    } else {
      // New executors arrive when the last one of the run did and stay as long as the longest.
      const ExecutorSlots last = changed.back();
      while (changed.size() < wanted) changed.push_back(last);
    }
    p.changes.push_back("spark.executor.instances=" + std::to_string(wanted) + " (was " +
                        std::to_string(had) + ")");
  }

  // The units as the scenario changes them: the prepared ones (or shared rescaled ones) until a
  // change needs its own.
  const std::vector<Unit>* shaped = &units;
  std::shared_ptr<const std::vector<Unit>> shared_units;
  std::vector<Unit> own_units;
  auto writable = [&]() -> std::vector<Unit>& {
    if (shaped != &own_units) {
      own_units = *shaped;
      shaped = &own_units;
    }
    return own_units;
  };
  std::vector<bool> removed(units.size(), false);
  // A sort-merge join turned into a broadcast hash join.
  if (scenario.fix_broadcast) {
    const std::vector<BroadcastCandidate> joins = FindBroadcastCandidates(m, kMaxBroadcastBytes);
    int64_t written_bytes = 0, written_ms = 0;
    for (const model::TaskAttempt& t : m.tasks) {
      if (!t.has_metrics) continue;
      written_bytes += std::max<int64_t>(t.metrics.shuffle_bytes_written, 0);
      written_ms += std::max<int64_t>(t.metrics.shuffle_write_time_ns, 0) / 1'000'000;
    }
    auto units_of = [&](const std::vector<int32_t>& stage_ids) {
      std::vector<size_t> out;
      for (int32_t id : stage_ids) {
        auto of_stage = r.units_of_stage.find(id);
        if (of_stage == r.units_of_stage.end()) continue;
        for (size_t u : of_stage->second) out.push_back(u);
      }
      return out;
    };
    int converted = 0;
    for (const BroadcastCandidate& join : joins) {
      if (!scenario.broadcast_joins.empty() &&
          std::find(scenario.broadcast_joins.begin(), scenario.broadcast_joins.end(),
                    std::pair<int64_t, int32_t>{join.execution_id, join.join_node}) ==
              scenario.broadcast_joins.end()) {
        continue;
      }
      const std::vector<size_t> large = units_of(join.large_map_stages);
      const std::vector<size_t> small = units_of(join.small_map_stages);
      const std::vector<size_t> joined = units_of(join.join_stages);
      bool done_already = false;
      for (size_t u : joined) done_already = done_already || removed[u];
      if (large.empty() || joined.empty() || done_already) continue;
      std::vector<Unit>& reshaped = writable();
      // The join stage goes: its shuffle read, sort and merge, and the operators after the join
      // in it, which now run in the large side's map tasks. Those keep their time: the probe
      // and the operators moved there are taken to cost what the shuffle write they no longer
      // do cost (on the suite's runs the broadcast stage was faster than that map stage).
      // The broadcast: the small side collected to the driver and sent to every executor, at
      // the run's own shuffle write rate (100 MiB/s without one).
      const double ms_per_byte = written_bytes >= (1 << 20)
                                     ? static_cast<double>(written_ms) / written_bytes
                                     : 1000.0 / (100.0 * kMiB);
      const int64_t broadcast_ms = std::min<int64_t>(
          std::llround(static_cast<double>(join.small_bytes) * ms_per_byte *
                       static_cast<double>(1 + changed.size())),
          kMaxMs);
      for (size_t u : small) {
        for (Work& w : reshaped[u].tasks) {
          w.duration_ms = std::max<int64_t>(w.duration_ms - w.shuffle_write_ms, 1);
        }
      }
      for (size_t u : large) {
        // The large side's tasks probe the broadcast: they start once it is built.
        for (size_t s : small) {
          if (s != u && std::find(reshaped[u].deps.begin(), reshaped[u].deps.end(), s) ==
                            reshaped[u].deps.end()) {
            reshaped[u].deps.push_back(s);
          }
        }
        if (!small.empty()) reshaped[u].delay_after_deps = broadcast_ms;
      }
      for (size_t u : joined) {
        reshaped[u].tasks.clear();
        reshaped[u].delay_after_deps = 0;
        removed[u] = true;
      }
      ++converted;
      std::string stage_ids;
      for (int32_t id : join.join_stages) {
        stage_ids += (stage_ids.empty() ? "" : ", ") + std::to_string(id);
      }
      p.changes.push_back("SQL execution " + std::to_string(join.execution_id) +
                          ": the sort-merge join (plan node " + std::to_string(join.join_node) +
                          ") of a " + std::to_string(join.small_bytes >> 10) +
                          " KiB side broadcast; stage(s) " + stage_ids + " removed");
    }
    if (converted == 0) {
      p.changes.push_back("--fix broadcast: no sort-merge join whose small side (<= 256 MiB, "
                          "<= 1/8 of the other) a broadcast could replace; nothing changed");
    }
  }

  // Executor memory (and the pool per task when the cores change): spill and GC rescaled.
  const int64_t new_heap_mb =
      scenario.executor_memory_mb > 0 ? scenario.executor_memory_mb : memory.heap_mb;
  p.actual_executor_memory_mb = memory.heap_mb;
  p.predicted_executor_memory_mb = new_heap_mb;
  const bool rescale_memory =
      scenario.executor_memory_mb > 0 ||
      (scenario.cores_per_executor > 0 && new_slots_per_executor != slots_per_executor);
  if (rescale_memory) {
    const MemoryChange change(memory, new_heap_mb, slots_per_executor, new_slots_per_executor);
    auto rescale = [&](std::vector<Unit>& rescaled) {
      for (Unit& unit : rescaled) {
        for (Work& w : unit.tasks) RescaleMemory(w, memory, change);
      }
    };
    if (shaped == &units) {
      // Rescaled alike for every scenario with this heap and these slots: shared.
      std::lock_guard<std::mutex> lock(r.rescaled_mutex);
      Prepared::Rescaled& last = r.rescaled;
      if (last.units == nullptr || last.heap_mb != new_heap_mb ||
          last.slots != slots_per_executor || last.new_slots != new_slots_per_executor) {
        auto rescaled = std::make_shared<std::vector<Unit>>(units);
        rescale(*rescaled);
        last = {new_heap_mb, slots_per_executor, new_slots_per_executor, std::move(rescaled)};
      }
      shared_units = last.units;
      shaped = shared_units.get();
    } else {
      rescale(writable());
    }
    if (scenario.executor_memory_mb > 0) {
      p.changes.push_back("spark.executor.memory=" + std::to_string(new_heap_mb) + "m (was " +
                          std::to_string(memory.heap_mb) + "m)");
    }
  }

  // Speculation.
  if (scenario.speculation == 1) {
    const bool spark4 = m.spark_version.rfind("4", 0) == 0;
    double multiplier = std::strtod(
        property("spark.speculation.multiplier", spark4 ? "3" : "1.5").c_str(), nullptr);
    double quantile = std::strtod(
        property("spark.speculation.quantile", spark4 ? "0.9" : "0.75").c_str(), nullptr);
    if (!(multiplier >= 1 && multiplier <= 100)) multiplier = 1.5;
    if (!(quantile > 0 && quantile <= 1)) quantile = 0.75;
    int64_t copies = 0;
    for (Unit& unit : writable()) copies += Speculate(unit, multiplier, quantile);
    char text[200];
    std::snprintf(text, sizeof(text),
                  "spark.speculation=true: %lld speculative copies of tasks past %.1fx their "
                  "stage's median once %.0f%% of it had finished",
                  static_cast<long long>(copies), multiplier, 100 * quantile);
    p.changes.push_back(text);
  } else if (scenario.speculation == 0) {
    p.changes.push_back("spark.speculation=false: the run's own attempts are replayed as they "
                        "ran (speculative copies it launched included)");
  }

  // Re-splits: file scans by the new split size, shuffle reads, skew.
  std::vector<int64_t> scan_counts(units.size(), -1);  // new task counts, -1: unchanged
  if (scenario.max_partition_bytes > 0) {
    const int64_t old_max = ParseSizeBytes(property("spark.sql.files.maxPartitionBytes", ""), 1);
    const int64_t open_cost =
        std::max<int64_t>(ParseSizeBytes(property("spark.sql.files.openCostInBytes", ""), 1), 0);
    auto parallelism = [&](const std::vector<ExecutorSlots>& list) {
      bool ok = false;
      const int64_t set = ParseCount(property("spark.default.parallelism", ""), ok);
      if (ok) return set;
      int64_t slots = 0;
      for (const ExecutorSlots& e : list) slots += e.slots;
      return std::max<int64_t>(slots, 1);
    };
    const double old_split_max = old_max > 0 ? static_cast<double>(old_max) : 128.0 * kMiB;
    const double open = open_cost > 0 ? static_cast<double>(open_cost) : 4.0 * kMiB;
    const double old_parallelism = static_cast<double>(parallelism(executors));
    const double new_parallelism = static_cast<double>(
        parallelism(allocation.enabled ? std::vector<ExecutorSlots>(
                                             std::max(allocation.initial, 1),
                                             ExecutorSlots{0, kNever, allocation.slots})
                                       : changed));
    int resplit = 0;
    const std::vector<Unit>& reshaped = *shaped;
    for (size_t u = 0; u < reshaped.size(); ++u) {
      if (reshaped[u].shuffle_read || removed[u] || reshaped[u].tasks.empty()) continue;
      double total = 0;
      for (const Work& w : reshaped[u].tasks) total += static_cast<double>(w.input_bytes);
      if (total < 1) continue;
      // Spark's FilePartition.maxSplitBytes: min(maxPartitionBytes, max(openCost, bytes/cores)).
      const double old_split = std::min(old_split_max, std::max(open, total / old_parallelism));
      const double new_split = std::min(static_cast<double>(scenario.max_partition_bytes),
                                        std::max(open, total / new_parallelism));
      const double count = std::round(static_cast<double>(reshaped[u].tasks.size()) *
                                      old_split / new_split);
      scan_counts[u] = static_cast<int64_t>(std::clamp(count, 1.0, double(kMaxStageTasks)));
      if (scan_counts[u] != static_cast<int64_t>(reshaped[u].tasks.size())) ++resplit;
    }
    p.changes.push_back("spark.sql.files.maxPartitionBytes=" +
                        std::to_string(scenario.max_partition_bytes) + " (" +
                        std::to_string(resplit) +
                        " file-scan stages re-split by their input bytes)");
  }
  // spark.sql.shuffle.partitions: it sets the count of SQL stages that read a hash or range
  // shuffle, which ran that many tasks; one that ran fewer was coalesced by adaptive execution
  // (its count follows the data, at most the setting); others (a single partition, an explicit
  // repartition(n), RDD shuffles) keep theirs.
  int resplit_shuffles = 0;
  if (scenario.shuffle_partitions > 0) {
    bool ok = false;
    int64_t run_partitions = ParseCount(property("spark.sql.shuffle.partitions", ""), ok);
    if (!ok) run_partitions = 200;
    const bool adaptive_default =
        m.spark_version.empty() || m.spark_version >= "3.2" || m.spark_version[0] >= '4';
    const bool coalescing =
        property("spark.sql.adaptive.enabled", adaptive_default ? "true" : "false") == "true" &&
        property("spark.sql.adaptive.coalescePartitions.enabled", "true") == "true";
    const std::vector<Unit>& reshaped = *shaped;
    for (size_t u = 0; u < reshaped.size(); ++u) {
      const Unit& unit = reshaped[u];
      if (!unit.shuffle_read || removed[u] || scan_counts[u] > 0) continue;
      auto job = m.jobs.find(unit.job);
      if (job == m.jobs.end() || job->second.sql_execution_id < 0) continue;
      const int64_t ran = static_cast<int64_t>(unit.tasks.size());
      int64_t count = -1;
      if (ran == run_partitions) {
        count = scenario.shuffle_partitions;
      } else if (ran < run_partitions && coalescing && ran > 1) {
        count = std::min<int64_t>(scenario.shuffle_partitions, ran);
      }
      if (count > 0 && count != ran) {
        scan_counts[u] = count;
        ++resplit_shuffles;
      }
    }
  }
  if (scenario.fix_skew || scenario.shuffle_partitions > 0 || !scenario.stage_partitions.empty() ||
      scenario.max_partition_bytes > 0) {
    const int64_t peak_slots =
        allocation.enabled
            ? std::min<int64_t>(int64_t{std::max(allocation.max, 1)} * allocation.slots,
                                kMaxStageTasks)
            : PeakSlots(changed);
    std::vector<Unit>& reshaped = writable();
    for (size_t u = 0; u < reshaped.size(); ++u) {
      Unit& unit = reshaped[u];
      // Fixed cost per task: the shortest task of the stage (launch, deserialisation, result).
      int64_t fixed = kNever;
      for (const Work& w : unit.tasks) fixed = std::min(fixed, w.duration_ms);
      if (fixed == kNever) fixed = 0;
      unit.tasks = Reshape(unit.tasks, unit, scenario, std::min<int64_t>(fixed, 200),
                           scan_counts[u], peak_slots);
    }
    if (scenario.fix_skew) {
      p.changes.push_back(
          "skew fixed: tasks above 2x their stage's median split into median-sized pieces, at "
          "most sqrt(work x (slots - 1) / per-task cost) of them (more cost more than they save)");
    }
    for (const auto& [stage, count] : scenario.stage_partitions) {
      p.changes.push_back("stage " + std::to_string(stage) + " re-split to " +
                          std::to_string(count) + " tasks");
    }
    if (scenario.shuffle_partitions > 0) {
      p.changes.push_back("spark.sql.shuffle.partitions=" +
                          std::to_string(scenario.shuffle_partitions) + " (" +
                          std::to_string(resplit_shuffles) +
                          " SQL stages that read a shuffle re-split)");
    }
  }
  // Code changes the profile measured: the stages' tasks shortened (after any re-split, which
  // keeps the time per task the change then scales).
  if (!scenario.stage_task_time_factor.empty()) {
    std::vector<Unit>& reshaped = writable();
    for (Unit& unit : reshaped) {
      auto factor = scenario.stage_task_time_factor.find(unit.stage_id);
      if (factor == scenario.stage_task_time_factor.end()) continue;
      const double scale = std::clamp(factor->second, 0.0, 1.0);
      for (Work& w : unit.tasks) {
        w.duration_ms = std::max<int64_t>(
            std::llround(static_cast<double>(w.duration_ms) * scale), 1);
      }
      unit.warmup_ms = std::llround(static_cast<double>(unit.warmup_ms) * scale);
    }
    for (const auto& [stage, factor] : scenario.stage_task_time_factor) {
      char text[120];
      std::snprintf(text, sizeof(text), "stage %d's tasks take %.0f%% of their time",
                    static_cast<int>(stage), 100 * std::clamp(factor, 0.0, 1.0));
      p.changes.push_back(text);
    }
  }
  // Nothing the replay reads changed: it would replay the baseline again.
  const bool as_run =
      shaped == &units && !allocation.enabled &&
      std::equal(changed.begin(), changed.end(), executors.begin(), executors.end(),
                 [](const ExecutorSlots& a, const ExecutorSlots& b) {
                   return a.added == b.added && a.removed == b.removed && a.slots == b.slots;
                 });
  RunResult predicted = as_run ? baseline
                               : Replay(*shaped, jobs, changed, app_tail, p.actual_wall_ms,
                                        launch_gap_ms, allocation);
  p.predicted_wall_ms = predicted.wall_ms;
  p.predicted_core_hours = predicted.core_hours;
  p.predicted_executors =
      allocation.enabled ? predicted.peak_executors : static_cast<int32_t>(changed.size());
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
    s.removed = removed[u];
    p.stages.push_back(s);
  }
  p.assumptions = {
      "task durations are replayed as the run measured them (launch to finish), so executor "
      "speed, GC and I/O per task stay as they were unless a change below rescales them",
      "driver-only gaps between jobs, the delay between a stage's parents and its first task, "
      "and each job's time after its last task (result fetch, commit) are kept",
      "tasks go FIFO to the first free slot, which is reused after the run's median dispatch gap "
      "(" + std::to_string(launch_gap_ms) + " ms); locality waits are kept where the run shows "
      "them; slots are not CPUs: more slots than the hosts' cores are assumed to scale"};
  if (scenario.shuffle_partitions > 0) {
    p.assumptions.push_back(
        "the setting re-splits the SQL stages that ran that many tasks (or fewer, coalesced by "
        "adaptive execution: at most the new count); a re-split stage's work (task time less "
        "its shortest task) is spread evenly over the new partitions in key order, so a hot "
        "partition stays hot; spill and GC per task are not rescaled");
  }
  if (scenario.executors > 0 && !allocation.enabled) {
    p.assumptions.push_back(
        "added executors arrive when the run's last executor arrived; removed ones are the "
        "latest to arrive");
  }
  if (rescale_memory) {
    char text[600];
    std::snprintf(
        text, sizeof(text),
        "executor memory %lld MiB -> %lld MiB, %d -> %d task slots each: a task's execution "
        "pool is (heap - 300 MiB) x %.2f / slots; a task that spilled spills what it needed "
        "(peak + memory spilled) beyond its pool scaled by the new/old pool, one that did not "
        "spills beyond the new pool; spill costs %.3f ms per MiB on disk (the run's shuffle write "
        "rate, written and read back); GC time scales with 1 / (heap - live data), live data = "
        "the executors' peak storage + execution memory (%lld MiB), at most 10x",
        static_cast<long long>(memory.heap_mb), static_cast<long long>(new_heap_mb),
        slots_per_executor, new_slots_per_executor, memory.fraction,
        memory.spill_ms_per_byte * kMiB, static_cast<long long>(memory.live_bytes / kMiB));
    p.assumptions.push_back(text);
  }
  if (scenario.fix_broadcast) {
    p.assumptions.push_back(
        "a broadcast join: the join stage (shuffle read, sort, merge and the operators after "
        "the join in it) is removed; the large side's map tasks keep their time, the probe and "
        "the operators moved into them taken to cost what their shuffle write cost; they start "
        "after the small side's stage plus the broadcast (the small side's in-memory size sent "
        "to the driver and every executor at the run's shuffle write rate); heavy per-row work "
        "after the join is underestimated");
  }
  if (allocation.enabled) {
    p.assumptions.push_back(
        "dynamic allocation: executors requested after " +
        std::to_string(allocation.backlog_ms) + " ms of waiting tasks, doubling per round up to "
        "what the tasks need; each arrives " + std::to_string(allocation.startup_ms) +
        " ms after its request (the run's first executor's start-up); released after " +
        std::to_string(allocation.idle_timeout_ms) + " ms idle (an external shuffle service is "
        "assumed: shuffle files and cached blocks do not keep an executor)");
  }
  if (scenario.speculation == 1) {
    p.assumptions.push_back(
        "speculation: a slow task's copy runs as long as the stage's median task scaled by its "
        "records (a skewed task is not helped) and is assumed to find a free slot on another "
        "executor when it is due (Spark never speculates on the host of the original: on a "
        "single host, no copy runs)");
  }
  if (scenario.max_partition_bytes > 0) {
    p.assumptions.push_back(
        "file scans: the stage's task count scales with Spark's split size, min(maxPartitionBytes, "
        "max(openCostInBytes, input bytes / slots)), old over new; its work is spread over the new "
        "tasks by position; files are assumed splittable (not gzip)");
  }
  return p;
}

}  // namespace sparkprof::whatif
