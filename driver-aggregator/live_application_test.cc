// The live model against the offline engine: event-log lines fed one by one into LiveApplication
// (and DriverAggregator::OnEvent) must give the report `sparkprof analyze` writes for the same
// file, and metrics equal to the engine's phase breakdown on it; mid-run counts must match the
// model built from the lines so far.
#include "driver-aggregator/live_application.h"

#include <unistd.h>

#include <gtest/gtest.h>
#include <simdjson.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/diagnosis/phase_breakdown.h"
#include "analyzer/report/analysis.h"
#include "analyzer/report/json_report.h"
#include "analyzer/source/log_source.h"
#include "analyzer/testing/synthetic_app.h"
#include "driver-aggregator/driver_aggregator.h"

namespace sparkprof::driver {
namespace {

namespace fs = std::filesystem;

// Small plain-text logs among the shared real ones (skipped when the folder is absent).
const char* const kSharedLogs[] = {
    "apache+spark/core/src/test/resources/spark-events/app-20161115172038-0000",
    "apache+spark/core/src/test/resources/spark-events/app-20180109111548-0000",
    "groupon+sparklint/src/test/resources/spark_event_log_example",
    "linkedin+dr-elephant/test/resources/spark_event_logs/event_log_1",
    // Spark 3.5 with a resource profile, and SQL executions with plans and driver updates.
    ("kubeflow+mcp-apache-spark-history-server/examples/basic/events/"
     "eventlog_v2_spark-bcec39f6201b42b9925124595baad260/events_1_spark-"
     "bcec39f6201b42b9925124595baad260"),
    ("NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/"
     "nested_type_eventlog"),
};

fs::path TempDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() /
                 ("sparkprof_live_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What `sparkprof analyze FILE` computes (the CLI's path: discovery, then report::Analyze).
report::Analysis AnalyzeFile(const fs::path& file) {
  auto found = source::Discover(file.string());
  EXPECT_TRUE(found.ok());
  EXPECT_EQ(found->applications.size(), 1u);
  // The driver holds right-sizing to a smaller replay budget (live_application.cc): the same here.
  cost::CostOptions cost_options;
  cost_options.max_simulated_tasks = 2'000'000;
  return report::Analyze(found->applications.front(), {}, cost_options);
}

// The two report documents, minus "input" (which names the source: file and codec vs listener).
void ExpectSameReport(const report::Analysis& offline, const report::Analysis& live,
                      const std::string& label) {
  std::string a = report::RenderJson({&offline});
  std::string b = report::RenderJson({&live});
  simdjson::dom::parser parser_a, parser_b;
  simdjson::dom::object doc_a, doc_b;
  ASSERT_EQ(parser_a.parse(a).get(doc_a), simdjson::SUCCESS) << label;
  ASSERT_EQ(parser_b.parse(b).get(doc_b), simdjson::SUCCESS) << label;
  std::set<std::string> keys;
  for (auto field : doc_a) keys.insert(std::string(field.key));
  for (auto field : doc_b) keys.insert(std::string(field.key));
  EXPECT_TRUE(keys.count("findings") && keys.count("phases") && keys.count("stages")) << label;
  for (const std::string& key : keys) {
    if (key == "input") continue;
    simdjson::dom::element value_a, value_b;
    ASSERT_EQ(doc_a[key].get(value_a), simdjson::SUCCESS) << label << ": " << key;
    ASSERT_EQ(doc_b[key].get(value_b), simdjson::SUCCESS) << label << ": " << key;
    EXPECT_EQ(simdjson::to_string(value_a), simdjson::to_string(value_b))
        << label << ": \"" << key << "\" differs";
  }
  // The input section counts the same events and problems.
  EXPECT_EQ(offline.read.events, live.read.events) << label;
  EXPECT_EQ(offline.read.bad_line_count, live.read.bad_line_count) << label;
  EXPECT_EQ(offline.read.unknown_events, live.read.unknown_events) << label;
}

// A metric's value in a rendered exposition: the first sample of `name` with all `labels`.
double Sample(const std::string& exposition, const std::string& name,
              const std::vector<std::string>& labels = {}) {
  for (const std::string& line : Lines(exposition)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.compare(0, name.size(), name) != 0) continue;
    if (line.size() <= name.size() || (line[name.size()] != '{' && line[name.size()] != ' ')) {
      continue;
    }
    bool all = true;
    for (const std::string& label : labels) all = all && line.find(label) != std::string::npos;
    if (!all) continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  ADD_FAILURE() << "no sample " << name;
  return -1;
}

void CheckAgainstAnalyze(const fs::path& file, const std::string& label) {
  report::Analysis offline = AnalyzeFile(file);
  LiveApplication live;
  for (const std::string& line : Lines(ReadFile(file))) (void)live.OnEventLine(line);
  // Before the end, the snapshot on the lines so far (no wall-clock extension) is the engine's.
  LiveSnapshot snapshot = live.Snapshot(-1);
  ASSERT_TRUE(snapshot.has_model_figures);
  EXPECT_EQ(snapshot.phases.wall_ms, offline.phases.wall_ms) << label;
  EXPECT_EQ(snapshot.phases.compute_ms, offline.phases.compute_ms) << label;
  EXPECT_EQ(snapshot.phases.io_write_ms, offline.phases.io_write_ms) << label;
  EXPECT_EQ(snapshot.phases.resource_wait_ms, offline.phases.resource_wait_ms) << label;
  Result<report::Analysis> finished = live.Finish(offline.model.app_id);
  ASSERT_TRUE(finished.ok());
  ExpectSameReport(offline, *finished, label);
}

TEST(LiveApplication, GeneratedLogGivesTheAnalyzeReport) {
  fs::path dir = TempDir("generated");
  fs::path file = dir / "demo.json";
  std::ofstream(file) << testing::GenerateEventLog(testing::DemoApp());
  CheckAgainstAnalyze(file, "demo");
  fs::remove_all(dir);
}

TEST(LiveApplication, SharedLogsGiveTheAnalyzeReport) {
  int checked = 0;
  for (const char* label : kSharedLogs) {
    fs::path file = fs::path(SPARKPROF_SHARED_EVENTLOGS) / label;
    if (!fs::exists(file)) continue;
    CheckAgainstAnalyze(file, label);
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "shared event logs absent";
}

// Mid-run: after every prefix of the log, the live counts equal what the model of that prefix
// says (running = started and not ended; pending = the engine's per-stage definition; executors).
TEST(LiveApplication, MidRunCountsMatchTheModelOfTheLinesSoFar) {
  std::vector<std::string> lines = Lines(testing::GenerateEventLog(testing::DemoApp()));
  LiveApplication live;
  model::ModelBuilder reference;
  eventlog::EventParser parser(reference);
  int64_t max_running = 0, max_pending = 0, max_executors = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_TRUE(live.OnEventLine(lines[i]).ok()) << i;
    std::string padded = lines[i] + std::string(eventlog::EventParser::kRequiredPadding, '\0');
    ASSERT_TRUE(parser.ParseLine(padded.data(), lines[i].size(), padded.size()).ok());
    if (i % 37 != 0 && i + 1 != lines.size()) continue;
    const model::ApplicationModel& m = reference.model();
    int64_t running = 0, executors = 0;
    for (const model::TaskAttempt& task : m.tasks) running += task.has_start && !task.ended();
    for (const model::Executor& e : m.executors) {
      executors += e.removed_time_ms < 0 && !e.is_driver() && e.added_time_ms >= 0;
    }
    int64_t pending = 0;
    for (const auto& [key, stage] : m.stages) {
      if (!stage.submitted || stage.completed_event) continue;
      int64_t launched = 0;
      for (const model::TaskAttempt& task : m.tasks) {
        launched +=
            task.stage_id == key.first && task.stage_attempt == key.second && task.has_start;
      }
      pending += std::max<int64_t>(stage.num_tasks - launched, 0);
    }
    LiveCounts counts = live.Counts();
    EXPECT_EQ(counts.running_tasks, running) << "after line " << i;
    EXPECT_EQ(counts.pending_tasks, pending) << "after line " << i;
    EXPECT_EQ(counts.executors, executors) << "after line " << i;
    max_running = std::max(max_running, running);
    max_pending = std::max(max_pending, pending);
    max_executors = std::max(max_executors, executors);
    if (i % 370 == 0) {  // a snapshot mid-run is sane too
      LiveSnapshot snapshot = live.Snapshot(-1);
      EXPECT_GE(snapshot.phases.wall_ms, 0);
      EXPECT_GE(snapshot.worst_skew_ratio, 0);
    }
  }
  // The demo has 200-task stages and 4 executors (the generator writes each task's start and end
  // next to each other, so at most one task runs between two lines).
  EXPECT_GE(max_running, 1);
  EXPECT_GT(max_pending, 100);
  EXPECT_EQ(max_executors, 4);
  EXPECT_EQ(live.Counts().running_tasks, 0);
  EXPECT_TRUE(live.Counts().application_ended);
}

TEST(LiveApplication, SkewAndCompletedStagesAreReportedOnce) {
  testing::SyntheticApp app = testing::DemoApp();
  std::vector<std::string> lines = Lines(testing::GenerateEventLog(app));
  LiveApplication live;
  std::map<std::pair<int32_t, int32_t>, int> reported;
  size_t write_stages = 0;
  double worst = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    (void)live.OnEventLine(lines[i]);
    if (i % 50 != 0 && i + 1 != lines.size()) continue;
    LiveSnapshot snapshot = live.Snapshot(-1);
    worst = std::max(worst, snapshot.worst_skew_ratio);
    for (const CompletedStage& stage : snapshot.newly_completed) {
      ++reported[{stage.stage_id, stage.attempt}];
      write_stages += stage.write_stage;
      EXPECT_FALSE(stage.successful_task_ms.empty());
    }
  }
  EXPECT_EQ(reported.size(), app.stages.size());
  for (const auto& entry : reported) EXPECT_EQ(entry.second, 1);
  EXPECT_EQ(write_stages, 1u);  // the demo's one write stage
  EXPECT_GT(worst, 3.0);        // its skewed join
}

// While the first executor is awaited, resource wait grows with the clock; then it stays put.
TEST(LiveApplication, ResourceWaitGrowsWhileNoExecutorHasRegistered) {
  LiveApplication live;
  ASSERT_TRUE(live.OnEventLine(R"({"Event":"SparkListenerApplicationStart","App Name":"a",)"
                               R"("App ID":"app-1","Timestamp":1000000,"User":"u"})")
                  .ok());
  EXPECT_EQ(live.Snapshot(1003000).phases.resource_wait_ms, 3000);
  EXPECT_EQ(live.Snapshot(1007000).phases.resource_wait_ms, 7000);
  ASSERT_TRUE(live.OnEventLine(R"({"Event":"SparkListenerExecutorAdded","Timestamp":1008000,)"
                               R"("Executor ID":"1","Executor Info":{"Host":"h","Total Cores":4}})")
                  .ok());
  EXPECT_EQ(live.Snapshot(1020000).phases.resource_wait_ms, 8000);
  EXPECT_EQ(live.Counts().executors, 1);
  EXPECT_EQ(live.Counts().task_slots, 4);
}

TEST(LiveApplication, BadLinesAreCountedAndLinesAfterTheEndRefused) {
  LiveOptions options;
  options.max_line_bytes = 1000;
  LiveApplication live(options);
  EXPECT_TRUE(
      live.OnEventLine(R"({"Event":"SparkListenerLogStart","Spark Version":"3.5.1"})").ok());
  EXPECT_FALSE(live.OnEventLine("{not json").ok());
  EXPECT_FALSE(live.OnEventLine(std::string(5000, 'x')).ok());
  EXPECT_FALSE(live.OnEventLine(R"({"Event":"SparkListenerTaskEnd","Stage ID":"x"})").ok());
  EXPECT_TRUE(live.OnEventLine("   ").ok());  // blank, as the file reader skips it
  EXPECT_EQ(live.Counts().events, 1);
  EXPECT_EQ(live.Counts().rejected_lines, 3);
  Result<report::Analysis> analysis = live.Finish("t");
  ASSERT_TRUE(analysis.ok());
  EXPECT_EQ(analysis->read.bad_line_count, 3);
  EXPECT_EQ(analysis->model.spark_version, "3.5.1");
  EXPECT_FALSE(live.OnEventLine(R"({"Event":"SparkListenerLogStart"})").ok());
  EXPECT_FALSE(live.Finish("t").ok());
  EXPECT_FALSE(live.Snapshot(-1).has_model_figures);
}

// Through the aggregator: metrics on /metrics equal the engine's numbers, every series carries
// the application's labels, and the end writes the four reports.
TEST(DriverAggregatorLive, MetricsEqualTheEnginePhasesAndReportsAreWritten) {
  fs::path dir = TempDir("aggregator");
  fs::path file = dir / "demo.json";
  std::string log = testing::GenerateEventLog(testing::DemoApp());
  std::ofstream(file) << log;
  report::Analysis offline = AnalyzeFile(file);
  const diagnosis::PhaseBreakdown& p = offline.phases;

  AggregatorOptions options;
  options.output_dir = (dir / "out").string();
  options.live_refresh_interval_ms = 0;
  options.live_extend_to_now = false;
  auto started = DriverAggregator::Start(options);
  ASSERT_TRUE(started.ok());
  DriverAggregator& aggregator = **started;
  for (const std::string& line : Lines(log)) EXPECT_TRUE(aggregator.OnEvent(line).ok());
  EXPECT_FALSE(aggregator.OnEvent("garbage").ok());

  std::string metrics = aggregator.registry().Render();
  const std::string app = "application_id=\"" + offline.model.app_id + "\"";
  EXPECT_DOUBLE_EQ(Sample(metrics, "spark_phase_compute_seconds"), p.compute_ms / 1000.0);
  EXPECT_DOUBLE_EQ(Sample(metrics, "spark_phase_task_wait_seconds"), p.task_wait_ms / 1000.0);
  EXPECT_DOUBLE_EQ(Sample(metrics, "spark_phase_io_write_seconds"), p.io_write_ms / 1000.0);
  EXPECT_DOUBLE_EQ(Sample(metrics, "spark_resource_wait_seconds"),
                   (p.resource_wait_ms + p.slot_starved_wall_ms) / 1000.0);
  EXPECT_GT(p.resource_wait_ms, 20000);  // the demo waits 20 s for executors
  EXPECT_DOUBLE_EQ(Sample(metrics, "spark_phase_breakdown_ratio", {"phase=\"compute\""}),
                   p.Ratio(p.compute_ms));
  EXPECT_DOUBLE_EQ(Sample(metrics, "spark_phase_breakdown_ratio", {"phase=\"resource_wait\""}),
                   p.Ratio(p.resource_wait_ms));
  EXPECT_DOUBLE_EQ(Sample(metrics, "spark_phase_breakdown_ratio", {"phase=\"task_wait\""}),
                   p.Ratio(p.task_wait_ms));
  int64_t memory_spill = 0, disk_spill = 0;
  for (const model::TaskAttempt& task : offline.model.tasks) {
    memory_spill += task.metrics.memory_bytes_spilled;
    disk_spill += task.metrics.disk_bytes_spilled;
  }
  EXPECT_GT(memory_spill, 0);
  EXPECT_DOUBLE_EQ(Sample(metrics, "spark_spill_bytes_total", {"medium=\"memory\""}),
                   static_cast<double>(memory_spill));
  EXPECT_DOUBLE_EQ(Sample(metrics, "spark_spill_bytes_total", {"medium=\"disk\""}),
                   static_cast<double>(disk_spill));
  EXPECT_EQ(Sample(metrics, "spark_running_tasks"), 0);
  // Every successful task of every stage is in the duration histograms, split by stage kind.
  int64_t successful = 0;
  for (const model::TaskAttempt& task : offline.model.tasks) {
    successful += task.end == model::TaskEndKind::kSuccess;
  }
  EXPECT_EQ(Sample(metrics, "spark_task_duration_seconds_count", {"stage_kind=\"compute\""}) +
                Sample(metrics, "spark_task_duration_seconds_count", {"stage_kind=\"write\""}),
            successful);
  EXPECT_GT(Sample(metrics, "spark_task_duration_seconds_count", {"stage_kind=\"write\""}), 0);
  EXPECT_EQ(Sample(metrics, "sparkprof_driver_events_total", {"outcome=\"rejected\""}), 1);
  // Labels on every sample, the existing agent series included.
  for (const std::string& line : Lines(metrics)) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_NE(line.find(app), std::string::npos) << line;
    EXPECT_NE(line.find("application_name=\"nightly-etl\""), std::string::npos) << line;
  }

