// cache-misuse: persisted data (df.cache()/persist(), RDD.persist()) that did not pay off, from the
// "RDD Info" of completed stages (the cached RDD, its partitions and how many were cached):
//   * cached and never reused: only the query that computed it lists it (one SQL execution, or
//     one job for RDD code), so the cache cost memory (and the time to store it) and no later
//     query read it. Warning from 1 MiB stored
//     (or when the log has no sizes, Spark 2+), info below. Databricks' own Delta state caches
//     are not the application's and are skipped.
//   * cached, evicted or never fully cached, and recomputed: it was used by >= 2 jobs but at some
//     use after the first only part of its partitions were cached; the missing ones were
//     recomputed from the lineage each time. Warning; critical when the estimated recomputation
//     is >= 25% of the run's task time. Spark 1.x logs the cached partition counts in RDD Info;
//     Spark 2+ writes 0 there, so for those logs (no count above 0 anywhere) the recomputation is
//     read from the SQL plans instead: the nodes below an InMemoryTableScan are the cached plan,
//     whose metrics keep their accumulator ids in every query that reads the cache; when a stage
//     of a later job updates them, that stage recomputed missing partitions, and the rows it
//     produced again (the growth of the cumulative "number of output rows") say how much.
// Thresholds are ours; no other tool reads this (analyzer-facts.md).
#include <algorithm>
#include <set>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kMinUnusedBytes = 1 << 20;

std::string StorageName(const model::CachedRdd& rdd) {
  if (rdd.use_memory && rdd.use_disk) return "MEMORY_AND_DISK";
  return rdd.use_memory ? "MEMORY_ONLY" : "DISK_ONLY";
}
}  // namespace

