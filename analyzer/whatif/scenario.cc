// What a scenario changes: the settings and fixes parsed from the command line, and applied to
// the prepared run -- executors, broadcast joins, memory, speculation, re-splits, code changes
// the profile measured -- before the replay.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/whatif/broadcast_joins.h"
#include "analyzer/whatif/simulator_internal.h"

namespace sparkprof::whatif {

int64_t ParseCount(const std::string& text, bool& ok) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  ok = end != text.c_str() && *end == '\0' && value > 0 && value <= 1'000'000;
  return ok ? value : -1;
}

std::string PropertyOr(const model::ApplicationModel& m, const char* key,
                       const std::string& fallback) {
  const std::string* value = m.SparkProperty(key);
  return value != nullptr && !value->empty() ? *value : fallback;
}

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

constexpr int64_t kMaxPieces = 1'000;  // pieces per task the skew fix splits

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

// What every task of a stage costs whatever its data (launch, deserialisation, fetching its
// blocks' metadata, the result): a task given no data (no input bytes, no records read) does only
// that, so when the stage has such tasks beside tasks with data, their mean duration is the cost
// -- used when the mean is known to a tenth (its standard error at most 10% of it: a handful of
// empty tasks in a noisy stage say little). Otherwise the stage's shortest task, a lower bound
// (every task pays at least what the quickest did). Measured (docs/whatif.md): 2,000 tiny reduce
// tasks, 1,194 of them empty, cost 24.6 ms each empty and 25.7 ms with data, while the shortest
// took 5 ms -- the shortest called the other 20 ms "work" that fewer tasks would still do.
int64_t FixedTaskCostMs(const std::vector<Work>& tasks) {
  int64_t shortest = kNever;
  double sum = 0, squares = 0;
  int64_t empty = 0;
  bool some_data = false;
  for (const Work& w : tasks) {
    shortest = std::min(shortest, w.duration_ms);
    if (w.input_bytes > 0 || w.records > 0) {
      some_data = true;
      continue;
    }
    const auto d = static_cast<double>(w.duration_ms);
    sum += d;
    squares += d * d;
    ++empty;
  }
  if (shortest == kNever) return 0;
  if (!some_data || empty < 2) return shortest;
  const double n = static_cast<double>(empty);
  const double mean = sum / n;
  const double variance = std::max(0.0, (squares - n * mean * mean) / (n - 1));
  if (mean <= 0 || std::sqrt(variance / n) > 0.1 * mean) return shortest;
  return std::max<int64_t>(shortest, std::llround(mean));
}

