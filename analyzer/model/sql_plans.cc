#include "analyzer/model/sql_plans.h"

#include <algorithm>

namespace sparkprof::model {

SqlPlan::SqlPlan(const model::SqlExecution& sql,
                 const std::unordered_map<int64_t, std::vector<int32_t>>& stages_by_accumulator)
    : sql_(&sql), stages_by_accumulator_(&stages_by_accumulator) {
  for (const model::SqlMetric& metric : sql.metrics) metric_by_id_[metric.accumulator_id] = &metric;
  children_.resize(sql.plan.size());
  for (size_t i = 0; i < sql.plan.size(); ++i) {
    const int32_t parent = sql.plan[i].parent;
    if (parent >= 0 && static_cast<size_t>(parent) < i) {
      children_[parent].push_back(static_cast<int32_t>(i));
    }
  }
}

std::string_view SqlPlan::Kind(int32_t index) const {
  std::string_view name = node(index).name;
  return name.substr(0, name.find(' '));
}

bool SqlPlan::HasMetric(int32_t index, std::string_view name) const {
  for (int64_t id : node(index).metric_ids) {
    auto found = metric_by_id_.find(id);
    if (found != metric_by_id_.end() && found->second->name == name) return true;
  }
  return false;
}

int64_t SqlPlan::Metric(int32_t index, std::string_view name) const {
  for (int64_t id : node(index).metric_ids) {
    auto found = metric_by_id_.find(id);
    if (found == metric_by_id_.end() || found->second->name != name) continue;
    return found->second->has_value ? found->second->value : -1;
  }
  return -1;
}

std::vector<int32_t> SqlPlan::Stages(int32_t index) const {
  std::vector<int32_t> out;
  for (int64_t id : node(index).metric_ids) {
    auto found = stages_by_accumulator_->find(id);
    if (found == stages_by_accumulator_->end()) continue;
    out.insert(out.end(), found->second.begin(), found->second.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int32_t SqlPlan::FindBelow(int32_t index, const std::function<bool(int32_t)>& match,
                           const std::function<bool(int32_t)>& stop) const {
  std::vector<int32_t> pending(children_[index].rbegin(), children_[index].rend());
  while (!pending.empty()) {
    const int32_t current = pending.back();
    pending.pop_back();
    if (match(current)) return current;
    if (stop && stop(current)) continue;
    pending.insert(pending.end(), children_[current].rbegin(), children_[current].rend());
  }
  return -1;
}

int64_t SqlPlan::OutputRows(int32_t index) const {
  const int64_t own = Metric(index, "number of output rows");
  if (own >= 0) return own;
  const int32_t below =
      FindBelow(index, [&](int32_t n) { return Metric(n, "number of output rows") >= 0; });
  return below >= 0 ? Metric(below, "number of output rows") : -1;
}

std::vector<SqlPlan> BuildSqlPlans(
    const ApplicationModel& model,
    const std::unordered_map<int64_t, std::vector<int32_t>>& stages_by_accumulator) {
  std::vector<SqlPlan> plans;
  for (const auto& [id, sql] : model.sql_executions) {
    if (!sql.plan.empty()) plans.emplace_back(sql, stages_by_accumulator);
  }
  return plans;
}

std::unordered_map<int64_t, std::vector<int32_t>> StagesByAccumulator(
    const ApplicationModel& model) {
  std::unordered_map<int64_t, std::vector<int32_t>> out;
  for (const auto& [key, stage] : model.stages) {
    for (const auto& [id, value] : stage.accumulables) {
      if (!value.is_sql) continue;
      std::vector<int32_t>& stages = out[id];
      if (stages.empty() || stages.back() != stage.stage_id) stages.push_back(stage.stage_id);
    }
  }
  return out;
}

bool IsJoin(std::string_view kind) {
  for (std::string_view join : {"SortMergeJoin", "ShuffledHashJoin", "BroadcastHashJoin",
                                "BroadcastNestedLoopJoin", "CartesianProduct"}) {
    if (kind.size() >= join.size() && kind.substr(kind.size() - join.size()) == join) return true;
  }
  return false;
}

BroadcastableSides BroadcastableSidesOf(const std::string& simple) {
  auto has = [&](const char* type) { return simple.find(type) != std::string::npos; };
  if (has(", FullOuter")) return {false, false};
  if (has(", LeftOuter") || has(", LeftSemi") || has(", LeftAnti") || has(", ExistenceJoin")) {
    return {false, true};
  }
  if (has(", RightOuter")) return {true, false};
  return {true, true};  // Inner, Cross
}

}  // namespace sparkprof::model