namespace {

int32_t FirstJob(const model::ApplicationModel& m, int32_t stage_id, int32_t attempt) {
  auto stage = m.stages.find({stage_id, attempt});
  return stage != m.stages.end() && !stage->second.job_ids.empty() ? stage->second.job_ids.front()
                                                                   : -1;
}

// Spark 2+: recomputation of cached plans, from the SQL metrics of the plan below each
// InMemoryTableScan (see the header).
void RecomputedCachedPlans(const DiagnosisInput& input, int64_t total_run_ms,
                           std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  std::set<int64_t> seen;  // cached plans by their rows metric's accumulator id
  for (const SqlPlan& plan : input.plans) {
    for (int32_t n = 0; n < static_cast<int32_t>(plan.nodes().size()); ++n) {
      if (plan.Kind(n) != "InMemoryTableScan") continue;
      // The cached plan's row counter: the first node below the scan that has one.
      int64_t rows_id = -1;
      int32_t rows_node = -1;
      plan.FindBelow(n, [&](int32_t c) {
        for (int64_t id : plan.node(c).metric_ids) {
          auto metric = std::find_if(
              plan.sql().metrics.begin(), plan.sql().metrics.end(), [&](const model::SqlMetric& x) {
                return x.accumulator_id == id && x.name == "number of output rows";
              });
          if (metric != plan.sql().metrics.end()) {
            rows_id = id;
            rows_node = c;
            return true;
          }
        }
        return false;
      });
      if (rows_id < 0 || !seen.insert(rows_id).second) continue;
      // Stage attempts that updated it, in completion order, with the cumulative value.
      struct Update {
        int64_t completion_ms;
        int32_t stage_id;
        int32_t job;
        int64_t value;
      };
      std::vector<Update> updates;
      for (const auto& [key, stage] : m.stages) {
        auto value = stage.accumulables.find(rows_id);
        if (value == stage.accumulables.end()) continue;
        updates.push_back({stage.completion_time_ms, stage.stage_id,
                           FirstJob(m, stage.stage_id, stage.attempt), value->second.value});
      }
      std::sort(updates.begin(), updates.end(),
                [](const Update& a, const Update& b) { return a.completion_ms < b.completion_ms; });
      if (updates.size() < 2) continue;
      const int32_t first_job = updates.front().job;
      int64_t materialized = 0, recomputed = 0, previous = 0;
      std::vector<int32_t> stage_ids;
      std::set<int32_t> later_jobs;
      for (const Update& u : updates) {
        const int64_t delta = std::max<int64_t>(u.value - previous, 0);
        previous = std::max(previous, u.value);
        if (u.job == first_job) {
          materialized += delta;
        } else {
          recomputed += delta;
          later_jobs.insert(u.job);
          if (std::find(stage_ids.begin(), stage_ids.end(), u.stage_id) == stage_ids.end()) {
            stage_ids.push_back(u.stage_id);
          }
        }
      }
      if (recomputed <= 0 || materialized <= 0) continue;
      const double share = static_cast<double>(recomputed) / static_cast<double>(materialized);
      // Task time of the materializing stages stands for the cost of computing it once.
      int64_t first_ms = 0;
      for (const Update& u : updates) {
        if (u.job != first_job) continue;
        for (const StageStats& s : input.stages) {
          if (s.stage_id == u.stage_id) first_ms += s.run_time_ms;
        }
      }
      const int64_t recompute_ms = static_cast<int64_t>(static_cast<double>(first_ms) * share);
      const double run_share =
          total_run_ms > 0 ? static_cast<double>(recompute_ms) / total_run_ms : 0;
      Finding f = NewFinding("cache-misuse");
      f.severity = run_share >= 0.25 ? Severity::kCritical : Severity::kWarning;
      f.confidence = {ConfidenceLevel::kMedium,
                      "stages of later jobs updated the cached plan's own row counter (SQL "
                      "metrics), which happens only when they recompute it; the time is estimated "
                      "from the stages that first computed it"};
      f.stage_ids = stage_ids;
      f.title = "Cache did not hold in SQL execution " + std::to_string(plan.sql().execution_id) +
                ": " + Fixed(100 * share, 0) + "% of the cached rows were computed again";
      f.evidence = {
          {"sql_execution_id", static_cast<double>(plan.sql().execution_id), "count"},
          {"plan_node", static_cast<double>(n), "count"},
          {"rows_materialized", static_cast<double>(materialized), "count"},
          {"rows_recomputed", static_cast<double>(recomputed), "count"},
          {"later_jobs_recomputing", static_cast<double>(later_jobs.size()), "count"},
          {"estimated_recompute_task_ms", static_cast<double>(recompute_ms), "ms"},
      };
      f.explanation =
          "SQL execution " + std::to_string(plan.sql().execution_id) + ", plan node " +
          std::to_string(n) + " reads a cached plan (its node " + std::to_string(rows_node) + " " +
          plan.node(rows_node).name + " produced " + std::to_string(materialized) +
          " rows when the cache was filled). Stages of " + std::to_string(later_jobs.size()) +
          " later job(s) produced " + std::to_string(recomputed) +
          " of those rows again: cached blocks that did not fit in storage memory, or were "
          "evicted for others, are recomputed from the source at every use, an estimated " +
          HumanDurationMs(recompute_ms) + " of task time.";
      f.recommendations.push_back(
          {"",
           "persist(StorageLevel.MEMORY_AND_DISK) instead of a memory-only level, or cache "
           "fewer columns/rows (select and filter before cache())",
           "blocks that do not fit are then spilled to local disk once instead of recomputed"});
      f.recommendations.push_back(
          {input.TaskHeapKey(), "more than now",
           "storage memory is a share (spark.memory.storageFraction) of the unified memory"});
      f.impact = HalfToAllOfTaskTime(
          recompute_ms, input.slots(),
          "the materializing stages' task time times the share of rows recomputed, spread over "
          "the slots (high); half (low)");
      AddCostingItsSaving(std::move(f), out);
    }
  }
}

}  // namespace