// The work of a stage after the scenario's re-split: the skew fix, then `count` tasks (the
// new shuffle partitions or a file scan's new split; -1 to keep the count). `slots`: the most
// task slots the scenario's executors offer at once.
std::vector<Work> Reshape(std::vector<Work> tasks, const Unit& unit, const Scenario& scenario,
                          int64_t fixed_ms, int64_t count, int64_t slots) {
  if (tasks.empty()) return tasks;
  const bool fix_here =
      scenario.fix_skew && (scenario.skew_stages.empty() ||
                            std::find(scenario.skew_stages.begin(), scenario.skew_stages.end(),
                                      unit.stage_id) != scenario.skew_stages.end());
  int64_t new_count = -1;
  if (auto stage = scenario.stage_partitions.find(unit.stage_id);
      stage != scenario.stage_partitions.end()) {
    new_count = stage->second;
  } else if (count > 0) {
    new_count = count;
  }
  if (fix_here && tasks.size() >= 5) {
    std::vector<int64_t> durations;
    durations.reserve(tasks.size());
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
      const double worth =
          std::ceil(std::sqrt(static_cast<double>(work) * spare_slots /
                              static_cast<double>(std::max<int64_t>(fixed_ms, 1))));
      const int64_t pieces = std::clamp<int64_t>(
          std::min<int64_t>((work + piece - 1) / piece,
                            static_cast<int64_t>(std::min(worth, double(kMaxPieces)))),
          1,
          std::min<int64_t>(kMaxPieces, kMaxStageTasks / static_cast<int64_t>(tasks.size()) + 1));
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
    work.reserve(old_count);
    // Signed, and kept both ways: an old task quicker than the fixed cost (the empty tasks'
    // mean) carries as much noise as one slower, and a new task that takes both does their sum;
    // a new task whose share comes out below zero is shortened, down to 1 ms. (Clamping each old
    // task's work at zero counted every task's noise above the mean as work -- 2,000 -> 200 tiny
    // reduce tasks got seconds of "work" the fewer tasks then did: 14.5% / 19.6% over; now
    // 2.1% / 4.3%.) The work follows the partitions, and with them the cost of the tasks that
    // ran early on their executors (the JVM still compiling the stage's code): partitions are
    // launched in order, so the first of the new tasks take it.
    // The profile's measure of the fixed part (Scenario::stage_fixed_task_share): each task is
    // that share fixed and the rest work, so a new task pays the share of the mean task once.
    double fixed = static_cast<double>(fixed_ms);
    auto measured = scenario.stage_fixed_task_share.find(unit.stage_id);
    if (measured != scenario.stage_fixed_task_share.end() && std::isfinite(measured->second)) {
      const double fixed_share = std::clamp(measured->second, 0.0, 1.0);
      double sum = 0;
      for (const Work& w : tasks) sum += static_cast<double>(w.duration_ms);
      fixed = fixed_share * sum / static_cast<double>(old_count);
      for (const Work& w : tasks) {
        work.push_back(static_cast<double>(w.duration_ms) * (1 - fixed_share));
      }
    } else {
      for (const Work& w : tasks) work.push_back(static_cast<double>(w.duration_ms - fixed_ms));
    }
    std::vector<double> share(count, 0.0);
    for (size_t i = 0; i < old_count; ++i) {
      // Old task i covers [i/old, (i+1)/old) of the key space.
      const double begin = static_cast<double>(i) / old_count;
      const double end = static_cast<double>(i + 1) / old_count;
      size_t first = static_cast<size_t>(begin * count);
      for (size_t j = first; j < count; ++j) {
        const double lo = std::max(begin, static_cast<double>(j) / count);
        const double hi = std::min(end, static_cast<double>(j + 1) / count);
        if (hi <= lo) break;
        share[j] += work[i] * (hi - lo) * old_count;
      }
    }
    std::vector<Work> out(count, Work{fixed_ms});
    for (size_t j = 0; j < count; ++j) {
      out[j].duration_ms = std::clamp<int64_t>(std::llround(fixed + share[j]), 1, kMaxMs);
    }
    tasks = std::move(out);
  }
  return tasks;
}

// The memory a task's execution could use: Spark's unified pool, (heap - 300 MiB reserved) x
// spark.memory.fraction, shared by the executor's concurrent tasks.
double PoolPerTaskBytes(int64_t heap_mb, double fraction, int32_t slots) {
  const double usable = std::max(static_cast<double>(heap_mb - 300) * kMiB * fraction, 16.0 * kMiB);
  return usable / std::max(slots, 1);
}

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
    gc_factor = std::clamp((heap - live) / std::max(new_heap - live, 0.05 * new_heap), 0.2, 10.0);
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
  const double spill_ms =
      std::min(static_cast<double>(w.disk_spilled_bytes) * r.spill_ms_per_byte, 0.8 * other_ms);
  const double new_spill_ms =
      std::min(spilled_memory * disk_ratio * r.spill_ms_per_byte, 10.0 * std::max(other_ms, 1.0));
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

// spark.executor.cores: every executor's slots.
void ChangeCores(const PreparedRun& run, const Scenario& scenario, ChangedRun& changed,
                 std::vector<std::string>& changes) {
  if (scenario.cores_per_executor <= 0) return;
  changed.new_slots_per_executor =
      std::max<int32_t>(1, static_cast<int32_t>(scenario.cores_per_executor / run.task_cpus));
  for (ExecutorSlots& e : changed.executors) e.slots = changed.new_slots_per_executor;
  changes.push_back("spark.executor.cores=" + std::to_string(scenario.cores_per_executor) +
                    " (was " + std::to_string(run.real_cores) + ")");
}

