// The sparkprof tab's server side for an application of many stages (issue 30: "a page renders in
// < 1 s for an application with 1,000 stages"), measured here rather than asserted in a test:
//   * baseline: the application's event-log lines fed into the live model (LiveApplication), as
//     the live driver receives them over the whole run;
//   * live data/: what one view of the live tab computes, the model so far finished, diagnosed
//     and rendered as the report JSON (LiveApplication::AnalysisSoFar + RenderJson), median of
//     `repeats`;
//   * History Server, first view of a run without a profile: the whole log analysed from its
//     bytes (EventLogAnalysis: lines, model, report), median of `repeats` (later views are the
//     kept result: nothing).
// Printed as milliseconds and as ratios against the baseline measured in the same run. The
// browser's part (the tab's script drawing the tables and the timeline of 1,000 stages) is
// measured in a real Chromium by e2e_ui_tab_1000_stages_<version> (docs/spark-ui.md).
//
// The application: `stages` one-job stages of `tasks` tasks each (every tenth with a skewed task),
// stage names with HTML in them (the tab's script escapes them). The report must list every stage
// attempt, or the bench fails (the smoke test runs it small; no timing is checked anywhere).
//
// Usage: ui_tab_bench [stages=N] [tasks=N] [repeats=N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "analyzer/report/json_report.h"
#include "analyzer/testing/synthetic_app.h"
#include "driver-aggregator/event_log_analysis.h"
#include "driver-aggregator/live_application.h"

namespace {

struct Config {
  int stages = 1000;
  int tasks = 4;
  int repeats = 5;
};

bool ParseArgs(int argc, char** argv, Config& config) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    const int value = eq == std::string::npos ? -1 : std::atoi(arg.c_str() + eq + 1);
    if (value <= 0) {
      std::fprintf(stderr, "usage: ui_tab_bench [stages=N] [tasks=N] [repeats=N] (bad: %s)\n",
                   argv[i]);
      return false;
    }
    if (key == "stages") {
      config.stages = value;
    } else if (key == "tasks") {
      config.tasks = value;
    } else if (key == "repeats") {
      config.repeats = value;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return false;
    }
  }
  return true;
}

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (!ParseArgs(argc, argv, config)) return 2;
  sparkprof::testing::SyntheticApp app;
  app.executors = 2;
  app.cores_per_executor = 2;
  app.driver_gap_ms = 20;
  for (int i = 0; i < config.stages; ++i) {
    sparkprof::testing::SyntheticStage stage;
    stage.name = "count at <b>job_" + std::to_string(i) + ".py</b>:12";
    stage.tasks = config.tasks;
    stage.task_ms = 150;
    if (i % 10 == 9) {
      stage.skewed_tasks = 1;
      stage.skew_factor = 6;
    }
    app.stages.push_back(stage);
  }
  const std::string log = sparkprof::testing::GenerateEventLog(app);
  std::vector<std::string_view> lines;
  for (size_t at = 0; at < log.size();) {
    const size_t end = log.find('\n', at);
    lines.emplace_back(log.data() + at, end - at);
    at = end + 1;
  }

  const auto feed_start = std::chrono::steady_clock::now();
  sparkprof::driver::LiveApplication live;
  for (std::string_view line : lines) (void)live.OnEventLine(line);
  const double feed_ms = Ms(std::chrono::steady_clock::now() - feed_start);

  std::vector<double> live_ms, history_ms;
  std::string live_json, history_json;
  for (int r = 0; r < config.repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    auto analysis = live.AnalysisSoFar("live");
    if (!analysis.ok()) {
      std::fprintf(stderr, "FAIL: %s\n", analysis.status().ToString().c_str());
      return 1;
    }
    live_json = sparkprof::report::RenderJson({&analysis.value()});
    live_ms.push_back(Ms(std::chrono::steady_clock::now() - start));

    start = std::chrono::steady_clock::now();
    sparkprof::driver::EventLogAnalysis history;
    history.Add(log);
    auto json = history.ReportJson("app-log");
    if (!json.ok()) {
      std::fprintf(stderr, "FAIL: %s\n", json.status().ToString().c_str());
      return 1;
    }
    history_json = std::move(json).value();
    history_ms.push_back(Ms(std::chrono::steady_clock::now() - start));
  }
  // Every stage attempt in both reports (each stage entry has one "attempt" key).
  const size_t live_stages = Count(live_json, "\"attempt\":");
  const size_t history_stages = Count(history_json, "\"attempt\":");
  if (live_stages < static_cast<size_t>(config.stages) ||
      history_stages < static_cast<size_t>(config.stages)) {
    std::fprintf(stderr, "FAIL: %zu and %zu stage attempts reported of %d\n", live_stages,
                 history_stages, config.stages);
    return 1;
  }
  std::printf("application: %d stages x %d tasks, event log %zu bytes, %zu lines\n", config.stages,
              config.tasks, log.size(), lines.size());
  std::printf("baseline (lines fed into the live model): %.1f ms\n", feed_ms);
  std::printf(
      "live data/ (model so far, diagnosed, report JSON of %zu bytes): median %.1f ms "
      "(%.2fx the baseline)\n",
      live_json.size(), Median(live_ms), Median(live_ms) / feed_ms);
  std::printf(
      "History Server first view without a profile (the log analysed, report %zu bytes): "
      "median %.1f ms (%.2fx the baseline)\n",
      history_json.size(), Median(history_ms), Median(history_ms) / feed_ms);
  return 0;
}