void CacheMisuse(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  int64_t total_run_ms = 0;
  for (const StageStats& s : input.stages) total_run_ms += s.run_time_ms;
  // Spark 2+ writes 0 cached partitions in RDD Info: only a log with some count above 0 has them.
  bool counts_known = false;
  for (const auto& [id, rdd] : m.cached_rdds) counts_known |= rdd.max_cached_partitions > 0;
  if (!counts_known) RecomputedCachedPlans(input, total_run_ms, out);
  struct Unused {
    const model::CachedRdd* rdd;
    int32_t stage_id;
    int64_t stored;
  };
  std::vector<Unused> unused;
  for (const auto& [id, rdd] : m.cached_rdds) {
    if (rdd.uses.empty() || rdd.partitions <= 0) continue;
    // Databricks caches Delta table state itself: not the application's cache.
    if (rdd.name.rfind("Delta Table State", 0) == 0) continue;
    std::set<int32_t> jobs;
    std::set<int64_t> readers;  // SQL executions (or jobs, for RDD code) whose stages list it
    std::vector<int32_t> stage_ids;
    for (const model::CachedRdd::Use& use : rdd.uses) {
      auto stage = m.stages.find({use.stage_id, use.stage_attempt});
      if (stage != m.stages.end() && !stage->second.job_ids.empty()) {
        const int32_t job_id = stage->second.job_ids.front();
        jobs.insert(job_id);
        auto job = m.jobs.find(job_id);
        const int64_t sql = job != m.jobs.end() ? job->second.sql_execution_id : -1;
        readers.insert(sql >= 0 ? sql : -1 - static_cast<int64_t>(job_id));
      }
      if (std::find(stage_ids.begin(), stage_ids.end(), use.stage_id) == stage_ids.end()) {
        stage_ids.push_back(use.stage_id);
      }
    }
    const int64_t stored = rdd.max_memory_bytes + rdd.max_disk_bytes;
    // Uses after the first whose stage found part of it missing.
    int32_t short_uses = 0;
    int32_t fewest_cached = rdd.partitions;
    // Only partial counts: some Spark 1.x stages list a cached RDD with 0 partitions whatever
    // its state, so 0 is not read as evicted.
    for (size_t i = 1; i < rdd.uses.size(); ++i) {
      if (rdd.uses[i].cached_partitions > 0 && rdd.uses[i].cached_partitions < rdd.partitions) {
        ++short_uses;
        fewest_cached = std::min(fewest_cached, rdd.uses[i].cached_partitions);
      }
    }
    Finding f = NewFinding("cache-misuse");
    f.stage_ids = stage_ids;
    f.evidence = {
        {"rdd_id", static_cast<double>(id), "count"},
        {"partitions", static_cast<double>(rdd.partitions), "count"},
        {"max_cached_partitions", static_cast<double>(rdd.max_cached_partitions), "count"},
        {"memory_bytes", static_cast<double>(rdd.max_memory_bytes), "bytes"},
        {"disk_bytes", static_cast<double>(rdd.max_disk_bytes), "bytes"},
        {"jobs_using_it", static_cast<double>(jobs.size()), "count"},
        {"stages_listing_it", static_cast<double>(rdd.uses.size()), "count"},
    };
    const std::string what =
        "RDD " + std::to_string(id) + " (" + rdd.name + ", " + StorageName(rdd) + ")";
    // Never reused: only the query (SQL execution; the job for RDD code) that computed it read
    // it -- AQE runs one query as several jobs, each listing the cached RDD. Collected into one
    // finding for the application (iterative libraries persist many such RDDs).
    if (readers.size() <= 1) {
      unused.push_back({&rdd, stage_ids.front(), stored});
      continue;
    }
    if (short_uses == 0 || !counts_known) continue;
    // The stage that first computed it: recomputing the missing share costs that share of its
    // task time at every short use.
    int64_t first_stage_ms = 0;
    for (const StageStats& s : input.stages) {
      if (s.stage_id == rdd.uses.front().stage_id && s.attempt == rdd.uses.front().stage_attempt) {
        first_stage_ms = s.run_time_ms;
      }
    }
    const double missing =
        1.0 - static_cast<double>(fewest_cached) / static_cast<double>(rdd.partitions);
    const int64_t recompute_ms =
        static_cast<int64_t>(static_cast<double>(first_stage_ms) * missing * short_uses);
    const double share = total_run_ms > 0 ? static_cast<double>(recompute_ms) / total_run_ms : 0;
    f.severity = share >= 0.25 ? Severity::kCritical : Severity::kWarning;
    f.confidence = {ConfidenceLevel::kMedium,
                    "the cached partition counts are Spark's (RDD Info); the recomputation time "
                    "is estimated from the stage that first computed the data"};
    f.evidence.push_back(
        {"uses_with_partitions_missing", static_cast<double>(short_uses), "count"});
    f.evidence.push_back({"fewest_cached_partitions", static_cast<double>(fewest_cached), "count"});
    f.evidence.push_back({"estimated_recompute_task_ms", static_cast<double>(recompute_ms), "ms"});
    f.title = "Cache did not hold: " + what + " had only " + std::to_string(fewest_cached) +
              " of " + std::to_string(rdd.partitions) + " partitions cached when reused";
    const std::string storage_fraction = input.Property("spark.memory.storageFraction", "0.5");
    f.explanation =
        what + " was read by " + std::to_string(jobs.size()) + " jobs, but " +
        std::to_string(short_uses) + " later use(s) found as few as " +
        std::to_string(fewest_cached) + " of its " + std::to_string(rdd.partitions) +
        " partitions cached (" + HumanBytes(rdd.max_memory_bytes) +
        " in memory at most): blocks "
        "that did not fit, or were evicted for newer ones, were recomputed from the lineage "
        "every time, an estimated " +
        HumanDurationMs(recompute_ms) + " of task time.";
    if (!rdd.use_disk) {
      f.recommendations.push_back(
          {"", "persist(StorageLevel.MEMORY_AND_DISK) (or DISK_ONLY for large data)",
           "partitions that do not fit in memory are then written to local disk once and read "
           "back, instead of recomputed"});
    }
    f.recommendations.push_back(
        {input.TaskHeapKey(),
         "+" + HumanBytes(std::max<int64_t>(rdd.max_memory_bytes / std::max(1, fewest_cached) *
                                                (rdd.partitions - fewest_cached),
                                            1 << 20)),
         "roughly what the missing partitions need in storage memory (storageFraction " +
             storage_fraction + " of the unified memory)"});
    f.impact = HalfToAllOfTaskTime(
        recompute_ms, input.slots(),
        "the first computing stage's task time times the missing share of partitions, at every "
        "reuse that found them missing, spread over the slots (high); half (low)");
    AddCostingItsSaving(std::move(f), out);
  }
  if (unused.empty()) return;
  int64_t stored = 0;
  Finding f = NewFinding("cache-misuse");
  for (const Unused& u : unused) {
    stored += u.stored;
    if (f.stage_ids.size() < 50 &&
        std::find(f.stage_ids.begin(), f.stage_ids.end(), u.stage_id) == f.stage_ids.end()) {
      f.stage_ids.push_back(u.stage_id);
    }
  }
  // Spark 2+ logs no sizes: without them the cache is assumed to matter.
  f.severity = (!counts_known || stored >= kMinUnusedBytes) ? Severity::kWarning : Severity::kInfo;
  f.confidence = {ConfidenceLevel::kHigh,
                  "only the query that computed each cached RDD lists it (RDD Info of the "
                  "completed stages, their jobs' SQL executions)"};
  const model::CachedRdd& first = *unused.front().rdd;
  const std::string what =
      "RDD " + std::to_string(first.rdd_id) + " (" + first.name + ", " + StorageName(first) + ")";
  f.title =
      "Cached and never reused: " +
      (unused.size() == 1 ? what : std::to_string(unused.size()) + " cached RDDs, e.g. " + what) +
      (counts_known ? ", " + HumanBytes(stored) + " stored" : std::string());
  f.evidence = {
      {"cached_rdds_never_reused", static_cast<double>(unused.size()), "count"},
      {"first_rdd_id", static_cast<double>(first.rdd_id), "count"},
      {"first_rdd_partitions", static_cast<double>(first.partitions), "count"},
      {"stored_bytes", static_cast<double>(stored), "bytes"},
  };
  f.explanation =
      what + (unused.size() > 1 ? " and " + std::to_string(unused.size() - 1) + " more" : "") +
      " were persisted" + (counts_known ? " (" + HumanBytes(stored) + " stored)" : std::string()) +
      ", but only the query that computed each (stage " + std::to_string(unused.front().stage_id) +
      " for the first) used it. A cache takes storage memory from execution (more spill and GC "
      "for everything else) and time to store the blocks; these saved nothing.";
  f.recommendations.push_back(
      {"", "remove the cache()/persist() calls, or unpersist() as soon as the last user finished",
       "no later query read them in this run"});
  f.impact.method = "frees " + (counts_known ? HumanBytes(stored) : std::string("the")) +
                    " storage memory they held for execution; the time saved (storing the "
                    "blocks) is small and not estimated";
  f.cost_ms = 0;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
