// Golden text reports: the write-up a user reads (phase breakdown, findings with evidence and
// fixes, configuration block) for the README demo and two shared logs. Regenerate after an intended
// change with SPARKPROF_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "analyzer/report/text_report.h"
#include "analyzer/testing/analysis_test_util.h"
#include "analyzer/testing/synthetic_app.h"

namespace sparkprof::diagnosis {
namespace {

namespace fs = std::filesystem;

// Analyses `text`, naming the input `label` so the report does not depend on the machine.
report::Analysis AnalyzeNamed(const std::string& text, const std::string& label) {
  source::ApplicationLog log;
  log.name = label;
  log.layout = "single";
  source::LogPart part;
  part.display_name = label;
  part.open = [text]() -> Result<std::unique_ptr<InputStream>> {
    return MakeMemoryInputStream(text);
  };
  log.parts.push_back(part);
  return report::Analyze(log);
}

void ExpectGolden(const std::string& actual, const std::string& name) {
  fs::path golden = fs::path(SPARKPROF_SOURCE_DIR) / "analyzer" / "diagnosis" / "testdata" / name;
  if (std::getenv("SPARKPROF_UPDATE_GOLDEN") != nullptr) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << actual;
    GTEST_SKIP() << "updated " << golden;
  }
  std::ifstream in(golden, std::ios::binary);
  ASSERT_TRUE(in) << "missing " << golden << " (run with SPARKPROF_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "text report differs from " << golden;
}

std::string ReadShared(const std::string& label) {
  std::ifstream in(test_util::kEventLogs / label, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(TextReportGolden, Demo) {
  report::Analysis a = AnalyzeNamed(
      sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp()), "demo.json");
  ExpectGolden(report::RenderText(a), "demo_report.txt");
}

TEST(TextReportGolden, SharedLogs) {
  // sparklint's example: stragglers with even data (speculation, not salting) and 26% GC.
  const std::string sparklint = "groupon+sparklint/src/test/resources/spark_event_log_example";
  // Dr. Elephant's test log: 43 s of 55 s waiting for executors.
  const std::string elephant = "linkedin+dr-elephant/test/resources/spark_event_logs/event_log_1";
  for (const std::string& label : {sparklint, elephant}) {
    if (!fs::exists(test_util::kEventLogs / label)) GTEST_SKIP() << "no " << label;
    report::Analysis a = AnalyzeNamed(ReadShared(label), label);
    ExpectGolden(report::RenderText(a), "shared_" + fs::path(label).filename().string() + ".txt");
  }
}

}  // namespace
}  // namespace sparkprof::diagnosis