  auto paths = aggregator.FinishApplication();
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  ASSERT_EQ(paths->size(), 4u);
  for (const std::string& path : *paths) EXPECT_GT(fs::file_size(path), 100u) << path;
  // report.json is the same document `sparkprof analyze --format json` writes, input aside.
  std::string written = ReadFile((*paths)[1]);
  EXPECT_NE(written.find("\"live\""), std::string::npos);
  auto again = aggregator.FinishApplication();  // once
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *paths);
  // The final figures stay after the end.
  EXPECT_DOUBLE_EQ(Sample(aggregator.registry().Render(), "spark_phase_compute_seconds"),
                   p.compute_ms / 1000.0);
  fs::remove_all(dir);
}

// The driver's report.json carries its live feed's batch counts, queue_full included: batches
// the ingest queue had no room for (here: every batch is larger than its byte limit).
// The UI tab's data: while the application runs, the report of the lines so far (what `sparkprof
// analyze` of that prefix says, findings included); once it has ended, the end's report.json.
TEST(DriverAggregatorLive, UiJsonHasTheReportSoFarThenTheEndsReport) {
  fs::path dir = TempDir("ui_json");
  std::vector<std::string> lines = Lines(testing::GenerateEventLog(testing::DemoApp()));
  ASSERT_GT(lines.size(), 10u);
  const size_t half = lines.size() / 2;
  AggregatorOptions options;
  options.output_dir = (dir / "out").string();
  options.live_extend_to_now = false;
  auto started = DriverAggregator::Start(options);
  ASSERT_TRUE(started.ok());
  DriverAggregator& aggregator = **started;
  for (size_t i = 0; i < half; ++i) ASSERT_TRUE(aggregator.OnEvent(lines[i]).ok());

  auto so_far = aggregator.live().AnalysisSoFar("live");
  ASSERT_TRUE(so_far.ok()) << so_far.status().ToString();
  fs::path prefix = dir / "prefix.json";
  {
    std::ofstream out(prefix);
    for (size_t i = 0; i < half; ++i) out << lines[i] << "\n";
  }
  report::Analysis offline = AnalyzeFile(prefix);
  ASSERT_EQ(so_far->findings.size(), offline.findings.size());
  for (size_t i = 0; i < offline.findings.size(); ++i) {
    EXPECT_EQ(so_far->findings[i].rule, offline.findings[i].rule);
  }
  std::string json = aggregator.LiveUiJson();
  EXPECT_NE(json.find("\"application_finished\":false"), std::string::npos);
  EXPECT_NE(json.find("\"report\":{"), std::string::npos);
  EXPECT_NE(json.find("sparkprof.report/v1"), std::string::npos);
  EXPECT_FALSE(aggregator.live().finished());  // looking changed nothing
  // Pages asking within kUiJsonMinIntervalMs get the document computed for the first.
  ASSERT_TRUE(aggregator.OnEvent(lines[half]).ok());
  EXPECT_EQ(aggregator.LiveUiJson(), json);

  for (size_t i = half + 1; i < lines.size(); ++i) {
    ASSERT_TRUE(aggregator.OnEvent(lines[i]).ok());
  }
  ASSERT_TRUE(aggregator.FinishApplication().ok());
  json = aggregator.LiveUiJson();
  EXPECT_NE(json.find("\"application_finished\":true"), std::string::npos);
  std::ifstream in(fs::path(aggregator.OutputDirectory()) / "report.json");
  std::stringstream report_json;
  report_json << in.rdbuf();
  ASSERT_FALSE(report_json.str().empty());
  EXPECT_NE(json.find(report_json.str()), std::string::npos);
  fs::remove_all(dir);
}

