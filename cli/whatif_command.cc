// `sparkprof whatif LOG --set key=value ... --fix skew --fix broadcast`: the run replayed as it
// was (the self-prediction, with its error) and under the changed settings, per application.
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/report/analysis.h"
#include "analyzer/report/whatif_json.h"
#include "analyzer/source/log_source.h"
#include "analyzer/whatif/simulator.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "common/json_writer.h"

namespace sparkprof::cli {

namespace {

struct WhatifOptions {
  std::string path;
  std::vector<std::string> settings;
  std::vector<std::string> fixes;
  std::string format = "text";
  std::string output;
  CostFlags cost;
};

std::string Seconds(int64_t ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", static_cast<double>(ms) / 1000.0);
  return text;
}

std::string Percent(double ratio) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.1f%%", 100 * ratio);
  return text;
}

void WriteText(const report::Analysis& a, const whatif::Prediction& p, std::ostringstream& out) {
  out << "sparkprof whatif: " << a.model.app_name << " (" << a.model.app_id << ")\n";
  for (const std::string& change : p.changes) out << "  change: " << change << "\n";
  const double vs_actual =
      p.actual_wall_ms > 0
          ? static_cast<double>(p.predicted_wall_ms - p.actual_wall_ms) / p.actual_wall_ms
          : 0;
  const double vs_baseline =
      p.baseline_wall_ms > 0
          ? static_cast<double>(p.predicted_wall_ms - p.baseline_wall_ms) / p.baseline_wall_ms
          : 0;
  char hours[160];
  out << "  wall time   actual " << Seconds(p.actual_wall_ms) << ", replayed as run "
      << Seconds(p.baseline_wall_ms) << " (self-prediction error "
      << Percent(p.self_prediction_error).substr(1) << "), predicted "
      << Seconds(p.predicted_wall_ms) << " (" << Percent(vs_baseline) << " vs the replay, "
      << Percent(vs_actual) << " vs actual)\n";
  std::snprintf(hours, sizeof(hours), "  core-hours  actual %.3f, replayed %.3f, predicted %.3f\n",
                p.actual_core_hours, p.baseline_core_hours, p.predicted_core_hours);
  out << hours;
  const cost::ScenarioCost c = cost::PriceScenario(a.cost, p);
  if (c.actual >= 0) {
    out << "  cost        actual " << cost::Money(c.actual, a.cost.currency) << ", replayed "
        << cost::Money(c.baseline, a.cost.currency) << ", predicted "
        << cost::Money(c.predicted, a.cost.currency) << " per run (" << a.cost.current_cluster
        << "; the change priced per core-hour like the run's executors)\n";
  }
  out << "  executors   " << p.actual_executors << " x " << p.actual_cores_per_executor
      << " cores, " << p.actual_executor_memory_mb << " MiB -> " << p.predicted_executors << " x "
      << p.predicted_cores_per_executor << " cores, " << p.predicted_executor_memory_mb << " MiB\n";
  bool header = false;
  for (const whatif::StagePrediction& s : p.stages) {
    if (s.predicted_ms == s.baseline_ms && s.predicted_tasks == s.actual_tasks) continue;
    if (!header) {
      out << "  stages that change (task span: actual, replayed, predicted; tasks):\n";
      header = true;
    }
    out << "    stage " << s.stage_id << "." << s.attempt << "  " << Seconds(s.actual_ms) << ", "
        << Seconds(s.baseline_ms) << " -> ";
    if (s.removed) {
      out << "removed\n";
      continue;
    }
    out << Seconds(s.predicted_ms) << "  " << s.actual_tasks << " -> " << s.predicted_tasks
        << " tasks\n";
  }
  out << "  assumptions:\n";
  for (const std::string& assumption : p.assumptions) out << "    - " << assumption << "\n";
}

int RunWhatif(WhatifOptions& options) {
  whatif::Scenario scenario;
  std::string error;
  if (!ResolveCostOptions(options.cost, error)) {
    std::fprintf(stderr, "sparkprof whatif: %s\n", error.c_str());
    return kExitUsage;
  }
  options.cost.options.frontier = false;  // one scenario, not the right-sizing frontier
  for (const std::string& setting : options.settings) {
    if (!whatif::ApplySetting(setting, scenario, error)) {
      std::fprintf(stderr, "sparkprof whatif: %s\n", error.c_str());
      return kExitUsage;
    }
  }
  for (const std::string& fix : options.fixes) {
    if (!whatif::ApplyFix(fix, scenario, error)) {
      std::fprintf(stderr, "sparkprof whatif: %s\n", error.c_str());
      return kExitUsage;
    }
  }
  Result<source::DiscoveryResult> found = source::Discover(options.path);
  if (!found.ok()) {
    PrintMessage("sparkprof", found.status().message());
    return kExitNothingAnalysable;
  }
  std::vector<std::string> input_files;
  for (const source::ApplicationLog& log : found->applications) {
    for (const source::LogPart& part : log.parts) input_files.push_back(part.disk_file);
  }
  if (!OutputIsNotAnInput(options.output, input_files)) return kExitUsage;
  std::ostringstream text;
  JsonWriter json;
  const bool many = found->applications.size() > 1;
  if (options.format == "json" && many) json.BeginObject().Key("applications").BeginArray();
  int analysed = 0;
  for (const source::ApplicationLog& log : found->applications) {
    eventlog::ReaderOptions reader_options;
    reader_options.on_problem = [](const std::string&, bool) {};
    report::Analysis analysis = report::Analyze(log, reader_options, options.cost.options);
    if (!analysis.read.analysable()) {
      PrintMessage("sparkprof", log.name + ": no Spark events could be read; not simulated");
      continue;
    }
    whatif::Prediction prediction = whatif::Simulate(analysis.model, scenario);
    if (options.format == "json") {
      report::WriteWhatifJson(analysis, prediction, json);
    } else {
      if (analysed > 0) text << "\n";
      WriteText(analysis, prediction, text);
    }
    ++analysed;
  }
  if (analysed == 0) return kExitNothingAnalysable;
  std::string result;
  if (options.format == "json") {
    if (many) json.EndArray().EndObject();
    result = json.Take() + "\n";
  } else {
    result = text.str();
  }
  return WriteReportOutput(options.output, result) ? kExitOk : kExitUsage;
}

}  // namespace

void RegisterWhatifCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<WhatifOptions>();
  CLI::App* command = app.add_subcommand(
      "whatif",
      "Replay the run through a model of Spark's scheduler as it was (the self-prediction) and "
      "with other settings: predicted wall time, core-hours and cost");
  command->add_option("path", options->path, "event log file, directory or zip")->required();
  command->add_option(
      "--set", options->settings,
      "a setting to simulate (repeatable, combined): spark.executor.instances=N, "
      "spark.executor.cores=N, spark.executor.memory=SIZE (spill and GC rescaled), "
      "spark.sql.shuffle.partitions=N, spark.sql.files.maxPartitionBytes=SIZE (file scans "
      "re-split), spark.dynamicAllocation.enabled=true|false, "
      "spark.dynamicAllocation.minExecutors=N, spark.dynamicAllocation.maxExecutors=N, "
      "spark.speculation=true");
  command->add_option("--fix", options->fixes,
                      "a problem fixed (repeatable): skew (hot tasks split to the median), "
                      "broadcast (sort-merge joins whose small side fits become broadcasts)");
  command->add_option("--format", options->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  command->add_option("-o,--output", options->output, "write the answer here instead of stdout");
  AddCostOptions(command, options->cost);
  command->callback([options, &exit_code]() { exit_code = RunWhatif(*options); });
}

}  // namespace sparkprof::cli