// Dynamic allocation's policy from the scenario, else the run's settings.
Allocation DynamicAllocation(const PreparedRun& run, const Scenario& scenario, bool run_dynamic,
                             int32_t slots_per_executor) {
  const model::ApplicationModel& m = *run.model;
  auto property = [&](const char* key, const std::string& fallback) {
    return PropertyOr(m, key, fallback);
  };
  auto count_property = [&](const char* key, int32_t fallback) {
    bool ok = false;
    const int64_t value = ParseCount(property(key, ""), ok);
    return ok ? static_cast<int32_t>(value) : property(key, "") == "0" ? 0 : fallback;
  };
  Allocation allocation;
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
          : std::max({allocation.min, count_property("spark.dynamicAllocation.initialExecutors", 0),
                      run_dynamic ? 0 : count_property("spark.executor.instances", 0)});
  allocation.initial = std::min(allocation.initial, allocation.max);
  allocation.slots = slots_per_executor;
  allocation.first_arrival_ms = kNever;
  for (const ExecutorSlots& e : run.executors) {
    allocation.first_arrival_ms = std::min(allocation.first_arrival_ms, e.added);
  }
  // An executor arrives as long after its request as the run's first one after the start.
  allocation.startup_ms = std::clamp<int64_t>(allocation.first_arrival_ms, 500, 60'000);
  allocation.backlog_ms = std::max<int64_t>(
      ParseDurationMs(property("spark.dynamicAllocation.schedulerBacklogTimeout", "1s"), 1000), 1);
  allocation.idle_timeout_ms = std::max<int64_t>(
      ParseDurationMs(property("spark.dynamicAllocation.executorIdleTimeout", "60s"), 1000), 1);
  return allocation;
}

// Dynamic allocation off: a fixed set (the run's peak, or the scenario's count), from the
// run's first executor arrival to the end.
void HoldExecutorsFixed(const PreparedRun& run, const Scenario& scenario, ChangedRun& changed,
                        std::vector<std::string>& changes) {
  int32_t peak = 0;
  std::vector<std::pair<int64_t, int>> arrivals;
  for (const ExecutorSlots& e : run.executors) {
    arrivals.push_back({e.added, 1});
    if (e.removed < kNever) arrivals.push_back({e.removed, -1});
  }
  std::sort(arrivals.begin(), arrivals.end());
  int32_t current = 0;
  for (const auto& [t, d] : arrivals) peak = std::max(peak, current += d);
  const int32_t count = scenario.executors > 0 ? scenario.executors : std::max(peak, 1);
  ExecutorSlots fixed = changed.executors.front();
  fixed.removed = kNever;
  changed.executors.assign(static_cast<size_t>(count), fixed);
  changes.push_back("dynamic allocation off: " + std::to_string(count) +
                    " executors held from the first one's arrival to the end");
}

// spark.executor.instances without dynamic allocation.
void ChangeExecutorCount(const Scenario& scenario, ChangedRun& changed,
                         std::vector<std::string>& changes) {
  std::vector<ExecutorSlots>& executors = changed.executors;
  const size_t wanted = static_cast<size_t>(scenario.executors);
  const size_t had = executors.size();
  if (wanted < had) {
    // The first to arrive stay; one that the run lost mid-way is replaced (Spark asks for
    // another), so the kept ones live until the last executor of the run left.
    int64_t last_removed = 0;
    for (const ExecutorSlots& e : executors) last_removed = std::max(last_removed, e.removed);
    executors.resize(wanted);
    for (ExecutorSlots& e : executors) e.removed = std::max(e.removed, last_removed);
  } else {
    // New executors arrive when the last one of the run did and stay as long as the longest.
    const ExecutorSlots last = executors.back();
    while (executors.size() < wanted) executors.push_back(last);
  }
  changes.push_back("spark.executor.instances=" + std::to_string(wanted) + " (was " +
                    std::to_string(had) + ")");
}

// The executors: dynamic allocation turned (or kept) on, turned off, or another count.
void ChangeExecutors(const PreparedRun& run, const Scenario& scenario, ChangedRun& changed,
                     std::vector<std::string>& changes) {
  const bool run_dynamic =
      PropertyOr(*run.model, "spark.dynamicAllocation.enabled", "false") == "true";
  const bool dynamic = !run.local_mode && !changed.executors.empty() &&
                       (scenario.dynamic_allocation == 1 ||
                        (scenario.dynamic_allocation < 0 &&
                         (scenario.min_executors >= 0 || scenario.max_executors > 0)));
  if (dynamic) {
    const Allocation& allocation = changed.allocation =
        DynamicAllocation(run, scenario, run_dynamic, changed.new_slots_per_executor);
    changes.push_back(
        "dynamic allocation " + std::string(run_dynamic ? "kept on" : "on") + ": " +
        std::to_string(allocation.initial) + " initial, min " + std::to_string(allocation.min) +
        ", max " +
        (allocation.max >= 100'000 ? std::string("unbounded") : std::to_string(allocation.max)) +
        " executors");
  } else if (scenario.dynamic_allocation == 0 && run_dynamic && !changed.executors.empty()) {
    HoldExecutorsFixed(run, scenario, changed, changes);
  } else if (scenario.executors > 0 && !changed.executors.empty()) {
    ChangeExecutorCount(scenario, changed, changes);
  }
}

// The prepared units of these stages (every attempt).
std::vector<size_t> UnitsOfStages(const PreparedRun& run, const std::vector<int32_t>& stage_ids) {
  std::vector<size_t> out;
  for (int32_t id : stage_ids) {
    auto of_stage = run.units_of_stage.find(id);
    if (of_stage == run.units_of_stage.end()) continue;
    for (size_t u : of_stage->second) out.push_back(u);
  }
  return out;
}

// One sort-merge join turned into a broadcast hash join; false when it cannot be (no large
// side or join stage ran, or another join already removed its stage).
bool BroadcastJoin(const PreparedRun& run, const BroadcastCandidate& join, ChangedRun& changed,
                   std::vector<std::string>& changes) {
  const std::vector<size_t> large = UnitsOfStages(run, join.large_map_stages);
  const std::vector<size_t> small = UnitsOfStages(run, join.small_map_stages);
  const std::vector<size_t> joined = UnitsOfStages(run, join.join_stages);
  bool done_already = false;
  for (size_t u : joined) done_already = done_already || changed.removed[u];
  if (large.empty() || joined.empty() || done_already) return false;
  std::vector<Unit>& reshaped = changed.WritableUnits();
  // The join stage goes: its shuffle read, sort and merge, and the operators after the join
  // in it, which now run in the large side's map tasks. Those keep their time: the probe
  // and the operators moved there are taken to cost what the shuffle write they no longer
  // do cost (on the suite's runs the broadcast stage was faster than that map stage).
  // The broadcast: the small side collected to the driver and sent to every executor, at
  // the run's own shuffle write rate (100 MiB/s without one).
  const ShuffleWrites& written = run.shuffle_writes;
  const double ms_per_byte = written.bytes >= (1 << 20)
                                 ? static_cast<double>(written.ms) / written.bytes
                                 : 1000.0 / (100.0 * kMiB);
  const int64_t broadcast_ms =
      std::min<int64_t>(std::llround(static_cast<double>(join.small_bytes) * ms_per_byte *
                                     static_cast<double>(1 + changed.executors.size())),
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
    changed.removed[u] = true;
  }
  std::string stage_ids;
  for (int32_t id : join.join_stages) {
    stage_ids += (stage_ids.empty() ? "" : ", ") + std::to_string(id);
  }
  changes.push_back("SQL execution " + std::to_string(join.execution_id) +
                    ": the sort-merge join (plan node " + std::to_string(join.join_node) +
                    ") of a " + std::to_string(join.small_bytes >> 10) +
                    " KiB side broadcast; stage(s) " + stage_ids + " removed");
  return true;
}

// --fix broadcast: the sort-merge joins whose small side fits (those the scenario names, or
// every one) become broadcast hash joins.
void BroadcastJoins(const PreparedRun& run, const Scenario& scenario, ChangedRun& changed,
                    std::vector<std::string>& changes) {
  const std::vector<BroadcastCandidate> joins =
      FindBroadcastCandidates(*run.model, kMaxBroadcastBytes);
  int converted = 0;
  for (const BroadcastCandidate& join : joins) {
    if (!scenario.broadcast_joins.empty() &&
        std::find(scenario.broadcast_joins.begin(), scenario.broadcast_joins.end(),
                  std::pair<int64_t, int32_t>{join.execution_id, join.join_node}) ==
            scenario.broadcast_joins.end()) {
      continue;
    }
    if (BroadcastJoin(run, join, changed, changes)) ++converted;
  }
  if (converted == 0) {
    changes.push_back(
        "--fix broadcast: no sort-merge join whose small side (<= 256 MiB, "
        "<= 1/8 of the other) a broadcast could replace; nothing changed");
  }
}

// Executor memory (and the pool per task when the cores change): spill and GC rescaled.
void ChangeMemory(const PreparedRun& run, const Scenario& scenario, ChangedRun& changed,
                  std::vector<std::string>& changes) {
  const MemoryRelation& memory = run.memory;
  changed.new_heap_mb =
      scenario.executor_memory_mb > 0 ? scenario.executor_memory_mb : memory.heap_mb;
  changed.rescale_memory = scenario.executor_memory_mb > 0 ||
                           (scenario.cores_per_executor > 0 &&
                            changed.new_slots_per_executor != changed.slots_per_executor);
  if (!changed.rescale_memory) return;
  const int64_t new_heap_mb = changed.new_heap_mb;
  const MemoryChange change(memory, new_heap_mb, changed.slots_per_executor,
                            changed.new_slots_per_executor);
  auto rescale = [&](std::vector<Unit>& rescaled) {
    for (Unit& unit : rescaled) {
      for (Work& w : unit.tasks) RescaleMemory(w, memory, change);
    }
  };
  if (changed.units_as_prepared()) {
    // Rescaled alike for every scenario with this heap and these slots: shared.
    std::lock_guard<std::mutex> lock(run.rescaled_mutex);
    PreparedRun::Rescaled& last = run.rescaled;
    if (last.units == nullptr || last.heap_mb != new_heap_mb ||
        last.slots != changed.slots_per_executor ||
        last.new_slots != changed.new_slots_per_executor) {
      auto rescaled = std::make_shared<std::vector<Unit>>(run.units);
      rescale(*rescaled);
      last = {new_heap_mb, changed.slots_per_executor, changed.new_slots_per_executor,
              std::move(rescaled)};
    }
    changed.ShareUnits(last.units);
  } else {
    rescale(changed.WritableUnits());
  }
  if (scenario.executor_memory_mb > 0) {
    changes.push_back("spark.executor.memory=" + std::to_string(new_heap_mb) + "m (was " +
                      std::to_string(memory.heap_mb) + "m)");
  }
}

// spark.speculation: on, copies of slow tasks; off, the run's own attempts as they ran.
void ChangeSpeculation(const PreparedRun& run, const Scenario& scenario, ChangedRun& changed,
                       std::vector<std::string>& changes) {
  const model::ApplicationModel& m = *run.model;
  if (scenario.speculation == 1) {
    const bool spark4 = m.spark_version.rfind('4', 0) == 0;
    double multiplier = std::strtod(
        PropertyOr(m, "spark.speculation.multiplier", spark4 ? "3" : "1.5").c_str(), nullptr);
    double quantile = std::strtod(
        PropertyOr(m, "spark.speculation.quantile", spark4 ? "0.9" : "0.75").c_str(), nullptr);
    if (!(multiplier >= 1 && multiplier <= 100)) multiplier = 1.5;
    if (!(quantile > 0 && quantile <= 1)) quantile = 0.75;
    int64_t copies = 0;
    for (Unit& unit : changed.WritableUnits()) copies += Speculate(unit, multiplier, quantile);
    char text[200];
    std::snprintf(text, sizeof(text),
                  "spark.speculation=true: %lld speculative copies of tasks past %.1fx their "
                  "stage's median once %.0f%% of it had finished",
                  static_cast<long long>(copies), multiplier, 100 * quantile);
    changes.push_back(text);
  } else if (scenario.speculation == 0) {
    changes.push_back(
        "spark.speculation=false: the run's own attempts are replayed as they "
        "ran (speculative copies it launched included)");
  }
}

// spark.sql.files.maxPartitionBytes: each file-scan stage's new task count (-1: unchanged).
void CountScanSplits(const PreparedRun& run, const Scenario& scenario, const ChangedRun& changed,
                     std::vector<int64_t>& counts, std::vector<std::string>& changes) {
  const model::ApplicationModel& m = *run.model;
  const Allocation& allocation = changed.allocation;
  const int64_t old_max = ParseSizeBytes(PropertyOr(m, "spark.sql.files.maxPartitionBytes", ""), 1);
  const int64_t open_cost =
      std::max<int64_t>(ParseSizeBytes(PropertyOr(m, "spark.sql.files.openCostInBytes", ""), 1), 0);
  auto parallelism = [&](const std::vector<ExecutorSlots>& list) {
    bool ok = false;
    const int64_t set = ParseCount(PropertyOr(m, "spark.default.parallelism", ""), ok);
    if (ok) return set;
    int64_t slots = 0;
    for (const ExecutorSlots& e : list) slots += e.slots;
    return std::max<int64_t>(slots, 1);
  };
  const double old_split_max = old_max > 0 ? static_cast<double>(old_max) : 128.0 * kMiB;
  const double open = open_cost > 0 ? static_cast<double>(open_cost) : 4.0 * kMiB;
  const double old_parallelism = static_cast<double>(parallelism(run.executors));
  const double new_parallelism = static_cast<double>(parallelism(
      allocation.enabled ? std::vector<ExecutorSlots>(std::max(allocation.initial, 1),
                                                      ExecutorSlots{0, kNever, allocation.slots})
                         : changed.executors));
  int resplit = 0;
  const std::vector<Unit>& reshaped = changed.units();
  for (size_t u = 0; u < reshaped.size(); ++u) {
    if (reshaped[u].shuffle_read || changed.removed[u] || reshaped[u].tasks.empty()) continue;
    double total = 0;
    for (const Work& w : reshaped[u].tasks) total += static_cast<double>(w.input_bytes);
    if (total < 1) continue;
    // Spark's FilePartition.maxSplitBytes: min(maxPartitionBytes, max(openCost, bytes/cores)).
    const double old_split = std::min(old_split_max, std::max(open, total / old_parallelism));
    const double new_split = std::min(static_cast<double>(scenario.max_partition_bytes),
                                      std::max(open, total / new_parallelism));
    const double count =
        std::round(static_cast<double>(reshaped[u].tasks.size()) * old_split / new_split);
    counts[u] = static_cast<int64_t>(std::clamp(count, 1.0, double(kMaxStageTasks)));
    if (counts[u] != static_cast<int64_t>(reshaped[u].tasks.size())) ++resplit;
  }
  changes.push_back(
      "spark.sql.files.maxPartitionBytes=" + std::to_string(scenario.max_partition_bytes) + " (" +
      std::to_string(resplit) + " file-scan stages re-split by their input bytes)");
}

// spark.sql.shuffle.partitions: it sets the count of SQL stages that read a hash or range
// shuffle, which ran that many tasks; one that ran fewer was coalesced by adaptive execution
// (its count follows the data, at most the setting); others (a single partition, an explicit
// repartition(n), RDD shuffles) keep theirs. Sets those stages' new counts (a stage a scan split
// already counted keeps that) and returns how many changed.
int CountShufflePartitions(const PreparedRun& run, const Scenario& scenario,
                           const ChangedRun& changed, std::vector<int64_t>& counts) {
  const model::ApplicationModel& m = *run.model;
  int resplit_shuffles = 0;
  bool ok = false;
  int64_t run_partitions = ParseCount(PropertyOr(m, "spark.sql.shuffle.partitions", ""), ok);
  if (!ok) run_partitions = 200;
  const bool adaptive_default =
      m.spark_version.empty() || m.spark_version >= "3.2" || m.spark_version[0] >= '4';
  const bool coalescing =
      PropertyOr(m, "spark.sql.adaptive.enabled", adaptive_default ? "true" : "false") == "true" &&
      PropertyOr(m, "spark.sql.adaptive.coalescePartitions.enabled", "true") == "true";
  const std::vector<Unit>& reshaped = changed.units();
  for (size_t u = 0; u < reshaped.size(); ++u) {
    const Unit& unit = reshaped[u];
    if (!unit.shuffle_read || changed.removed[u] || counts[u] > 0) continue;
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
      counts[u] = count;
      ++resplit_shuffles;
    }
  }
  return resplit_shuffles;
}

// Re-splits: file scans by the new split size, shuffle reads, skew, stages the scenario names.
void ResplitStages(const PreparedRun& run, const Scenario& scenario, ChangedRun& changed,
                   std::vector<std::string>& changes) {
  std::vector<int64_t> counts(run.units.size(), -1);  // new task counts, -1: unchanged
  if (scenario.max_partition_bytes > 0) {
    CountScanSplits(run, scenario, changed, counts, changes);
  }
  const int resplit_shuffles =
      scenario.shuffle_partitions > 0 ? CountShufflePartitions(run, scenario, changed, counts) : 0;
  if (!scenario.fix_skew && scenario.shuffle_partitions <= 0 && scenario.stage_partitions.empty() &&
      scenario.max_partition_bytes <= 0) {
    return;
  }
  const Allocation& allocation = changed.allocation;
  const int64_t peak_slots =
      allocation.enabled
          ? std::min<int64_t>(int64_t{std::max(allocation.max, 1)} * allocation.slots,
                              kMaxStageTasks)
          : PeakSlots(changed.executors);
  std::vector<Unit>& reshaped = changed.WritableUnits();
  for (size_t u = 0; u < reshaped.size(); ++u) {
    Unit& unit = reshaped[u];
    const int64_t fixed = std::min<int64_t>(FixedTaskCostMs(unit.tasks), 200);
    unit.tasks = Reshape(unit.tasks, unit, scenario, fixed, counts[u], peak_slots);
  }
  if (scenario.fix_skew) {
    changes.push_back(
        "skew fixed: tasks above 2x their stage's median split into median-sized pieces, at "
        "most sqrt(work x (slots - 1) / per-task cost) of them (more cost more than they save)");
  }
  for (const auto& [stage, count] : scenario.stage_partitions) {
    changes.push_back("stage " + std::to_string(stage) + " re-split to " + std::to_string(count) +
                      " tasks");
  }
  if (scenario.shuffle_partitions > 0) {
    changes.push_back(
        "spark.sql.shuffle.partitions=" + std::to_string(scenario.shuffle_partitions) + " (" +
        std::to_string(resplit_shuffles) + " SQL stages that read a shuffle re-split)");
  }
}

// Code changes the profile measured: the stages' tasks shortened (after any re-split, which
// keeps the time per task the change then scales), each task by its own factor where the
// profile measured one, the warm-up by the mean factor of the tasks that held it.
void ScaleMeasuredStages(const Scenario& scenario, ChangedRun& changed,
                         std::vector<std::string>& changes) {
  if (scenario.stage_task_time_factor.empty() && scenario.task_time_factor.empty()) return;
  auto clamped = [](double factor) { return std::clamp(factor, 0.0, 1.0); };
  struct Range {
    double low = 1, high = 0;
  };
  std::map<int32_t, Range> per_task;  // stages whose tasks took factors of their own
  for (Unit& unit : changed.WritableUnits()) {
    auto stage = scenario.stage_task_time_factor.find(unit.stage_id);
    const bool stage_scaled = stage != scenario.stage_task_time_factor.end();
    const double stage_factor = stage_scaled ? clamped(stage->second) : 1.0;
    double first_sum = 0;
    int first_count = 0;
    bool any = stage_scaled;
    for (Work& w : unit.tasks) {
      double factor = stage_factor;
      bool scaled = stage_scaled;
      if (w.task_id >= 0 && !scenario.task_time_factor.empty()) {
        auto own = scenario.task_time_factor.find(w.task_id);
        if (own != scenario.task_time_factor.end()) {
          factor = clamped(own->second);
          Range& range = per_task[unit.stage_id];
          range.low = std::min(range.low, factor);
          range.high = std::max(range.high, factor);
          any = scaled = true;
        }
      }
      if (w.first_on_executor) {
        first_sum += factor;
        ++first_count;
      }
      if (scaled) {
        w.duration_ms =
            std::max<int64_t>(std::llround(static_cast<double>(w.duration_ms) * factor), 1);
      }
    }
    if (!any) continue;
    const double warmup_factor = first_count > 0 ? first_sum / first_count : stage_factor;
    unit.warmup_ms = std::llround(static_cast<double>(unit.warmup_ms) * warmup_factor);
  }
  for (const auto& [stage, factor] : scenario.stage_task_time_factor) {
    if (per_task.count(stage) > 0) continue;
    char text[120];
    std::snprintf(text, sizeof(text), "stage %d's tasks take %.0f%% of their time",
                  static_cast<int>(stage), 100 * clamped(factor));
    changes.push_back(text);
  }
  for (const auto& [stage, range] : per_task) {
    char text[160];
    std::snprintf(text, sizeof(text),
                  "stage %d's tasks take %.0f%%-%.0f%% of their time (each its own measured share)",
                  static_cast<int>(stage), 100 * range.low, 100 * range.high);
    changes.push_back(text);
  }
}

}  // namespace