TEST(DriverAggregatorLive, ReportJsonCountsBatchesDroppedForAFullIngestQueue) {
  const fs::path dir =
      fs::temp_directory_path() / ("sparkprof_queue_full_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  AggregatorOptions options;
  options.output_dir = dir.string();
  options.ingest_queue.max_bytes = 16;
  auto started = DriverAggregator::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  DriverAggregator& aggregator = **started;
  for (const std::string& line : Lines(testing::GenerateEventLog(testing::DemoApp()))) {
    (void)aggregator.OnEvent(line);
  }
  const std::vector<uint8_t> batch(64, 0x5a);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(aggregator.Enqueue(batch.size(),
                                 [&](uint8_t* to) {
                                   std::memcpy(to, batch.data(), batch.size());
                                   return true;
                                 }),
              IngestOutcome::kQueueFull);
  }
  auto paths = aggregator.FinishApplication();
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  simdjson::padded_string json(ReadFile((*paths)[1]));
  simdjson::dom::parser parser;
  simdjson::dom::element report = parser.parse(json);
  EXPECT_EQ(uint64_t(report["driver"]["batches"]["queue_full"]), 3u);
  EXPECT_EQ(uint64_t(report["driver"]["batches"]["accepted"]), 0u);
  EXPECT_EQ(uint64_t(report["driver"]["batches"]["invalid"]), 0u);
  fs::remove_all(dir);
}

