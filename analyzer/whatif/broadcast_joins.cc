#include "analyzer/whatif/broadcast_joins.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>

#include "analyzer/model/sql_plans.h"

namespace sparkprof::whatif {

namespace {

constexpr double kMinSideRatio = 8.0;

std::vector<int32_t> Sorted(std::vector<int32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

std::vector<BroadcastCandidate> FindBroadcastCandidates(const model::ApplicationModel& model,
                                                        int64_t max_small_bytes) {
  std::vector<BroadcastCandidate> out;
  const auto stages_by_accumulator = model::StagesByAccumulator(model);
  const std::vector<model::SqlPlan> plans = model::BuildSqlPlans(model, stages_by_accumulator);
  for (const model::SqlPlan& plan : plans) {
    std::unordered_map<int64_t, const model::SqlMetric*> metric_by_id;
    for (const model::SqlMetric& metric : plan.sql().metrics) {
      metric_by_id[metric.accumulator_id] = &metric;
    }
    // The stages whose accumulables carry the node's metric `name`.
    auto stages_of_metric = [&](int32_t node, std::string_view name) {
      std::vector<int32_t> stages;
      for (int64_t id : plan.node(node).metric_ids) {
        auto metric = metric_by_id.find(id);
        if (metric == metric_by_id.end() || metric->second->name != name) continue;
        auto found = stages_by_accumulator.find(id);
        if (found != stages_by_accumulator.end()) {
          stages.insert(stages.end(), found->second.begin(), found->second.end());
        }
      }
      return Sorted(std::move(stages));
    };
    auto is_exchange = [&](int32_t n) {
      return plan.Kind(n) == "Exchange" || plan.Kind(n) == "ShuffleExchange";
    };
    auto is_join = [&](int32_t n) { return model::IsJoin(plan.Kind(n)); };
    for (int32_t join = 0; join < static_cast<int32_t>(plan.nodes().size()); ++join) {
      const std::string_view kind = plan.Kind(join);
      if (kind != "SortMergeJoin" && kind != "ShuffledHashJoin") continue;
      const std::vector<int32_t>& children = plan.children(join);
      if (children.size() != 2) continue;
      int32_t exchange[2];
      int64_t bytes[2];
      bool usable = true;
      for (int side = 0; side < 2 && usable; ++side) {
        exchange[side] = is_exchange(children[side])
                             ? children[side]
                             : plan.FindBelow(children[side], is_exchange, is_join);
        bytes[side] = exchange[side] >= 0 ? plan.Metric(exchange[side], "data size") : -1;
        usable = bytes[side] >= 0;
      }
      if (!usable) continue;
      const int small = bytes[0] <= bytes[1] ? 0 : 1;
      const int large = 1 - small;
      const model::BroadcastableSides can =
          model::BroadcastableSidesOf(plan.node(join).simple_string);
      if (!(small == 0 ? can.left : can.right)) continue;
      if (bytes[small] > max_small_bytes) continue;
      if (static_cast<double>(bytes[large]) <
          kMinSideRatio * static_cast<double>(std::max<int64_t>(bytes[small], 1))) {
        continue;
      }
      BroadcastCandidate c;
      c.execution_id = plan.sql().execution_id;
      c.join_node = join;
      c.small_bytes = bytes[small];
      c.large_bytes = bytes[large];
      c.large_map_stages = stages_of_metric(exchange[large], "shuffle records written");
      c.small_map_stages = stages_of_metric(exchange[small], "shuffle records written");
      c.join_stages = plan.Stages(join);
      // A stage can show up on both sides only through a plan we misread: leave such joins.
      bool overlap = c.join_stages.empty() || c.large_map_stages.empty();
      for (int32_t s : c.join_stages) {
        overlap = overlap ||
                  std::binary_search(c.large_map_stages.begin(), c.large_map_stages.end(), s) ||
                  std::binary_search(c.small_map_stages.begin(), c.small_map_stages.end(), s);
      }
      if (overlap) continue;
      for (int side = 0; side < 2; ++side) {
        for (int32_t n = children[side]; n >= 0;) {
          if (plan.Kind(n) == "Sort") {
            c.sort_ms += std::max<int64_t>(plan.Metric(n, "sort time"), 0);
          }
          if (is_exchange(n)) break;
          const int32_t next = plan.FindBelow(
              n, [&](int32_t m) { return plan.Kind(m) == "Sort" || is_exchange(m); }, is_join);
          n = next;
        }
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace sparkprof::whatif
