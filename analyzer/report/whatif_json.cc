// The what-if JSON answer (see whatif_json.h).
#include "analyzer/report/whatif_json.h"

#include <cstdint>
#include <string>

#include "analyzer/cost/cost.h"

namespace sparkprof::report {

void WriteWhatifJson(const Analysis& a, const whatif::Prediction& p, JsonWriter& out) {
  out.BeginObject()
      .Field("schema", kWhatifSchema)
      .Field("app_id", a.model.app_id)
      .Field("app_name", a.model.app_name);
  out.Key("changes").BeginArray();
  for (const std::string& change : p.changes) out.String(change);
  out.EndArray();
  out.Key("actual")
      .BeginObject()
      .Field("wall_ms", p.actual_wall_ms)
      .FieldDouble("core_hours", p.actual_core_hours, 6)
      .Field("executors", static_cast<int64_t>(p.actual_executors))
      .Field("cores_per_executor", static_cast<int64_t>(p.actual_cores_per_executor))
      .Field("executor_memory_mb", p.actual_executor_memory_mb)
      .EndObject();
  out.Key("baseline")
      .BeginObject()
      .Field("wall_ms", p.baseline_wall_ms)
      .FieldDouble("core_hours", p.baseline_core_hours, 6)
      .EndObject();
  out.Key("predicted")
      .BeginObject()
      .Field("wall_ms", p.predicted_wall_ms)
      .FieldDouble("core_hours", p.predicted_core_hours, 6)
      .Field("executors", static_cast<int64_t>(p.predicted_executors))
      .Field("cores_per_executor", static_cast<int64_t>(p.predicted_cores_per_executor))
      .Field("executor_memory_mb", p.predicted_executor_memory_mb)
      .EndObject();
  out.FieldDouble("self_prediction_error", p.self_prediction_error, 4);
  const cost::ScenarioCost c = cost::PriceScenario(a.cost, p);
  out.Key("cost").BeginObject().Field("available", c.actual >= 0);
  if (c.actual >= 0) {
    out.Field("currency", a.cost.currency)
        .FieldDouble("actual", c.actual, 6)
        .FieldDouble("baseline", c.baseline, 6)
        .FieldDouble("predicted", c.predicted, 6)
        .Field("current_cluster", a.cost.current_cluster);
  } else {
    out.Field("reason", a.cost.reason);
  }
  out.EndObject();
  out.Key("stages").BeginArray();
  for (const whatif::StagePrediction& s : p.stages) {
    out.BeginObject()
        .Field("stage_id", static_cast<int64_t>(s.stage_id))
        .Field("attempt", static_cast<int64_t>(s.attempt))
        .Field("actual_ms", s.actual_ms)
        .Field("baseline_ms", s.baseline_ms)
        .Field("predicted_ms", s.predicted_ms)
        .Field("actual_tasks", s.actual_tasks)
        .Field("predicted_tasks", s.predicted_tasks)
        .Field("removed", s.removed)
        .EndObject();
  }
  out.EndArray();
  out.Key("assumptions").BeginArray();
  for (const std::string& assumption : p.assumptions) out.String(assumption);
  out.EndArray();
  out.EndObject();
}

}  // namespace sparkprof::report
