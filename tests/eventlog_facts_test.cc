// Every real event log in ../shared/eventlogs is analysed and its figures compared with
// facts.json, computed by an independent reader. Skipped when the folder is absent.
//
// Where sparkprof deliberately differs from that reader, the difference is named here:
//  - unknown_events: sparkprof interprets DBCEventLoggingListenerMetadata (Databricks' LogStart)
//    and the executor/node Blacklisted events (they feed the task-failure diagnosis); the
//    reference reader lists them as unknown.
//  - spark_version: for Databricks logs the reference prints "DBR <version>"; sparkprof reports
//    the version the metadata event carries.
//  - removal_reasons: the reference truncates reasons to 70 characters; sparkprof keeps the whole
//    first line, so ours are compared after the same truncation.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "analyzer/report/analysis.h"
#include "analyzer/source/log_source.h"

namespace sparkprof {
namespace {

namespace fs = std::filesystem;

const fs::path kEventLogs = SPARKPROF_SHARED_EVENTLOGS;

std::map<std::string, int64_t> ObjectCounts(simdjson::dom::element element) {
  std::map<std::string, int64_t> out;
  simdjson::dom::object object;
  if (element.get_object().get(object)) return out;
  for (auto [key, value] : object) {
    int64_t count = 0;
    if (!value.get_int64().get(count)) out[std::string(key)] = count;
  }
  return out;
}

int64_t Int(simdjson::dom::element fact, const char* key) {
  int64_t value = -1;
  if (fact[key].get_int64().get(value)) return -1;
  return value;
}

std::string Str(simdjson::dom::element fact, const char* key) {
  std::string_view value;
  if (fact[key].get_string().get(value)) return "";
  return std::string(value);
}

// Finds the single application log a facts label names: a file, or "archive.zip!entry".
std::optional<source::ApplicationLog> LogForLabel(const std::string& label) {
  size_t bang = label.find('!');
  if (bang == std::string::npos) {
    std::string path = (kEventLogs / label).string();
    source::ApplicationLog log;
    log.name = label;
    log.layout = "single";
    source::LogPart part;
    part.display_name = path;
    part.open = [path]() { return OpenFileInputStream(path); };
    log.parts.push_back(part);
    return log;
  }
  std::string archive = (kEventLogs / label.substr(0, bang)).string();
  std::string entry = label.substr(bang + 1);
  Result<source::DiscoveryResult> found = source::Discover(archive);
  if (!found.ok()) return std::nullopt;
  for (const source::ApplicationLog& log : found->applications) {
    for (const source::LogPart& part : log.parts) {
      const std::string& name = part.display_name;
      if (name.size() >= entry.size() &&
          name.compare(name.size() - entry.size(), entry.size(), entry) == 0) {
        source::ApplicationLog single = log;
        single.parts = {part};
        return single;
      }
    }
  }
  return std::nullopt;
}

TEST(SharedEventLogs, FiguresMatchFacts) {
  fs::path facts_path = kEventLogs / "facts.json";
  if (!fs::exists(facts_path)) GTEST_SKIP() << "no " << facts_path;
  simdjson::dom::parser parser;
  simdjson::dom::element facts;
  ASSERT_EQ(parser.load(facts_path.string()).get(facts), simdjson::SUCCESS);
  simdjson::dom::array entries;
  ASSERT_EQ(facts.get_array().get(entries), simdjson::SUCCESS);

  const std::set<std::string> kInterpretedByUs = {
      "DBCEventLoggingListenerMetadata",
      "org.apache.spark.scheduler.SparkListenerExecutorBlacklisted",
      "org.apache.spark.scheduler.SparkListenerExecutorBlacklistedForStage",
      "org.apache.spark.scheduler.SparkListenerExecutorUnblacklisted",
      "org.apache.spark.scheduler.SparkListenerNodeBlacklisted",
      "org.apache.spark.scheduler.SparkListenerNodeBlacklistedForStage",
      "org.apache.spark.scheduler.SparkListenerNodeUnblacklisted",
  };

  int checked = 0;
  for (simdjson::dom::element fact : entries) {
    std::string label = Str(fact, "label");
    SCOPED_TRACE(label);
    if (!fs::exists(kEventLogs / label.substr(0, label.find('!')))) {
      // facts.json lists two copies of sample_event_log.json the folder does not hold.
      continue;
    }
    std::optional<source::ApplicationLog> log = LogForLabel(label);
    ASSERT_TRUE(log.has_value()) << "cannot locate " << label;
    report::Analysis a = report::Analyze(*log);
    const report::ApplicationSummary& s = a.summary;
    ++checked;

    // Input.
    int64_t decoded = 0;
    for (const auto& file : a.read.files) decoded += static_cast<int64_t>(file.decoded_bytes);
    EXPECT_EQ(decoded, Int(fact, "decompressed_bytes"));
    EXPECT_EQ(a.read.lines, Int(fact, "lines"));
    EXPECT_EQ(a.read.bad_line_count, Int(fact, "bad_lines"));
    std::set<std::string> unknown_ours, unknown_facts;
    for (const auto& [name, count] : a.read.unknown_events) unknown_ours.insert(name);
    simdjson::dom::array unknown_array;
    if (!fact["unknown_events"].get_array().get(unknown_array)) {
      for (auto name : unknown_array) {
        std::string text(name.get_string().value_unsafe());
        if (!kInterpretedByUs.count(text)) unknown_facts.insert(text);
      }
    }
    EXPECT_EQ(unknown_ours, unknown_facts);

    // Application.
    // Without a usable ApplicationStart the reference reports no id/name; sparkprof falls back
    // to spark.app.id / spark.app.name from the environment, which is more useful.
    if (!Str(fact, "app_id").empty()) {
      EXPECT_EQ(a.model.app_id, Str(fact, "app_id"));
    }
    if (!Str(fact, "app_name").empty()) {
      EXPECT_EQ(a.model.app_name, Str(fact, "app_name"));
    }
    std::string version = Str(fact, "spark_version");
    if (version.rfind("DBR ", 0) == 0) version = version.substr(4);
    EXPECT_EQ(a.model.spark_version, version);
    bool complete = false;
    EXPECT_EQ(fact["complete"].get_bool().get(complete), simdjson::SUCCESS);
    EXPECT_EQ(a.model.complete, complete);

    // Counts.
    EXPECT_EQ(s.counts.jobs, Int(fact, "jobs"));
    EXPECT_EQ(s.counts.stages, Int(fact, "stages"));
    EXPECT_EQ(s.counts.stage_attempts, Int(fact, "stage_attempts"));
    EXPECT_EQ(s.counts.failed_stage_attempts, Int(fact, "failed_stage_attempts"));
    EXPECT_EQ(s.counts.task_attempts, Int(fact, "tasks"));
    EXPECT_EQ(s.counts.speculative_task_attempts, Int(fact, "speculative_tasks"));
    EXPECT_EQ(s.counts.sql_executions, Int(fact, "sql_executions"));
    EXPECT_EQ(s.task_end_reasons, ObjectCounts(fact["task_end_reasons"]));

    // Executors.
    EXPECT_EQ(s.executors.added, Int(fact, "executors_added"));
    EXPECT_EQ(s.executors.removed, Int(fact, "executors_removed"));
    std::map<std::string, int64_t> reasons;
    for (const auto& [reason, count] : s.executors.removal_reasons) {
      reasons[reason.substr(0, 70)] += count;
    }
    EXPECT_EQ(reasons, ObjectCounts(fact["removal_reasons"]));

    // Totals.
    const report::Totals& t = s.totals;
    EXPECT_EQ(t.executor_run_time_ms, Int(fact, "executor_run_ms"));
    EXPECT_EQ(t.executor_cpu_time_ns, Int(fact, "executor_cpu_ns"));
    EXPECT_EQ(t.jvm_gc_time_ms, Int(fact, "gc_ms"));
    EXPECT_EQ(t.memory_bytes_spilled, Int(fact, "mem_spill"));
    EXPECT_EQ(t.disk_bytes_spilled, Int(fact, "disk_spill"));
    EXPECT_EQ(t.shuffle_read_bytes, Int(fact, "shuffle_read"));
    EXPECT_EQ(t.shuffle_write_bytes, Int(fact, "shuffle_write"));
    EXPECT_EQ(t.input_bytes, Int(fact, "input_bytes"));
    EXPECT_EQ(t.output_bytes, Int(fact, "output_bytes"));
    EXPECT_EQ(t.task_attempts_with_metrics, Int(fact, "tasks_with_metrics"));
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace sparkprof
