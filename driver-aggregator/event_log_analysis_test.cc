// The History Server's analysis of an event log handed over in chunks must be the report
// `sparkprof analyze` writes for the same log (without the right-sizing frontier), however the
// bytes are split; a log of no events is an error; an over-long line is refused, counted, and
// does not keep its bytes.
#include "driver-aggregator/event_log_analysis.h"

#include <unistd.h>

#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "analyzer/report/analysis.h"
#include "analyzer/report/json_report.h"
#include "analyzer/source/log_source.h"
#include "analyzer/testing/synthetic_app.h"

namespace sparkprof::driver {
namespace {

namespace fs = std::filesystem;

// The report document's keys but "input" (which names the source), as JSON text.
std::map<std::string, std::string> ReportFields(const std::string& document) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::map<std::string, std::string> fields;
  EXPECT_EQ(parser.parse(document).get(doc), simdjson::SUCCESS);
  simdjson::dom::object report;
  simdjson::dom::array applications;
  if (doc["applications"].get(applications) == simdjson::SUCCESS) {
    EXPECT_EQ(applications.size(), 1u);
    EXPECT_EQ(applications.at(0).get(report), simdjson::SUCCESS);
  } else {
    EXPECT_EQ(doc.get(report), simdjson::SUCCESS);
  }
  for (auto field : report) {
    if (field.key == "input") continue;
    fields[std::string(field.key)] = simdjson::to_string(field.value);
  }
  return fields;
}

std::string OfflineReport(const std::string& log) {
  fs::path file = fs::temp_directory_path() /
                  ("sparkprof_event_log_analysis_" + std::to_string(::getpid()) + ".json");
  std::ofstream(file, std::ios::binary) << log;
  auto found = source::Discover(file.string());
  EXPECT_TRUE(found.ok() && found->applications.size() == 1);
  cost::CostOptions cost_options;
  cost_options.frontier = false;  // as a page view computes it
  cost_options.threads = 1;
  report::Analysis offline = report::Analyze(found->applications.front(), {}, cost_options);
  fs::remove(file);
  return report::RenderJson({&offline});
}

TEST(EventLogAnalysis, ChunkedLogGivesTheAnalyzeReport) {
  const std::string log = testing::GenerateEventLog(testing::DemoApp());
  const std::map<std::string, std::string> expected = ReportFields(OfflineReport(log));
  ASSERT_TRUE(expected.count("findings") && expected.count("phases") && expected.count("stages"));
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}, log.size()}) {
    EventLogAnalysis analysis;
    for (size_t at = 0; at < log.size(); at += chunk) {
      analysis.Add(std::string_view(log).substr(at, chunk));
    }
    EXPECT_EQ(analysis.bytes_added(), log.size());
    Result<std::string> json = analysis.ReportJson("app-demo");
    ASSERT_TRUE(json.ok()) << json.status().ToString();
    const std::map<std::string, std::string> got = ReportFields(*json);
    for (const auto& [key, value] : expected) {
      ASSERT_TRUE(got.count(key)) << key;
      EXPECT_EQ(got.at(key), value) << "chunks of " << chunk << ": \"" << key << "\" differs";
    }
    EXPECT_NE(json->find("\"history-server\""), std::string::npos);  // the layout names it
    EXPECT_FALSE(analysis.ReportJson("again").ok());                 // once
  }
}

TEST(EventLogAnalysis, CrlfLinesAndNoFinalNewline) {
  std::string log = testing::GenerateEventLog(testing::DemoApp());
  const std::map<std::string, std::string> expected = ReportFields(OfflineReport(log));
  std::string crlf;
  for (char c : log) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  while (!crlf.empty() && (crlf.back() == '\n' || crlf.back() == '\r')) crlf.pop_back();
  EventLogAnalysis analysis;
  analysis.Add(crlf);
  Result<std::string> json = analysis.ReportJson("app-demo");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(ReportFields(*json).at("findings"), expected.at("findings"));
  EXPECT_EQ(ReportFields(*json).at("stages"), expected.at("stages"));
}

TEST(EventLogAnalysis, NotAnEventLogIsAnError) {
  EventLogAnalysis analysis;
  analysis.Add("hello\nworld\n");
  Result<std::string> json = analysis.ReportJson("notes.txt");
  ASSERT_FALSE(json.ok());
  EXPECT_NE(json.status().message().find("notes.txt"), std::string::npos);
  EXPECT_NE(json.status().message().find("12 bytes"), std::string::npos);
}

TEST(EventLogAnalysis, OverLongLineIsRefusedAndCounted) {
  LiveOptions options;
  options.max_line_bytes = 1000;
  const std::string log = testing::GenerateEventLog(testing::DemoApp());
  EventLogAnalysis analysis(options);
  const size_t first_line_end = log.find('\n') + 1;
  analysis.Add(log.substr(0, first_line_end));
  // 100 KB of one line, in pieces: refused, the rest of the log analysed.
  for (int i = 0; i < 100; ++i) analysis.Add(std::string(1000, 'x'));
  analysis.Add("\n");
  std::string rest = log.substr(first_line_end);
  size_t kept = 0;  // lines of the demo log longer than the test's limit are refused too
  for (size_t at = 0; at < rest.size();) {
    size_t end = rest.find('\n', at);
    kept += end - at <= options.max_line_bytes;
    at = end + 1;
  }
  analysis.Add(rest);
  Result<std::string> json = analysis.ReportJson("app-demo");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(*json).get(doc), simdjson::SUCCESS);
  simdjson::dom::element report = doc;
  simdjson::dom::array applications;
  if (doc["applications"].get(applications) == simdjson::SUCCESS) report = applications.at(0);
  simdjson::dom::element input = report["input"];
  int64_t bad = -1, events = -1;
  ASSERT_EQ(input["bad_line_count"].get(bad), simdjson::SUCCESS) << simdjson::to_string(input);
  ASSERT_EQ(input["events"].get(events), simdjson::SUCCESS);
  EXPECT_GE(bad, 1);
  EXPECT_EQ(events, static_cast<int64_t>(kept) + 1);
  EXPECT_NE(simdjson::to_string(input).find("exceeds the limit of 1000 bytes"), std::string::npos);
}

}  // namespace
}  // namespace sparkprof::driver
