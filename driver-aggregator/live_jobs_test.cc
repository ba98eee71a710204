// The jobs a long-running driver exports as they end (LiveApplication::EndedJobsJson, the
// OpenTelemetry job spans of a Spark Connect server) carry the figures the end-of-application
// report gives the same jobs and stage attempts.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/report/json_report.h"
#include "analyzer/testing/synthetic_app.h"
#include "driver-aggregator/live_application.h"

namespace sparkprof::driver {
namespace {

std::vector<std::string> DemoLines() {
  std::vector<std::string> lines;
  std::istringstream in(testing::GenerateEventLog(testing::DemoApp()));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<int32_t> AllIds() {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < 1000; ++id) ids.push_back(id);
  return ids;
}

TEST(LiveJobs, EndedJobsCarryTheReportsFigures) {
  const std::vector<std::string> lines = DemoLines();
  LiveApplication running;
  LiveApplication whole;
  for (const std::string& line : lines) {
    (void)whole.OnEventLine(line);
    if (line.find("\"SparkListenerApplicationEnd\"") == std::string::npos) {
      (void)running.OnEventLine(line);
    }
  }
  const std::string ended = running.EndedJobsJson(AllIds());
  Result<report::Analysis> finished = whole.Finish("demo");
  ASSERT_TRUE(finished.ok());
  const std::string report = report::RenderJson({&*finished});

  simdjson::dom::parser ended_parser, report_parser;
  simdjson::dom::element live = ended_parser.parse(ended);
  simdjson::dom::element full = report_parser.parse(report);
  EXPECT_EQ(std::string_view(live["application"]["id"]),
            std::string_view(full["application"]["id"]));
  EXPECT_EQ(int64_t(live["application"]["start_ms"]), int64_t(full["application"]["start_ms"]));

  std::set<int64_t> ended_jobs;
  size_t reported_ended = 0;
  for (simdjson::dom::element job : full["jobs"].get_array()) {
    if (std::string_view(job["result"]) == "unknown") continue;
    ++reported_ended;
    bool found = false;
    for (simdjson::dom::element mine : live["jobs"].get_array()) {
      if (int64_t(mine["job_id"]) != int64_t(job["job_id"])) continue;
      found = true;
      EXPECT_EQ(simdjson::to_string(mine), simdjson::to_string(job));
    }
    EXPECT_TRUE(found) << "job " << int64_t(job["job_id"]) << " was not exported live";
    ended_jobs.insert(int64_t(job["job_id"]));
  }
  ASSERT_GE(reported_ended, 2u);  // the demo has several jobs
  EXPECT_EQ(live["jobs"].get_array().size(), reported_ended);

  std::vector<std::string> want_stages, got_stages;
  for (simdjson::dom::element stage : full["stages"].get_array()) {
    if (ended_jobs.contains(int64_t(stage["job_id"]))) {
      want_stages.push_back(simdjson::to_string(stage));
    }
  }
  for (simdjson::dom::element stage : live["stages"].get_array()) {
    got_stages.push_back(simdjson::to_string(stage));
  }
  EXPECT_FALSE(want_stages.empty());
  EXPECT_EQ(got_stages, want_stages);
}

TEST(LiveJobs, OnlyJobsThatEndedAndWereAskedFor) {
  const std::vector<std::string> lines = DemoLines();
  LiveApplication live;
  size_t job_ends = 0;
  for (const std::string& line : lines) {
    (void)live.OnEventLine(line);
    if (line.find("\"SparkListenerJobEnd\"") != std::string::npos && ++job_ends == 1) break;
  }
  ASSERT_EQ(job_ends, 1u);
  simdjson::dom::parser parser;
  simdjson::dom::element first = parser.parse(live.EndedJobsJson(AllIds()));
  ASSERT_EQ(first["jobs"].get_array().size(), 1u);  // the jobs still running are not there
  const int64_t job_id = int64_t(first["jobs"].at(0)["job_id"]);
  for (simdjson::dom::element stage : first["stages"].get_array()) {
    EXPECT_EQ(int64_t(stage["job_id"]), job_id);
  }
  simdjson::dom::parser other_parser;
  simdjson::dom::element none = other_parser.parse(live.EndedJobsJson({int32_t(job_id + 500)}));
  EXPECT_EQ(none["jobs"].get_array().size(), 0u);
  EXPECT_EQ(none["stages"].get_array().size(), 0u);
  // Once the application has finished, its report has every job: nothing live any more.
  ASSERT_TRUE(live.Finish("demo").ok());
  EXPECT_EQ(live.EndedJobsJson(AllIds()), "");
}

}  // namespace
}  // namespace sparkprof::driver