ChangedRun::ChangedRun(const PreparedRun& run)
    : executors(run.executors), removed(run.units.size(), false), prepared_units_(&run.units) {
  slots_per_executor = executors.empty()
                           ? 1
                           : std::max_element(executors.begin(), executors.end(),
                                              [](const ExecutorSlots& a, const ExecutorSlots& b) {
                                                return a.slots < b.slots;
                                              })
                                 ->slots;
  new_slots_per_executor = slots_per_executor;
}

std::vector<Unit>& ChangedRun::WritableUnits() {
  if (!own_units_active_) {
    own_units_ = units();
    own_units_active_ = true;
  }
  return own_units_;
}

void ChangedRun::ShareUnits(std::shared_ptr<const std::vector<Unit>> units) {
  shared_units_ = std::move(units);
}

bool ChangedRun::ReplaysAsRun(const PreparedRun& run) const {
  return units_as_prepared() && !allocation.enabled &&
         std::equal(executors.begin(), executors.end(), run.executors.begin(), run.executors.end(),
                    [](const ExecutorSlots& a, const ExecutorSlots& b) {
                      return a.added == b.added && a.removed == b.removed && a.slots == b.slots;
                    });
}

// In the order the changes compose: the executors first (the scan re-split reads the new slot
// count), a re-split after the memory and speculation changes to the tasks it splits, the
// profile's measured changes last (they scale the time per task a re-split leaves).
ChangedRun ApplyScenario(const PreparedRun& run, const Scenario& scenario,
                         std::vector<std::string>& changes) {
  ChangedRun changed(run);
  ChangeCores(run, scenario, changed, changes);
  ChangeExecutors(run, scenario, changed, changes);
  if (scenario.fix_broadcast) BroadcastJoins(run, scenario, changed, changes);
  ChangeMemory(run, scenario, changed, changes);
  ChangeSpeculation(run, scenario, changed, changes);
  ResplitStages(run, scenario, changed, changes);
  ScaleMeasuredStages(scenario, changed, changes);
  return changed;
}

