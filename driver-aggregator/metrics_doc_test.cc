// docs/metrics.md is the one list of the driver's metrics (STYLE.md, points 17 and 18: the Helm
// alerts and dashboards are checked against it). This test holds it to the exporter both ways:
// every family a populated driver serves has a row there with its type, and every row is served.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "analyzer/testing/streaming_lines.h"
#include "analyzer/testing/synthetic_app.h"
#include "driver-aggregator/driver_aggregator.h"
#include "schema/profile_generated.h"

namespace sparkprof::driver {
namespace {

// The rows of docs/metrics.md's tables: | `name` | type | unit | labels | definition |
// (helm/generator/metric_catalog.py reads the same rows).
std::map<std::string, std::string> DocumentedMetrics() {
  std::ifstream in(std::string(SPARKPROF_SOURCE_DIR) + "/docs/metrics.md");
  EXPECT_TRUE(in.good()) << "docs/metrics.md not found";
  const std::regex row(R"(^\|\s*`([a-z_][a-z0-9_]*)`\s*\|\s*([a-z]+)\s*\|)");
  std::map<std::string, std::string> types_by_name;
  std::string line;
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_search(line, match, row)) types_by_name[match[1]] = match[2];
  }
  return types_by_name;
}

// The families of an exposition: `# TYPE name type` lines.
std::map<std::string, std::string> ExportedMetrics(const std::string& exposition) {
  std::map<std::string, std::string> types_by_name;
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string hash, keyword, name, type;
    if (words >> hash >> keyword >> name >> type && hash == "#" && keyword == "TYPE") {
      types_by_name[name] = type;
    }
  }
  return types_by_name;
}

// A driver that has seen a whole application (executors added and removed, stages of both
// kinds, spills, SQL commits), launched from Airflow, so that every family has a series:
// families without one are not served (prometheus-cpp leaves them out).
std::string PopulatedExposition() {
  setenv("AIRFLOW_CTX_DAG_ID", "nightly_etl", /*overwrite=*/1);
  setenv("AIRFLOW_CTX_TASK_ID", "load", 1);
  AggregatorOptions options;
  options.live_refresh_interval_ms = 0;
  options.live_extend_to_now = false;
  auto started = DriverAggregator::Start(options);
  EXPECT_TRUE(started.ok()) << started.status().ToString();
  if (!started.ok()) return {};
  DriverAggregator& aggregator = **started;
  EXPECT_TRUE(aggregator.SetApplication("app-1", "metrics doc test").ok());
  std::istringstream log(testing::GenerateEventLog(testing::DemoApp()));
  std::string line;
  while (std::getline(log, line)) {
    if (line.empty()) continue;
    EXPECT_TRUE(aggregator.OnEvent(line).ok()) << line.substr(0, 200);
  }
  // A streaming query on a 1 s trigger, stateful, with a watermark: every per-query family.
  constexpr int64_t kQueryStart = 1'796'007'900'000;
  EXPECT_TRUE(
      aggregator.OnEvent(testing::QueryStartedLine("q1", "run1", "orders", kQueryStart)).ok());
  for (int64_t i = 0; i < 6; ++i) {
    const int64_t start_ms = kQueryStart + 1000 * (i + 1);
    EXPECT_TRUE(aggregator
                    .OnEvent(testing::ProgressLine{.id = "q1",
                                                   .run_id = "run1",
                                                   .name = "orders",
                                                   .batch_id = i,
                                                   .start_ms = start_ms,
                                                   .duration_ms = 200,
                                                   .rows = 100,
                                                   .state_rows = 1000 * (i + 1),
                                                   .state_bytes = 4096,
                                                   .watermark_ms = start_ms - 5000}
                                 .Line())
                    .ok());
  }
  // One executor's agent batch with its memory (families labelled per JVM have no series before).
  flatbuffers::FlatBufferBuilder builder;
  auto health = schema::CreateAgentHealth(builder);
  auto memory = schema::CreateMemoryUse(builder, 100, 200, 10, 1, 300, 400, 500, 0, 0, 1, 50);
  auto batch =
      schema::CreateBatchDirect(builder, 1, "1", "host", 7, 0, 1, 10'000'000, "cpu+wall", nullptr,
                                nullptr, nullptr, nullptr, nullptr, health, nullptr, 0, memory);
  schema::FinishBatchBuffer(builder, batch);
  EXPECT_EQ(
      aggregator.Ingest(std::span<const uint8_t>(builder.GetBufferPointer(), builder.GetSize())),
      IngestOutcome::kAccepted);
  aggregator.RefreshLiveMetrics(-1);
  std::string exposition = aggregator.registry().Render();
  unsetenv("AIRFLOW_CTX_DAG_ID");
  unsetenv("AIRFLOW_CTX_TASK_ID");
  return exposition;
}

TEST(MetricsDoc, EveryExportedMetricIsDocumentedAndEveryDocumentedOneExported) {
  const std::map<std::string, std::string> documented = DocumentedMetrics();
  const std::string exposition = PopulatedExposition();
  const std::map<std::string, std::string> exported = ExportedMetrics(exposition);
  ASSERT_GT(documented.size(), 40u) << "docs/metrics.md: its table rows were not found";
  ASSERT_GT(exported.size(), 40u) << exposition;
  for (const auto& [name, type] : exported) {
    auto row = documented.find(name);
    if (row == documented.end()) {
      ADD_FAILURE() << name << " (" << type << ") is exported but has no row in docs/metrics.md";
    } else {
      EXPECT_EQ(row->second, type) << name << ": docs/metrics.md says " << row->second;
    }
  }
  for (const auto& [name, type] : documented) {
    EXPECT_TRUE(exported.count(name) > 0)
        << name << " (" << type << ") is in docs/metrics.md but the driver does not export it";
  }
}

}  // namespace
}  // namespace sparkprof::driver