// Events on one thread (Spark's listener), scrapes on another (the exposer): no race, no torn
// figures (ASan/TSan builds run this), and the last scrape sees every event.
TEST(DriverAggregatorLive, EventsAndScrapesConcurrently) {
  std::vector<std::string> lines = Lines(testing::GenerateEventLog(testing::DemoApp()));
  AggregatorOptions options;
  options.live_refresh_interval_ms = 0;
  auto started = DriverAggregator::Start(options);
  ASSERT_TRUE(started.ok());
  DriverAggregator& aggregator = **started;
  std::atomic<bool> done{false};
  std::atomic<int> scrapes{0};
  std::thread scraper([&] {
    do {
      std::string text = aggregator.registry().Render();
      EXPECT_NE(text.find("spark_running_tasks"), std::string::npos);
      ++scrapes;
    } while (!done.load());
  });
  while (scrapes.load() == 0) std::this_thread::yield();  // overlap for sure
  for (const std::string& line : lines) EXPECT_TRUE(aggregator.OnEvent(line).ok());
  done = true;
  scraper.join();
  EXPECT_GT(scrapes, 0);
  std::string last = aggregator.registry().Render();
  EXPECT_EQ(Sample(last, "sparkprof_driver_events_total", {"outcome=\"accepted\""}),
            static_cast<double>(lines.size()));
  EXPECT_EQ(Sample(last, "spark_running_tasks"), 0);
}

}  // namespace
}  // namespace sparkprof::driver
