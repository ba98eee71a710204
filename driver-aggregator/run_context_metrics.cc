#include "driver-aggregator/run_context_metrics.h"

#include <cctype>

namespace sparkprof::driver {
namespace {

constexpr size_t kMaxLabelBytes = 200;

}  // namespace

std::string LabelText(std::string_view value) {
  std::string out;
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) continue;
    out.push_back(c);
  }
  if (out.size() > kMaxLabelBytes) {
    size_t cut = kMaxLabelBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  return out;
}

namespace {

std::string Property(const std::vector<std::pair<std::string, std::string>>& properties,
                     const char* key) {
  for (const auto& [name, value] : properties) {
    if (name == key) return value;
  }
  return {};
}

}  // namespace

std::string TraceIdOf(const std::string& traceparent) {
  // version(2)-trace id(32)-parent id(16)-flags(2)
  if (traceparent.size() < 55 || traceparent[2] != '-' || traceparent[35] != '-') return {};
  std::string id = traceparent.substr(3, 32);
  bool nonzero = false;
  for (char& c : id) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return {};
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    nonzero |= c != '0';
  }
  return nonzero ? id : std::string();
}

AirflowContext ReadAirflowContext(
    const std::vector<std::pair<std::string, std::string>>& properties,
    const std::function<const char*(const char*)>& getenv) {
  auto read = [&](const char* key, const char* variable) {
    std::string value = Property(properties, key);
    if (value.empty()) {
      const char* env = getenv(variable);
      if (env != nullptr) value = env;
    }
    return LabelText(value);
  };
  AirflowContext context;
  context.dag_id = read("spark.sparkprof.airflow.dagId", "AIRFLOW_CTX_DAG_ID");
  context.task_id = read("spark.sparkprof.airflow.taskId", "AIRFLOW_CTX_TASK_ID");
  context.run_id = read("spark.sparkprof.airflow.runId", "AIRFLOW_CTX_DAG_RUN_ID");
  context.try_number = read("spark.sparkprof.airflow.tryNumber", "AIRFLOW_CTX_TRY_NUMBER");
  std::string traceparent = Property(properties, "spark.sparkprof.otel.traceparent");
  if (traceparent.empty()) {
    const char* env = getenv("TRACEPARENT");
    if (env != nullptr) traceparent = env;
  }
  context.trace_id = TraceIdOf(traceparent);
  return context;
}

Status RunContextMetrics::Register(metrics::PrometheusRegistry& registry) {
  SPARKPROF_ASSIGN_OR_RETURN(
      active_, registry.AddGauge("spark_phase_active",
                                 "1 for the phase that took most of the wall time since the "
                                 "previous refresh (resource_wait, driver_only, compute, shuffle, "
                                 "io_write, gc, idle_slots), 0 for the others."));
  SPARKPROF_ASSIGN_OR_RETURN(
      start_, registry.AddGauge("spark_phase_start_timestamp_seconds",
                                "When the phase was first seen growing (epoch seconds, at the "
                                "live refresh's resolution); absent until then."));
  SPARKPROF_ASSIGN_OR_RETURN(
      end_, registry.AddGauge("spark_phase_end_timestamp_seconds",
                              "When the phase was last seen growing (epoch seconds, at the live "
                              "refresh's resolution); absent until it started."));
  for (const char* phase : kPhaseNames) active_->Add({{"phase", phase}});
  SPARKPROF_ASSIGN_OR_RETURN(
      airflow_,
      registry.AddGauge("spark_airflow_info",
                        "1, labelled with the Airflow DAG, task, run, try and OpenTelemetry trace "
                        "id that launched this application (spark.sparkprof.airflow.* or "
                        "AIRFLOW_CTX_*, TRACEPARENT); absent outside Airflow."));
  return Status::Ok();
}

void RunContextMetrics::UpdatePhases(const diagnosis::PhaseBreakdown& phases,
                                     int64_t model_end_ms) {
  if (active_ == nullptr) return;
  const std::array<int64_t, diagnosis::kPhaseCount> now = PhaseMs(phases);
  const int64_t interval_start_ms =
      previous_end_ms_ >= 0 ? previous_end_ms_ : model_end_ms - phases.wall_ms;
  int best = -1;
  int64_t best_growth = 0;
  for (size_t i = 0; i < now.size(); ++i) {
    const int64_t growth = now[i] - previous_ms_[i];
    if (growth <= 0) continue;
    if (growth > best_growth) {
      best_growth = growth;
      best = static_cast<int>(i);
    }
    if (!started_[i]) {
      started_[i] = true;
      start_->Add({{"phase", kPhaseNames[i]}}).Set(static_cast<double>(interval_start_ms) / 1000.0);
    }
    end_->Add({{"phase", kPhaseNames[i]}}).Set(static_cast<double>(model_end_ms) / 1000.0);
  }
  if (best >= 0) {  // no growth (no time passed): the previous state holds
    for (size_t i = 0; i < now.size(); ++i) {
      active_->Add({{"phase", kPhaseNames[i]}}).Set(static_cast<int>(i) == best ? 1 : 0);
    }
  }
  previous_ms_ = now;
  previous_end_ms_ = model_end_ms;
}

void RunContextMetrics::UpdateAirflow(const AirflowContext& context) {
  if (airflow_ == nullptr || airflow_set_ || context.empty()) return;
  airflow_set_ = true;
  airflow_
      ->Add({{"dag_id", context.dag_id},
             {"task_id", context.task_id},
             {"run_id", context.run_id},
             {"try_number", context.try_number},
             {"trace_id", context.trace_id}})
      .Set(1);
}

}  // namespace sparkprof::driver