std::vector<std::string> Assumptions(const PreparedRun& run, const Scenario& scenario,
                                     const ChangedRun& changed) {
  const MemoryRelation& memory = run.memory;
  const Allocation& allocation = changed.allocation;
  std::vector<std::string> assumptions = {
      "task durations are replayed as the run measured them (launch to finish), so executor "
      "speed, GC and I/O per task stay as they were unless a change below rescales them",
      "driver-only gaps between jobs, the delay between a stage's parents and its first task, "
      "and each job's time after its last task (result fetch, commit) are kept",
      "tasks go FIFO to the first free slot, which is reused after the run's median dispatch gap "
      "(" +
          std::to_string(run.launch_gap_ms) +
          " ms); locality waits are kept where the run shows "
          "them; slots are not CPUs: more slots than the hosts' cores are assumed to scale"};
  if (scenario.shuffle_partitions > 0) {
    assumptions.push_back(
        "the setting re-splits the SQL stages that ran that many tasks (or fewer, coalesced by "
        "adaptive execution: at most the new count); a re-split stage's work (task time less "
        "its shortest task) is spread evenly over the new partitions in key order, so a hot "
        "partition stays hot; spill and GC per task are not rescaled");
  }
  if (scenario.executors > 0 && !allocation.enabled) {
    assumptions.push_back(
        "added executors arrive when the run's last executor arrived; removed ones are the "
        "latest to arrive");
  }
  if (changed.rescale_memory) {
    char text[600];
    std::snprintf(
        text, sizeof(text),
        "executor memory %lld MiB -> %lld MiB, %d -> %d task slots each: a task's execution "
        "pool is (heap - 300 MiB) x %.2f / slots; a task that spilled spills what it needed "
        "(peak + memory spilled) beyond its pool scaled by the new/old pool, one that did not "
        "spills beyond the new pool; spill costs %.3f ms per MiB on disk (the run's shuffle write "
        "rate, written and read back); GC time scales with 1 / (heap - live data), live data = "
        "the executors' peak storage + execution memory (%lld MiB), at most 10x",
        static_cast<long long>(memory.heap_mb), static_cast<long long>(changed.new_heap_mb),
        changed.slots_per_executor, changed.new_slots_per_executor, memory.fraction,
        memory.spill_ms_per_byte * kMiB, static_cast<long long>(memory.live_bytes / kMiB));
    assumptions.push_back(text);
  }
  if (scenario.fix_broadcast) {
    assumptions.push_back(
        "a broadcast join: the join stage (shuffle read, sort, merge and the operators after "
        "the join in it) is removed; the large side's map tasks keep their time, the probe and "
        "the operators moved into them taken to cost what their shuffle write cost; they start "
        "after the small side's stage plus the broadcast (the small side's in-memory size sent "
        "to the driver and every executor at the run's shuffle write rate); heavy per-row work "
        "after the join is underestimated");
  }
  if (allocation.enabled) {
    assumptions.push_back(
        "dynamic allocation: executors requested after " + std::to_string(allocation.backlog_ms) +
        " ms of waiting tasks, doubling per round up to "
        "what the tasks need; each arrives " +
        std::to_string(allocation.startup_ms) +
        " ms after its request (the run's first executor's start-up); released after " +
        std::to_string(allocation.idle_timeout_ms) +
        " ms idle (an external shuffle service is "
        "assumed: shuffle files and cached blocks do not keep an executor)");
  }
  if (scenario.speculation == 1) {
    assumptions.push_back(
        "speculation: a slow task's copy runs as long as the stage's median task scaled by its "
        "records (a skewed task is not helped) and is assumed to find a free slot on another "
        "executor when it is due (Spark never speculates on the host of the original: on a "
        "single host, no copy runs)");
  }
  if (scenario.max_partition_bytes > 0) {
    assumptions.push_back(
        "file scans: the stage's task count scales with Spark's split size, min(maxPartitionBytes, "
        "max(openCostInBytes, input bytes / slots)), old over new; its work is spread over the new "
        "tasks by position; files are assumed splittable (not gzip)");
  }
  return assumptions;
}

}  // namespace sparkprof::whatif
