// The executors' own logs of real runs (tests/workloads/process_logs, recorded by
// tests/workloads/record_process_logs.py on a standalone cluster, per Spark release): with
// `--logs`, the kill causes name what the event log alone cannot.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/executor_logs/executor_logs.h"
#include "analyzer/report/analysis.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/text_report.h"
#include "analyzer/source/log_source.h"

namespace sparkprof {
namespace {

namespace fs = std::filesystem;

const fs::path kRecorded = fs::path(SPARKPROF_SOURCE_DIR) / "tests/workloads/process_logs";

std::vector<std::string> Versions() {
  std::vector<std::string> versions;
  std::error_code error;
  for (fs::directory_iterator it(kRecorded, error), end; !error && it != end; ++it) {
    if (it->is_directory()) versions.push_back(it->path().filename().string());
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

report::Analysis AnalyzeRecorded(const std::string& version, const std::string& workload,
                                 bool with_logs) {
  const fs::path dir = kRecorded / version / workload;
  Result<source::DiscoveryResult> found = source::Discover((dir / "eventlog.zstd").string());
  EXPECT_TRUE(found.ok() && found->applications.size() == 1) << dir;
  if (!found.ok() || found->applications.size() != 1) return {};
  return report::Analyze(found->applications[0], {}, {}, "",
                         with_logs ? (dir / "logs").string() : std::string());
}

const diagnosis::Finding* FindingOf(const report::Analysis& analysis, const std::string& rule) {
  for (const diagnosis::Finding& f : analysis.findings) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

TEST(ProcessLogsTest, KernelKillInAMemoryCgroupIsNamedFromTheLogsAlone) {
  const std::vector<std::string> versions = Versions();
  if (versions.empty()) GTEST_SKIP() << "no recorded logs in " << kRecorded;
  for (const std::string& version : versions) {
    SCOPED_TRACE(version);
    // The event log says "Command exited with code 137" on a standalone cluster: nothing there
    // enforces a memory limit, so without the profile's cgroup reading the cause is unknown.
    const report::Analysis alone = AnalyzeRecorded(version, "cgroup_memory_kill", false);
    const diagnosis::Finding* lost = FindingOf(alone, "executor-loss");
    ASSERT_NE(lost, nullptr);
    EXPECT_NE(lost->explanation.find("cause unknown"), std::string::npos) << lost->explanation;
    EXPECT_EQ(lost->explanation.find("Container memory limit exceeded"), std::string::npos);

    // Its stderr named its pid; dmesg named that pid in "Memory cgroup out of memory: Killed
    // process <pid>": the container's limit.
    const report::Analysis with_logs = AnalyzeRecorded(version, "cgroup_memory_kill", true);
    ASSERT_NE(with_logs.logs, nullptr) << with_logs.logs_error;
    for (const char* rule : {"executor-loss", "job-failures"}) {
      SCOPED_TRACE(rule);
      const diagnosis::Finding* f = FindingOf(with_logs, rule);
      ASSERT_NE(f, nullptr);
      const std::string words = f->title + " " + f->explanation;
      EXPECT_NE(words.find("Container memory limit exceeded"), std::string::npos) << words;
      EXPECT_NE(words.find("Memory cgroup out of memory: Killed process"), std::string::npos)
          << words;
    }
    EXPECT_NE(std::find(with_logs.logs->layouts.begin(), with_logs.logs->layouts.end(), "kernel"),
              with_logs.logs->layouts.end());
    const std::string json = report::RenderJson({&with_logs});
    EXPECT_NE(json.find("\"kernel-oom-kill\""), std::string::npos);
  }
}

TEST(ProcessLogsTest, HeapOutOfMemoryErrorIsConfirmedWithItsTimeAndExecutor) {
  const std::vector<std::string> versions = Versions();
  if (versions.empty()) GTEST_SKIP() << "no recorded logs in " << kRecorded;
  for (const std::string& version : versions) {
    SCOPED_TRACE(version);
    const report::Analysis with_logs = AnalyzeRecorded(version, "executor_oom", true);
    ASSERT_NE(with_logs.logs, nullptr) << with_logs.logs_error;
    const diagnosis::Finding* lost = FindingOf(with_logs, "executor-loss");
    ASSERT_NE(lost, nullptr);
    EXPECT_NE(lost->explanation.find("java.lang.OutOfMemoryError: Java heap space"),
              std::string::npos)
        << lost->explanation;
    EXPECT_NE(lost->explanation.find("stderr"), std::string::npos) << lost->explanation;
    size_t heap_hits = 0;
    for (const executor_logs::LogHit& hit : with_logs.logs->hits) {
      if (hit.signal != executor_logs::LogSignal::kHeapSpace) continue;
      ++heap_hits;
      EXPECT_FALSE(with_logs.logs->ExecutorOf(hit).empty());
      EXPECT_GE(hit.time_ms, 0);
    }
    EXPECT_GE(heap_hits, 2u);  // each of the two attempts' executors
  }
}

TEST(ProcessLogsTest, PythonMemoryErrorTracebacksAreFoundPerExecutor) {
  const std::vector<std::string> versions = Versions();
  if (versions.empty()) GTEST_SKIP() << "no recorded logs in " << kRecorded;
  for (const std::string& version : versions) {
    SCOPED_TRACE(version);
    const report::Analysis with_logs = AnalyzeRecorded(version, "python_memory_error", true);
    ASSERT_NE(with_logs.logs, nullptr) << with_logs.logs_error;
    size_t python_hits = 0;
    for (const executor_logs::LogHit& hit : with_logs.logs->hits) {
      if (hit.signal == executor_logs::LogSignal::kPythonMemoryError) ++python_hits;
    }
    EXPECT_GE(python_hits, 1u);
    // The text report lists them under the logs' heading.
    const std::string text = report::RenderText(with_logs);
    EXPECT_NE(text.find("Executor and driver logs"), std::string::npos);
    EXPECT_NE(text.find("MemoryError"), std::string::npos);
  }
}

// A cause the event log does not state: inferred (medium confidence, said so) from what it does
// show, then named by the process's own log with --logs (high confidence, the line quoted).
void ExpectInferredAloneAndNamedByTheLogs(const std::string& version, const std::string& workload,
                                          const std::string& title_words,
                                          const std::string& inferred_words,
                                          const std::string& log_words) {
  const report::Analysis alone = AnalyzeRecorded(version, workload, false);
  const diagnosis::Finding* job = FindingOf(alone, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(job->title.find(title_words), std::string::npos) << job->title;
  EXPECT_NE(job->explanation.find(inferred_words), std::string::npos) << job->explanation;
  EXPECT_EQ(job->confidence.level, diagnosis::ConfidenceLevel::kMedium);

  const report::Analysis with_logs = AnalyzeRecorded(version, workload, true);
  ASSERT_NE(with_logs.logs, nullptr) << with_logs.logs_error;
  job = FindingOf(with_logs, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(job->title.find(title_words), std::string::npos) << job->title;
  EXPECT_EQ(job->explanation.find("inferred"), std::string::npos) << job->explanation;
  EXPECT_NE(job->explanation.find(log_words), std::string::npos) << job->explanation;
  EXPECT_EQ(job->confidence.level, diagnosis::ConfidenceLevel::kHigh);
}

// Executors that registered, then refused to start (exit code 1, no task run): the event log has
// the exit code alone, so the cause is inferred from the settings; each executor's stderr says it.
TEST(ProcessLogsTest, NettyDirectMemoryRefusalIsInferredAloneAndNamedByTheLogs) {
  const std::vector<std::string> versions = Versions();
  if (versions.empty()) GTEST_SKIP() << "no recorded logs in " << kRecorded;
  for (const std::string& version : versions) {
    SCOPED_TRACE(version);
    if (!fs::exists(kRecorded / version / "netty_direct_memory")) continue;
    ExpectInferredAloneAndNamedByTheLogs(
        version, "netty_direct_memory", "Executor refused to start: Netty direct memory below",
        "inferred from the settings", "Netty direct memory should at least be bigger than");
    const report::Analysis with_logs = AnalyzeRecorded(version, "netty_direct_memory", true);
    ASSERT_NE(with_logs.logs, nullptr) << with_logs.logs_error;
    size_t refusals = 0;
    for (const executor_logs::LogHit& hit : with_logs.logs->hits) {
      if (hit.signal == executor_logs::LogSignal::kDirectBelowFetchToMem) ++refusals;
    }
    EXPECT_GE(refusals, 2u);  // each relaunched executor's stderr
  }
}

// A collect the driver could not hold: the event log says only that results were lost, so the
// driver's heap is inferred from the results' size; the driver's own log has its OutOfMemoryError.
TEST(ProcessLogsTest, DriverHeapIsInferredFromTheResultsAndConfirmedByTheDriversLog) {
  const std::vector<std::string> versions = Versions();
  if (versions.empty()) GTEST_SKIP() << "no recorded logs in " << kRecorded;
  for (const std::string& version : versions) {
    SCOPED_TRACE(version);
    if (!fs::exists(kRecorded / version / "driver_heap_collect")) continue;
    ExpectInferredAloneAndNamedByTheLogs(version, "driver_heap_collect", "Driver heap exhausted",
                                         "inferred from these sizes",
                                         "java.lang.OutOfMemoryError: Java heap space");
  }
}

}  // namespace
}  // namespace sparkprof
