// SQL physical plans as the plan rules read them: each execution's final plan tree with its
// metric values, each node's children, and the stages that ran each node (a node's SQL metrics
// appear in the accumulables of the stages whose tasks updated them). Built once per diagnosis.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/model/application_model.h"

namespace sparkprof::model {

class SqlPlan {
 public:
  SqlPlan(const model::SqlExecution& sql,
          const std::unordered_map<int64_t, std::vector<int32_t>>& stages_by_accumulator);

  const model::SqlExecution& sql() const { return *sql_; }
  const std::vector<eventlog::PlanNode>& nodes() const { return sql_->plan; }
  const eventlog::PlanNode& node(int32_t index) const { return sql_->plan[index]; }
  const std::vector<int32_t>& children(int32_t index) const { return children_[index]; }
  // The node's kind: its name up to the first space ("Scan parquet db.t" -> "Scan").
  std::string_view Kind(int32_t index) const;
  // The value of the node's metric `name` ("number of output rows", "data size", ...), or -1
  // when the node has no such metric or Spark never reported a value for it.
  int64_t Metric(int32_t index, std::string_view name) const;
  bool HasMetric(int32_t index, std::string_view name) const;
  // Ids of the stages that ran the node (sorted, unique); empty for driver-side nodes.
  std::vector<int32_t> Stages(int32_t index) const;
  // The first node in pre-order below `index` (itself excluded) for which `match` holds and
  // which is not below a node for which `stop` holds; -1 when none.
  int32_t FindBelow(int32_t index, const std::function<bool(int32_t)>& match,
                    const std::function<bool(int32_t)>& stop = nullptr) const;
  // Rows a subtree produced: the "number of output rows" of the first node in it (itself
  // included, pre-order) that reports one; -1 when none does.
  int64_t OutputRows(int32_t index) const;

 private:
  const model::SqlExecution* sql_;
  const std::unordered_map<int64_t, std::vector<int32_t>>* stages_by_accumulator_;
  std::unordered_map<int64_t, const model::SqlMetric*> metric_by_id_;
  std::vector<std::vector<int32_t>> children_;
};

// Every SQL execution with a plan. `stages_by_accumulator` must outlive the plans.
std::vector<SqlPlan> BuildSqlPlans(
    const ApplicationModel& model,
    const std::unordered_map<int64_t, std::vector<int32_t>>& stages_by_accumulator);

// Accumulator id -> ids of the stages whose StageCompleted accumulables carry it.
std::unordered_map<int64_t, std::vector<int32_t>> StagesByAccumulator(
    const ApplicationModel& model);

// Join nodes: "SortMergeJoin", "ShuffledHashJoin", "BroadcastHashJoin",
// "BroadcastNestedLoopJoin", "CartesianProduct" (and Photon/GPU names ending in those).
bool IsJoin(std::string_view kind);

// Which inputs of a join Spark may broadcast, from the join type in its simpleString: both for
// inner and cross joins, the right one for left outer/semi/anti and existence joins, the left
// one for right outer joins, none for full outer joins.
struct BroadcastableSides {
  bool left = false;
  bool right = false;
};
BroadcastableSides BroadcastableSidesOf(const std::string& simple_string);

}  // namespace sparkprof::model
