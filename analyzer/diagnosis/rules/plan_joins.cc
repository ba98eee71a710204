// Join rules read from the SQL plans (sql_plans.h), each naming the plan node and the SQL
// execution with the numbers of its SQL metrics:
//
// broadcast-join-missed: a SortMergeJoin/ShuffledHashJoin whose smaller input (the "data size" of
//   the shuffle exchange below it: rows as Spark holds them in memory, what a broadcast would
//   hold) is at most kMaxBroadcastBytes and at most 1/kMinSideRatio of the other side, on a join
//   type that can broadcast that side. Both sides were shuffled and sorted; a broadcast would
//   skip the large side's shuffle. Info when that saves < 0.5 s and the large side is < 100 MiB;
//   warning; critical when the large side's shuffle (write time,
//   the join stage's fetch wait and the sort) is >= 25% of the run's task time.
// broadcast-too-large: a BroadcastExchange whose data size is >= 16 MiB and >= 10% of the smaller
//   of driver and executor heap (the driver collects and builds it, every executor holds a copy);
//   critical at >= 30%.
// nested-loop-join: BroadcastNestedLoopJoin / CartesianProduct producing >= 1M rows or holding
//   >= 10% of the task time: every row of one side is compared with every row of the other.
// exploding-join: an equi-join whose output rows are >= 10x its larger input and >= 1M: duplicate
//   keys multiply rows (a many-to-many join).
// Thresholds are ours: no other tool reads joins from the plan metrics (analyzer-facts.md).
#include <algorithm>
#include <cmath>
#include <set>

#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kMaxBroadcastBytes = 256 * kMiB;
constexpr double kMinSideRatio = 8.0;
constexpr int64_t kMinTooLargeBytes = 16 * kMiB;
constexpr double kTooLargeWarning = 0.10;
constexpr double kTooLargeCritical = 0.30;
constexpr int64_t kManyRows = 1'000'000;
constexpr double kExplodeRatio = 10.0;
constexpr int64_t kMinSavingMs = 500;  // below (and a small shuffle): info
constexpr int64_t kMinWastedShuffleBytes = 100 * kMiB;

// Task run time and wall span of the given stages (all attempts).
struct StageTime {
  int64_t run_ms = 0;
  int64_t fetch_wait_ms = 0;
  int64_t wall_ms = 0;
};
StageTime TimeOf(const DiagnosisInput& input, const std::vector<int32_t>& stage_ids) {
  StageTime out;
  for (const StageStats& s : input.stages) {
    if (std::find(stage_ids.begin(), stage_ids.end(), s.stage_id) == stage_ids.end()) continue;
    out.run_ms += s.run_time_ms;
    out.fetch_wait_ms += s.fetch_wait_ms;
    out.wall_ms += std::max<int64_t>(s.task_span_ms, 0);
  }
  return out;
}

int64_t TotalRunMs(const DiagnosisInput& input) {
  int64_t total = 0;
  for (const StageStats& s : input.stages) total += s.run_time_ms;
  return std::max<int64_t>(total, 1);
}

std::string Where(const SqlPlan& plan, int32_t node) {
  return "SQL execution " + std::to_string(plan.sql().execution_id) + ", plan node " +
         std::to_string(node) + " " + plan.node(node).name;
}

