// The what-if JSON answer (see whatif_json.h).
#include "analyzer/report/whatif_json.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "analyzer/cost/cost.h"

namespace sparkprof::report {
namespace {

// A run as it was ("actual") or as the scenario predicts it: its wall time, core-hours and the
// executors' shape.
void WriteRunShape(std::string_view key, int64_t wall_ms, double core_hours, int32_t executors,
                   int32_t cores_per_executor, int64_t executor_memory_mb, JsonWriter& out) {
  out.Key(key)
      .BeginObject()
      .Field("wall_ms", wall_ms)
      .FieldDouble("core_hours", core_hours, 6)
      .Field("executors", static_cast<int64_t>(executors))
      .Field("cores_per_executor", static_cast<int64_t>(cores_per_executor))
      .Field("executor_memory_mb", executor_memory_mb)
      .EndObject();
}

}  // namespace

void WriteWhatifJson(const Analysis& a, const whatif::Prediction& p, JsonWriter& out) {
  out.BeginObject()
      .Field("schema", kWhatifSchema)
      .Field("app_id", a.model.app_id)
      .Field("app_name", a.model.app_name);
  out.FieldArray("changes", p.changes);
  WriteRunShape("actual", p.actual_wall_ms, p.actual_core_hours, p.actual_executors,
                p.actual_cores_per_executor, p.actual_executor_memory_mb, out);
  out.Key("baseline")
      .BeginObject()
      .Field("wall_ms", p.baseline_wall_ms)
      .FieldDouble("core_hours", p.baseline_core_hours, 6)
      .EndObject();
  WriteRunShape("predicted", p.predicted_wall_ms, p.predicted_core_hours, p.predicted_executors,
                p.predicted_cores_per_executor, p.predicted_executor_memory_mb, out);
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
  out.FieldArray("assumptions", p.assumptions);
  out.EndObject();
}

}  // namespace sparkprof::report
