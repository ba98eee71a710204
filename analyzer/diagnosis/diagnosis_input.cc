#include "analyzer/diagnosis/diagnosis_input.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sparkprof::diagnosis {

void MakeDiagnosisInput(const model::ApplicationModel& model, DiagnosisInput& input,
                        const whatif::LazySimulator* simulator,
                        const profile::ApplicationProfile* profile) {
  input.model = &model;
  input.profile = profile;
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

const char* ClusterManagerName(ClusterManager manager) {
  switch (manager) {
    case ClusterManager::kUnknown:
      return "unknown";
    case ClusterManager::kLocal:
      return "local";
    case ClusterManager::kLocalCluster:
      return "local-cluster";
    case ClusterManager::kStandalone:
      return "standalone";
    case ClusterManager::kYarn:
      return "YARN";
    case ClusterManager::kKubernetes:
      return "Kubernetes";
    case ClusterManager::kMesos:
      return "Mesos";
  }
  return "unknown";
}

const char* PlatformName(Platform platform) {
  switch (platform) {
    case Platform::kNone:
      return "";
    case Platform::kDatabricks:
      return "Databricks";
    case Platform::kEmr:
      return "EMR";
    case Platform::kDataproc:
      return "Dataproc";
  }
  return "";
}

ClusterManager DiagnosisInput::Manager() const { return ClusterManagerOf(*model); }

ClusterManager ClusterManagerOf(const model::ApplicationModel& model) {
  const std::string* set = model.SparkProperty("spark.master");
  const std::string master = set != nullptr ? *set : "";
  if (master.rfind("local-cluster", 0) == 0) return ClusterManager::kLocalCluster;
  if (master.rfind("local", 0) == 0) return ClusterManager::kLocal;
  if (master.rfind("yarn", 0) == 0) return ClusterManager::kYarn;
  if (master.rfind("k8s://", 0) == 0) return ClusterManager::kKubernetes;
  if (master.rfind("mesos://", 0) == 0) return ClusterManager::kMesos;
  if (master.rfind("spark://", 0) == 0) return ClusterManager::kStandalone;
  return ClusterManager::kUnknown;
}

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

Platform PlatformOf(const model::ApplicationModel& model) {
  if (model.databricks) return Platform::kDatabricks;
  for (const auto& [key, value] : model.spark_properties) {
    if (key.rfind("spark.databricks.", 0) == 0) return Platform::kDatabricks;
    if (key.rfind("spark.emr.", 0) == 0 || key.rfind("spark.hadoop.fs.s3.emr", 0) == 0 ||
        key == "spark.sql.emr.internal.extensions") {
      return Platform::kEmr;
    }
    if (key.rfind("spark.dataproc.", 0) == 0) return Platform::kDataproc;
  }
  return Platform::kNone;
}

std::vector<NoTaskGap> NoTaskGaps(const DiagnosisInput& input) {
  const model::ApplicationModel& m = *input.model;
  std::vector<std::pair<int64_t, int64_t>> intervals;
  for (const model::TaskAttempt& task : m.tasks) {
    if (task.launch_time_ms < 0) continue;
    intervals.push_back(
        {task.launch_time_ms,
         task.ended() ? std::max(task.finish_time_ms, task.launch_time_ms) : m.end_time_ms});
  }
  std::sort(intervals.begin(), intervals.end());
  std::vector<NoTaskGap> gaps;
  int64_t cursor = std::max(input.phases.first_slot_ms, m.start_time_ms);
  for (const auto& [launch, finish] : intervals) {
    if (launch > cursor) gaps.push_back({launch - cursor, cursor});
    cursor = std::max(cursor, finish);
  }
  if (m.end_time_ms > cursor) gaps.push_back({m.end_time_ms - cursor, cursor});
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

bool DiagnosisInput::AqeCoalesces() const {
  int major = 0, minor = 0;
  std::sscanf(model->spark_version.c_str(), "%d.%d", &major, &minor);
  const bool default_on = model->databricks || major > 3 || (major == 3 && minor >= 2) ||
                          model->spark_version.empty();
  const std::string enabled = Property("spark.sql.adaptive.enabled", default_on ? "true" : "false");
  return enabled == "true" &&
         Property("spark.sql.adaptive.coalescePartitions.enabled", "true") == "true";
}

std::string Bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

std::string Millis(int64_t millis) {
  char text[48];
  if (millis < 1000) {
    std::snprintf(text, sizeof(text), "%lld ms", static_cast<long long>(millis));
  } else if (millis < 60'000) {
    std::snprintf(text, sizeof(text), "%.1f s", millis / 1000.0);
  } else if (millis < 3'600'000) {
    std::snprintf(text, sizeof(text), "%lldm %02llds", static_cast<long long>(millis / 60'000),
                  static_cast<long long>(millis / 1000 % 60));
  } else {
    std::snprintf(text, sizeof(text), "%lldh %02lldm", static_cast<long long>(millis / 3'600'000),
                  static_cast<long long>(millis / 60'000 % 60));
  }
  return text;
}

std::string Fixed(double value, int decimals) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

int64_t ParseSizeMiB(const std::string& text, int64_t fallback) {
  // strtod takes "nan", "inf", "1e999" and hex ("0x10"): a size is none of them.
  if (text.empty() || text.find_first_of("xX") != std::string::npos) return fallback;
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(number) || number <= 0) return fallback;
  std::string suffix(end);
  while (!suffix.empty() && std::isspace(static_cast<unsigned char>(suffix.back()))) {
    suffix.pop_back();
  }
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (suffix.size() == 2 && suffix[1] == 'b' && suffix[0] != 'b') suffix.pop_back();  // "gb"
  double scale = 0;  // MiB per unit
  if (suffix.empty() || suffix == "m") scale = 1;
  else if (suffix == "b") scale = 1.0 / (1 << 20);
  else if (suffix == "k") scale = 1.0 / 1024;
  else if (suffix == "g") scale = 1024;
  else if (suffix == "t") scale = 1024.0 * 1024;
  else if (suffix == "p") scale = 1024.0 * 1024 * 1024;
  else return fallback;  // "4gx", "lots"
  const double mib = number * scale;
  if (!(mib >= 1) || mib > static_cast<double>(kMaxSizeMiB)) return fallback;
  return static_cast<int64_t>(mib);
}

}  // namespace sparkprof::diagnosis