std::vector<int32_t> Union(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

void BroadcastJoinMissed(const DiagnosisInput& input, const SqlPlan& plan, int32_t join,
                         std::vector<Finding>& out) {
  const auto& children = plan.children(join);
  if (children.size() != 2) return;
  auto is_exchange = [&](int32_t n) {
    return plan.Kind(n) == "Exchange" || plan.Kind(n) == "ShuffleExchange";
  };
  auto stop_at_join = [&](int32_t n) { return IsJoin(plan.Kind(n)); };
  int32_t exchange[2];
  int64_t bytes[2];
  for (int side = 0; side < 2; ++side) {
    exchange[side] = is_exchange(children[side])
                         ? children[side]
                         : plan.FindBelow(children[side], is_exchange, stop_at_join);
    if (exchange[side] < 0) return;
    bytes[side] = plan.Metric(exchange[side], "data size");
    if (bytes[side] < 0) return;
  }
  const BroadcastableSides can = BroadcastableSidesOf(plan.node(join).simple_string);
  const int small = bytes[0] <= bytes[1] ? 0 : 1;
  const int large = 1 - small;
  if (!(small == 0 ? can.left : can.right)) return;
  if (bytes[small] > kMaxBroadcastBytes) return;
  if (static_cast<double>(bytes[large]) < kMinSideRatio * static_cast<double>(bytes[small])) {
    return;
  }
  // What the shuffle of the large side cost: its map-side write, the join stage's fetch wait and
  // the sort of the large side.
  const int64_t write_ns = std::max<int64_t>(plan.Metric(exchange[large], "shuffle write time"), 0);
  const int32_t sort =
      plan.Kind(children[large]) == "Sort"
          ? children[large]
          : plan.FindBelow(
                children[large], [&](int32_t n) { return plan.Kind(n) == "Sort"; }, is_exchange);
  const int64_t sort_ms = sort >= 0 ? std::max<int64_t>(plan.Metric(sort, "sort time"), 0) : 0;
  const std::vector<int32_t> join_stages = plan.Stages(join);
  const StageTime join_time = TimeOf(input, join_stages);
  const int64_t shuffle_task_ms = write_ns / 1'000'000 + join_time.fetch_wait_ms + sort_ms;
  const double share = static_cast<double>(shuffle_task_ms) / TotalRunMs(input);

  Finding f = NewFinding("broadcast-join-missed");
  const int64_t saving = shuffle_task_ms / input.slots();
  // Worth a warning when it saves time here or when it shuffles a lot for nothing (on a real
  // cluster that is network and disk).
  f.severity = share >= 0.25 ? Severity::kCritical
               : (saving >= kMinSavingMs || bytes[large] >= kMinWastedShuffleBytes)
                   ? Severity::kWarning
                   : Severity::kInfo;
  f.confidence = {ConfidenceLevel::kHigh,
                  "both join inputs' sizes are Spark's own shuffle metrics (data size) for this "
                  "plan node; the saving assumes the broadcast costs less than the shuffle it "
                  "replaces, true for a side this much smaller"};
  f.stage_ids = Union(join_stages, plan.Stages(exchange[large]));
  const std::string threshold = input.Property("spark.sql.autoBroadcastJoinThreshold", "10485760");
  const int64_t threshold_bytes = threshold == "-1" ? -1 : ParseSizeMiB(threshold, 10) * kMiB;
  f.title = "Sort-merge join in SQL execution " + std::to_string(plan.sql().execution_id) +
            " shuffled both sides; its " + HumanBytes(bytes[small]) + " side fits a broadcast";
  f.evidence = {
      {"sql_execution_id", static_cast<double>(plan.sql().execution_id), "count"},
      {"plan_node", static_cast<double>(join), "count"},
      {"small_side_bytes", static_cast<double>(bytes[small]), "bytes"},
      {"large_side_bytes", static_cast<double>(bytes[large]), "bytes"},
      {"large_side_shuffle_write_ms", WholeMs(write_ns), "ms"},
      {"join_fetch_wait_ms", static_cast<double>(join_time.fetch_wait_ms), "ms"},
      {"sort_ms", static_cast<double>(sort_ms), "ms"},
      {"share_of_task_time", share, "ratio"},
  };
  f.explanation =
      Where(plan, join) + " joined a " + HumanBytes(bytes[small]) + " input with a " +
      HumanBytes(bytes[large]) +
      " one by shuffling and sorting both. A broadcast hash join would " +
      "send the small side to every executor once and read the large side where it lies: no " +
      "shuffle write of " + HumanBytes(bytes[large]) +
      ", no fetch, no sort. The shuffle and sort " + "cost " + HumanDurationMs(shuffle_task_ms) +
      " of task time here (" + Fixed(100 * share, 0) +
      "% of the run's). spark.sql.autoBroadcastJoinThreshold is " +
      (threshold == "-1" ? std::string("-1 (broadcast joins off)") : HumanBytes(threshold_bytes)) +
      (threshold_bytes >= bytes[small]
           ? ", above the small side's size: the optimizer's estimate for that side was larger "
             "(missing or stale table statistics), so only a hint or fresh statistics help."
           : ".");
  const int64_t wanted_mib = std::max<int64_t>(
      10, static_cast<int64_t>(std::ceil(1.5 * static_cast<double>(bytes[small]) / kMiB)));
  if (threshold_bytes < bytes[small]) {
    f.recommendations.push_back(
        {"spark.sql.autoBroadcastJoinThreshold", std::to_string(wanted_mib) + "m",
         "1.5x the small side's " + HumanBytes(bytes[small]) +
             "; with adaptive execution on, the join is switched to a broadcast at run time "
             "once the shuffle shows the real size"});
  }
  f.recommendations.push_back(
      {"", "broadcast the small side explicitly: broadcast(df) or /*+ BROADCAST(t) */",
       "a hint works whatever the statistics say; the side is " + HumanBytes(bytes[small])});
  f.impact.time_saved_ms_low = saving / 2;
  f.impact.time_saved_ms_high = saving;
  f.impact.core_hours_saved_low = CoreHours(shuffle_task_ms / 2, 1);
  f.impact.core_hours_saved_high = CoreHours(shuffle_task_ms, 1);
  f.impact.method =
      "the large side's shuffle write time, the join stage's fetch wait and the sort time (task "
      "time spread over the slots; high), half of it (low) for the broadcast's own cost";
  // The what-if replay of the run with this join broadcast (sparkprof whatif --fix broadcast):
  // the join stage goes, its tasks' time included, not only the shuffle metrics above.
  whatif::Scenario fix;
  fix.fix_broadcast = true;
  fix.broadcast_joins = {{plan.sql().execution_id, join}};
  SimulatedSaving simulated;
  if (Simulated(input, fix, simulated) && simulated.saved_ms > saving) {
    f.impact.time_saved_ms_high = simulated.saved_ms;
    f.impact.time_saved_ms_low = simulated.saved_ms / 2;
    f.impact.core_hours_saved_high =
        std::max(simulated.core_hours_saved, CoreHours(shuffle_task_ms, 1));
    f.impact.core_hours_saved_low = f.impact.core_hours_saved_high / 2;
    f.impact.method =
        "simulated (sparkprof whatif --fix broadcast, this join only): the run replayed with the "
        "join stage removed and the small side broadcast saves " +
        HumanDurationMs(simulated.saved_ms) +
        " of wall time (high; the model reproduces this run within " +
        Fixed(100 * simulated.self_prediction_error, 1) +
        "%), half of it (low: the broadcast's own cost and a slower probe)";
  }
  f.cost_ms = std::max(saving, f.impact.time_saved_ms_high);
  out.push_back(std::move(f));
}

void BroadcastTooLarge(const DiagnosisInput& input, const SqlPlan& plan, int32_t exchange,
                       std::vector<Finding>& out) {
  const int64_t bytes = plan.Metric(exchange, "data size");
  if (bytes < kMinTooLargeBytes) return;
  const int64_t executor_mib = ParseSizeMiB(input.Property(input.TaskHeapKey(), "1g"), 1024);
  const int64_t driver_mib = ParseSizeMiB(input.Property("spark.driver.memory", "1g"), 1024);
  const int64_t heap_bytes = std::min(executor_mib, driver_mib) * kMiB;
  const double share = static_cast<double>(bytes) / static_cast<double>(heap_bytes);
  if (share < kTooLargeWarning) return;
  const int64_t collect_ms = std::max<int64_t>(plan.Metric(exchange, "time to collect"), 0);
  const int64_t build_ms = std::max<int64_t>(plan.Metric(exchange, "time to build"), 0);
  const int64_t send_ms = std::max<int64_t>(plan.Metric(exchange, "time to broadcast"), 0);
  // The join that uses it: the nearest join above the exchange.
  int32_t join = plan.node(exchange).parent;
  while (join >= 0 && !IsJoin(plan.Kind(join))) join = plan.node(join).parent;

  Finding f = NewFinding("broadcast-too-large");
  f.severity = share >= kTooLargeCritical ? Severity::kCritical : Severity::kWarning;
  f.confidence = {ConfidenceLevel::kHigh,
                  "the broadcast's size and its collect/build/broadcast times are the "
                  "BroadcastExchange's own SQL metrics; the heap sizes are this run's settings"};
  if (join >= 0) f.stage_ids = plan.Stages(join);
  f.title = "Broadcast of " + HumanBytes(bytes) + " in SQL execution " +
            std::to_string(plan.sql().execution_id) + " (" + Fixed(100 * share, 0) +
            "% of the smaller heap)";
  f.evidence = {
      {"sql_execution_id", static_cast<double>(plan.sql().execution_id), "count"},
      {"plan_node", static_cast<double>(exchange), "count"},
      {"broadcast_bytes", static_cast<double>(bytes), "bytes"},
      {"heap_bytes", static_cast<double>(heap_bytes), "bytes"},
      {"broadcast_over_heap", share, "ratio"},
      {"collect_ms", static_cast<double>(collect_ms), "ms"},
      {"build_ms", static_cast<double>(build_ms), "ms"},
      {"broadcast_ms", static_cast<double>(send_ms), "ms"},
  };
  f.explanation = Where(plan, exchange) + " broadcast " + HumanBytes(bytes) +
                  ". The driver collected it (" + HumanDurationMs(collect_ms) +
                  "), built the hash table (" + HumanDurationMs(build_ms) + ") and sent it (" +
                  HumanDurationMs(send_ms) +
                  "); every executor keeps a copy in its heap. That is " + Fixed(100 * share, 0) +
                  "% of the smaller of the driver's (" + std::to_string(driver_mib) +
                  " MiB) and the executors' (" + std::to_string(executor_mib) +
                  " MiB) heap: memory pressure, GC and out-of-memory failures on both sides.";
  const std::string threshold = input.Property("spark.sql.autoBroadcastJoinThreshold", "10485760");
  f.recommendations.push_back(
      {"spark.sql.autoBroadcastJoinThreshold",
       std::to_string(std::max<int64_t>(1, bytes / kMiB / 4)) + "m",
       "a quarter of this broadcast: sides this large are shuffled instead (the threshold is " +
           threshold + " now); remove a broadcast hint on that side if the query has one"});
  f.impact.time_saved_ms_low = 0;
  f.impact.time_saved_ms_high = collect_ms + build_ms + send_ms;
  f.impact.method =
      "up to the driver's collect, build and broadcast time; the gain in GC and avoided "
      "out-of-memory failures is not estimated";
  f.cost_ms = f.impact.time_saved_ms_high;
  out.push_back(std::move(f));
}

void NestedLoopOrExplodingJoin(const DiagnosisInput& input, const SqlPlan& plan, int32_t join,
                               std::vector<Finding>& out) {
  const std::string_view kind = plan.Kind(join);
  const bool nested = kind.find("NestedLoopJoin") != std::string_view::npos ||
                      kind.find("CartesianProduct") != std::string_view::npos;
  const int64_t rows = plan.Metric(join, "number of output rows");
  int64_t input_rows[2] = {-1, -1};
  const auto& children = plan.children(join);
  for (size_t i = 0; i < children.size() && i < 2; ++i)
    input_rows[i] = plan.OutputRows(children[i]);
  const int64_t larger_input = std::max(input_rows[0], input_rows[1]);
  const std::vector<int32_t> stages = plan.Stages(join);
  const StageTime time = TimeOf(input, stages);
  const double share = static_cast<double>(time.run_ms) / TotalRunMs(input);
  if (nested) {
    if (rows < kManyRows && share < 0.10) return;
  } else {
    if (rows < kManyRows || larger_input <= 0 ||
        static_cast<double>(rows) < kExplodeRatio * static_cast<double>(larger_input)) {
      return;
    }
  }
  Finding f = NewFinding(nested ? "nested-loop-join" : "exploding-join");
  f.severity = share >= 0.5 ? Severity::kCritical : Severity::kWarning;
  f.confidence = {ConfidenceLevel::kHigh,
                  "the join node's output rows and its inputs' rows are Spark's SQL metrics for "
                  "this plan"};
  f.stage_ids = stages;
  const std::string rows_text = std::to_string(rows);
  f.evidence = {
      {"sql_execution_id", static_cast<double>(plan.sql().execution_id), "count"},
      {"plan_node", static_cast<double>(join), "count"},
      {"output_rows", static_cast<double>(rows), "count"},
      {"left_input_rows", static_cast<double>(input_rows[0]), "count"},
      {"right_input_rows", static_cast<double>(input_rows[1]), "count"},
      {"join_stage_task_ms", static_cast<double>(time.run_ms), "ms"},
      {"share_of_task_time", share, "ratio"},
  };
  const std::string inputs = std::to_string(input_rows[0]) + " x " + std::to_string(input_rows[1]);
  if (nested) {
    f.title = std::string(kind) + " in SQL execution " + std::to_string(plan.sql().execution_id) +
              ": " + inputs + " rows compared pairwise";
    f.explanation = Where(plan, join) +
                    " has no equality condition Spark can hash on, so it compares every "
                    "row of one input with every row of the other (" +
                    inputs + " input rows, " + rows_text + " output rows). Its stages took " +
                    HumanDurationMs(time.run_ms) + " of task time (" + Fixed(100 * share, 0) +
                    "% of the run's). The cost grows with the product of the inputs.";
    f.recommendations.push_back(
        {"",
         "give the join an equality condition (a key, or a bucket of a range condition: "
         "join on floor(x / width) and filter the range after)",
         "with an equi-join Spark hashes or sorts once instead of comparing all pairs"});
    f.recommendations.push_back(
        {"", "if a cross join is intended, filter and project both sides before it",
         "the work is the product of the two input sizes"});
  } else {
    const double ratio = static_cast<double>(rows) / static_cast<double>(larger_input);
    f.title = "Exploding join in SQL execution " + std::to_string(plan.sql().execution_id) + ": " +
              Fixed(ratio) + "x more rows out than in";
    f.evidence.push_back({"output_over_larger_input", ratio, "ratio"});
    f.explanation =
        Where(plan, join) + " produced " + rows_text + " rows from inputs of " + inputs +
        " rows: " + Fixed(ratio) + "x its larger input. Keys that repeat on both sides multiply " +
        "(a many-to-many join); every later operator pays for the extra rows. Its stages took " +
        HumanDurationMs(time.run_ms) + " of task time.";
    f.recommendations.push_back(
        {"",
         "make the join key unique on one side (deduplicate or aggregate before the join), "
         "or add the missing key column",
         "a key repeated n times on one side and m on the other yields n x m rows"});
  }
  f.impact.time_saved_ms_low = 0;
  f.impact.time_saved_ms_high = time.wall_ms;
  f.impact.core_hours_saved_high = CoreHours(time.run_ms, 1);
  f.impact.method = "up to the join stages' run time (high); how much remains depends on the fix";
  f.cost_ms = time.wall_ms / 2;
  out.push_back(std::move(f));
}

}  // namespace

void PlanJoins(const DiagnosisInput& input, std::vector<Finding>& out) {
  for (const SqlPlan& plan : input.plans) {
    for (int32_t n = 0; n < static_cast<int32_t>(plan.nodes().size()); ++n) {
      const std::string_view kind = plan.Kind(n);
      if (kind == "SortMergeJoin" || kind == "ShuffledHashJoin") {
        BroadcastJoinMissed(input, plan, n, out);
      }
      if (kind == "BroadcastExchange") BroadcastTooLarge(input, plan, n, out);
      if (IsJoin(kind)) NestedLoopOrExplodingJoin(input, plan, n, out);
    }
  }
}

}  // namespace sparkprof::diagnosis::rules
