// Where the run is and who launched it, for the "Spark Job Phase Timeline" dashboard:
//   * spark_phase_active{phase}: 1 for the phase that took most of the wall time since the
//     previous refresh (the engine's phase breakdown, diagnosis/phase_breakdown.h), 0 for the
//     others: over scrapes, a state timeline (Gantt) of resource wait / compute / I/O write;
//   * spark_phase_start_timestamp_seconds{phase} / spark_phase_end_timestamp_seconds{phase}: the
//     first and last moment (epoch seconds, at refresh resolution) the phase was seen growing;
//   * spark_airflow_info{dag_id, task_id, run_id, try_number, trace_id}: 1, from the keys
//     spark.sparkprof.airflow.{dagId,taskId,runId,tryNumber} (else Airflow's AIRFLOW_CTX_*
//     environment variables of the driver) and the trace id of spark.sparkprof.otel.traceparent
//     (else the driver's TRACEPARENT). One series per application; values are cut to 200 bytes
//     of printable text.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/diagnosis/phase_breakdown.h"
#include "common/status.h"
#include "metrics/prometheus_registry.h"

namespace sparkprof::driver {

// The phases and their figures: diagnosis::kPhaseNames and diagnosis::PhaseMs.
using diagnosis::kPhaseNames;
using diagnosis::PhaseMs;

struct AirflowContext {
  std::string dag_id;
  std::string task_id;
  std::string run_id;
  std::string try_number;
  std::string trace_id;  // 32 lowercase hex digits, or empty
  bool empty() const { return dag_id.empty() && task_id.empty() && trace_id.empty(); }
};

// A label value from a string of the application (names, ids): printable ASCII and UTF-8 bytes
// kept, control characters dropped, cut to 200 bytes at a character boundary.
std::string LabelText(std::string_view value);

// From Spark properties first, then `getenv` (tests pass their own).
AirflowContext ReadAirflowContext(
    const std::vector<std::pair<std::string, std::string>>& spark_properties,
    const std::function<const char*(const char*)>& getenv);

// The trace id of a W3C traceparent ("00-<32 hex>-<16 hex>-<2 hex>"), empty when malformed or
// all zero.
std::string TraceIdOf(const std::string& traceparent);

class RunContextMetrics {
 public:
  Status Register(metrics::PrometheusRegistry& registry);
  // A snapshot's phases, the model's end (epoch ms); serialised by the caller.
  void UpdatePhases(const diagnosis::PhaseBreakdown& phases, int64_t model_end_ms);
  // Sets the info series once, when the context is not empty.
  void UpdateAirflow(const AirflowContext& context);

 private:
  prometheus::Family<prometheus::Gauge>* active_ = nullptr;
  prometheus::Family<prometheus::Gauge>* start_ = nullptr;
  prometheus::Family<prometheus::Gauge>* end_ = nullptr;
  prometheus::Family<prometheus::Gauge>* airflow_ = nullptr;
  std::array<int64_t, diagnosis::kPhaseCount> previous_ms_{};
  int64_t previous_end_ms_ = -1;
  std::array<bool, diagnosis::kPhaseCount> started_{};
  bool airflow_set_ = false;
};

}  // namespace sparkprof::driver
