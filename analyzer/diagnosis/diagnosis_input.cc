#include "analyzer/diagnosis/diagnosis_input.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <system_error>

#include "analyzer/profile/spans.h"

namespace sparkprof::diagnosis {

void MakeDiagnosisInput(const model::ApplicationModel& model, DiagnosisInput& input,
                        const whatif::LazySimulator* simulator,
                        const profile::ApplicationProfile* profile,
                        const executor_logs::ExecutorLogs* logs) {
  input.model = &model;
  input.profile = profile;
  input.logs = logs;
  if (simulator == nullptr) {
    input.own_simulator = std::make_unique<whatif::LazySimulator>(model);
    simulator = input.own_simulator.get();
  }
  input.simulator = simulator;
  input.stages = ComputeStageStats(model);
  input.phases = ComputePhaseBreakdown(model, input.stages);
  input.stages_by_accumulator = StagesByAccumulator(model);
  input.plans = BuildSqlPlans(model, input.stages_by_accumulator);
  if (profile != nullptr) input.task_decompositions = DecomposeTasks(model, *profile);
}

ClusterManager DiagnosisInput::Manager() const { return ClusterManagerOf(*model); }

std::string DiagnosisInput::SingleExecutorHost() const {
  std::string host;
  for (const model::Executor& executor : model->executors) {
    if (executor.is_driver() || executor.total_cores <= 0) continue;
    if (executor.host.empty()) return "";
    if (host.empty()) host = executor.host;
    if (executor.host != host) return "";
  }
  return host;
}

Platform DiagnosisInput::GetPlatform() const { return PlatformOf(*model); }

std::vector<NoTaskGap> NoTaskGaps(const DiagnosisInput& input) {
  std::vector<NoTaskGap> gaps;
  gaps.reserve(input.phases.no_task_spans.size());
  const auto& waits = input.phases.waiting_without_slots_spans;
  const profile::SpansMs spans = waits.empty()
                                     ? input.phases.no_task_spans
                                     : profile::SubtractSpans(input.phases.no_task_spans, waits);
  for (const auto& [from, to] : spans) gaps.push_back({to - from, from});
  return gaps;
}

NoTaskGap LongestNoTaskGap(const DiagnosisInput& input) {
  NoTaskGap longest;
  for (const NoTaskGap& gap : NoTaskGaps(input)) {
    if (gap.ms > longest.ms) longest = gap;  // the first of equal ones, as before
  }
  return longest;
}

bool Simulated(const DiagnosisInput& input, const whatif::Scenario& scenario,
               SimulatedSaving& out) {
  if (input.model->tasks.empty()) return false;
  const whatif::Prediction p = input.simulator->Get().Simulate(scenario);
  if (p.actual_wall_ms <= 0 || p.self_prediction_error > 0.25) return false;
  out.saved_ms = std::max<int64_t>(p.baseline_wall_ms - p.predicted_wall_ms, 0);
  out.self_prediction_error = p.self_prediction_error;
  out.core_hours_saved = std::max(p.baseline_core_hours - p.predicted_core_hours, 0.0);
  return true;
}

namespace {

template <typename T>
T NumberOr(const std::string* text, T fallback) {
  if (text == nullptr) return fallback;
  std::string_view view(*text);
  while (!view.empty() && std::isspace(static_cast<unsigned char>(view.front()))) {
    view.remove_prefix(1);
  }
  while (!view.empty() && std::isspace(static_cast<unsigned char>(view.back()))) {
    view.remove_suffix(1);
  }
  T value{};
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  return error == std::errc() && end == view.data() + view.size() && !view.empty() ? value
                                                                                   : fallback;
}

}  // namespace

int64_t DiagnosisInput::IntProperty(const char* key, int64_t fallback) const {
  return NumberOr<int64_t>(model->SparkProperty(key), fallback);
}

double DiagnosisInput::NumberProperty(const char* key, double fallback) const {
  return NumberOr<double>(model->SparkProperty(key), fallback);
}

bool DiagnosisInput::AqeCoalesces() const {
  // "3.5.1" → 3 and 5; what fails to read stays 0.
  const char* version = model->spark_version.c_str();
  char* end = nullptr;
  const long major = std::strtol(version, &end, 10);
  const long minor = end != version && *end == '.' ? std::strtol(end + 1, nullptr, 10) : 0;
  const bool default_on =
      model->databricks || major > 3 || (major == 3 && minor >= 2) || model->spark_version.empty();
  const std::string enabled = Property("spark.sql.adaptive.enabled", default_on ? "true" : "false");
  return enabled == "true" &&
         Property("spark.sql.adaptive.coalescePartitions.enabled", "true") == "true";
}

}  // namespace sparkprof::diagnosis
