// Each rule fires on a log that has the problem (a shared real log, named with the reason, or a
// synthetic log with the problem injected on purpose) and stays silent where it is absent.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "analyzer/diagnosis/diagnosis_input.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/severity.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/markdown_report.h"
#include "analyzer/report/text_report.h"
#include "analyzer/testing/analysis_test_util.h"
#include "analyzer/testing/synthetic_app.h"

namespace sparkprof::diagnosis {
namespace {

using test_util::AnalyzeShared;
using test_util::AnalyzeText;
using test_util::EvidenceValue;
using test_util::FindingsOf;
using test_util::RecommendsKey;

const char* kRapids = "NVIDIA+spark-rapids-tools/core/src/test/resources/";

// `var` is the name it declares, which parentheses would not compile.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SHARED_OR_SKIP(var, label)                            \
  std::optional<report::Analysis> var = AnalyzeShared(label); \
  if (!var) GTEST_SKIP() << "shared event log not present: " << label
// NOLINTEND(bugprone-macro-parentheses)

// ---- Root cause before symptom: the README demo (skewed join that spills and OOMs) ----

TEST(RootCause, DemoSpillIsBlamedOnSkewNotMemory) {
  report::Analysis a =
      AnalyzeText(sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp()));
  auto skew = FindingsOf(a, "data-skew");
  ASSERT_EQ(skew.size(), 1u);
  EXPECT_EQ(skew[0]->stage_ids, std::vector<int32_t>{1});
  EXPECT_NE(skew[0]->title.find("Data skew"), std::string::npos) << skew[0]->title;
  EXPECT_GE(EvidenceValue(*skew[0], "max_over_median_bytes"), 2.0);

  auto spill = FindingsOf(a, "spill");
  ASSERT_EQ(spill.size(), 1u);
  EXPECT_NE(spill[0]->title.find("caused by data skew"), std::string::npos) << spill[0]->title;
  EXPECT_FALSE(RecommendsKey(*spill[0], "spark.executor.memory"));
  EXPECT_FALSE(RecommendsKey(*spill[0], "spark.sql.shuffle.partitions"));
  EXPECT_TRUE(RecommendsKey(*spill[0], "spark.sql.adaptive.skewJoin.enabled"));
  // The root cause is listed before its symptom.
  size_t skew_at = 0, spill_at = 0;
  for (size_t i = 0; i < a.findings.size(); ++i) {
    if (a.findings[i].rule == "data-skew") skew_at = i;
    if (a.findings[i].rule == "spill") spill_at = i;
  }
  EXPECT_LT(skew_at, spill_at);

  // The OOM retry happened in the skewed stage: the failure finding says skew too.
  auto failures = FindingsOf(a, "task-failures");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0]->explanation.find("data-skewed"), std::string::npos);
  EXPECT_FALSE(RecommendsKey(*failures[0], "spark.executor.memory"));
}

TEST(RootCause, DemoGcInSkewedTasksIsBlamedOnSkew) {
  sparkprof::testing::SyntheticApp app = sparkprof::testing::DemoApp();
  app.stages[1].gc_fraction = 0.30;  // skewed tasks get 3x this: GC concentrated in them
  app.stages[1].task_ms = 2400;      // enough run time for the 5-minute floor
  app.stages[1].skewed_tasks = 4;    // 4 hot partitions x 40 hold most of the GC time
  report::Analysis a = AnalyzeText(sparkprof::testing::GenerateEventLog(app));
  auto gc = FindingsOf(a, "gc-pressure");
  ASSERT_EQ(gc.size(), 1u);
  EXPECT_NE(gc[0]->title.find("skewed tasks"), std::string::npos) << gc[0]->title;
  EXPECT_FALSE(RecommendsKey(*gc[0], "spark.executor.memory"));
  EXPECT_GE(EvidenceValue(*gc[0], "gc_share_in_skewed_tasks"), 0.5);
}

TEST(RootCause, EvenSpillWithoutSkewRecommendsPartitions) {
  sparkprof::testing::SyntheticApp app;
  app.extra_properties = {{"spark.sql.shuffle.partitions", "64"}, {"spark.executor.memory", "4g"}};
  sparkprof::testing::SyntheticStage map;
  map.name = "map";
  map.tasks = 32;
  map.shuffle_write_bytes_per_task = 256ll << 20;
  app.stages.push_back(map);
  sparkprof::testing::SyntheticStage agg;
  agg.name = "groupBy at Agg.scala:10";
  agg.tasks = 64;
  agg.task_ms = 8000;
  agg.shuffle_read_bytes_per_task = 512ll << 20;
  agg.memory_spill_bytes_per_task = 1ll << 30;  // every task spills (no skewed tasks)
  agg.disk_spill_bytes_per_task = 300ll << 20;
  agg.parents = {0};
  app.stages.push_back(agg);
  report::Analysis a = AnalyzeText(sparkprof::testing::GenerateEventLog(app));
  EXPECT_TRUE(FindingsOf(a, "data-skew").empty());
  auto spill = FindingsOf(a, "spill");
  ASSERT_EQ(spill.size(), 1u);
  EXPECT_EQ(spill[0]->stage_ids, std::vector<int32_t>{1});
  EXPECT_EQ(spill[0]->title.find("skew"), std::string::npos) << spill[0]->title;
  EXPECT_TRUE(RecommendsKey(*spill[0], "spark.sql.shuffle.partitions"));
  EXPECT_GT(spill[0]->impact.time_saved_ms_high, spill[0]->impact.time_saved_ms_low);
}

// ---- Demo: the other problems it was built with ----

TEST(Rules, DemoResourceWaitIoWriteAndExecutorLoss) {
  report::Analysis a =
      AnalyzeText(sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp()));
  auto wait = FindingsOf(a, "resource-wait");  // executors register 20 s after the start
  ASSERT_EQ(wait.size(), 1u);
  EXPECT_NEAR(EvidenceValue(*wait[0], "resource_wait_ms"), 20300, 50);
  auto write = FindingsOf(a, "io-write-bound");  // 45 s job commit after the last task
  ASSERT_EQ(write.size(), 1u);
  EXPECT_EQ(write[0]->stage_ids, std::vector<int32_t>{2});
  EXPECT_NEAR(EvidenceValue(*write[0], "job_commit_gap_ms"), 45010, 100);
  auto loss = FindingsOf(a, "executor-loss");  // container killed for memory
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_EQ(EvidenceValue(*loss[0], "lost_to_memory"), 1);
  EXPECT_TRUE(RecommendsKey(*loss[0], "spark.executor.memoryOverhead"));
  // Ranked by expected saving, except that a symptom follows its root cause.
  for (size_t i = 1; i < a.findings.size(); ++i) {
    if (!a.findings[i].symptom_of.empty() || !a.findings[i - 1].symptom_of.empty()) continue;
    EXPECT_GE(a.findings[i - 1].expected_saving_ms(), a.findings[i].expected_saving_ms())
        << a.findings[i - 1].rule << " before " << a.findings[i].rule;
  }
}

// Issue 33: severity agrees with impact (severity.h). A performance finding is critical only
// when it is expected to save >= 25% of the wall time or of the core-hours held, a warning from
// 5%; failures keep theirs whatever they cost.
TEST(Severity, PerformanceFollowsTheSavingFailuresStayCritical) {
  EXPECT_EQ(SeverityForSavingShare(0.0), Severity::kInfo);
  EXPECT_EQ(SeverityForSavingShare(0.049), Severity::kInfo);
  EXPECT_EQ(SeverityForSavingShare(0.05), Severity::kWarning);
  EXPECT_EQ(SeverityForSavingShare(0.249), Severity::kWarning);
  EXPECT_EQ(SeverityForSavingShare(0.25), Severity::kCritical);
  Finding releases_capacity;  // idle executors: no wall time, core-hours
  releases_capacity.impact.core_hours_saved_low = 2;
  releases_capacity.impact.core_hours_saved_high = 4;  // 3 of the 10 held: 30%
  EXPECT_NEAR(SavingShare(releases_capacity, 60'000, 10), 0.3, 1e-9);
  Finding saves_time;
  saves_time.impact.time_saved_ms_low = 0;
  saves_time.impact.time_saved_ms_high = 20'000;  // the middle, 10 s of 100 s
  saves_time.impact.core_hours_saved_high = 9;    // task time: not capacity released
  EXPECT_NEAR(SavingShare(saves_time, 100'000, 10), 0.1, 1e-9);
  EXPECT_TRUE(IsFailureRule("job-failures"));
  EXPECT_TRUE(IsFailureRule("executor-loss"));
  EXPECT_FALSE(IsFailureRule("data-skew"));

  report::Analysis a =
      AnalyzeText(sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp()));
  const double held = HeldCoreHours(a.model);
  ASSERT_GT(held, 0);
  bool failure_seen = false;
  for (const Finding& f : a.findings) {
    const double share = SavingShare(f, a.phases.wall_ms, held);
    if (IsFailureRule(f.rule)) {
      failure_seen = true;
      continue;
    }
    EXPECT_LE(f.severity, SeverityForSavingShare(share)) << f.rule << " saves " << share;
  }
  // The executor lost to memory saves no measured time and stays critical.
  auto loss = FindingsOf(a, "executor-loss");
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_EQ(loss[0]->expected_saving_ms(), 0);
  EXPECT_EQ(loss[0]->severity, Severity::kCritical);
  EXPECT_TRUE(failure_seen);
}

// Issue 33: words that fit the run. The same 20 s wait for executors, told by how the run got them.
report::Analysis WaitedFor(const std::string& master, bool one_host, int64_t request_ms = -1) {
  sparkprof::testing::SyntheticApp app;
  app.master = master;
  app.executors = 2;
  app.cores_per_executor = 1;
  app.executors_on_one_host = one_host;
  app.executor_request_delay_ms = request_ms;
  sparkprof::testing::SyntheticStage stage;
  stage.name = "count";
  stage.tasks = 8;
  stage.task_ms = 3000;
  app.stages.push_back(stage);
  return AnalyzeText(sparkprof::testing::GenerateEventLog(app));
}

std::string WaitWords(const report::Analysis& a) {
  auto wait = FindingsOf(a, "resource-wait");
  if (wait.size() != 1u) return "(no resource-wait finding)";
  std::string words = wait[0]->explanation;
  for (const Recommendation& r : wait[0]->recommendations)
    words += " | " + r.value + " " + r.reason;
  return words;
}

TEST(Words, ResourceWaitTellsLocalClusterAndOneHostFromACluster) {
  const std::string no_room = "had no room (";
  const std::string no_manager = "no cluster manager is involved";

  const std::string local_cluster = WaitWords(WaitedFor("local-cluster[2,1,1024]", true));
  EXPECT_NE(local_cluster.find("local-cluster mode"), std::string::npos) << local_cluster;
  EXPECT_NE(local_cluster.find("executor start-up"), std::string::npos) << local_cluster;
  EXPECT_EQ(local_cluster.find(no_room), std::string::npos) << local_cluster;
  EXPECT_EQ(local_cluster.find(no_manager), std::string::npos) << local_cluster;

  const std::string one_host = WaitWords(WaitedFor("spark://127.0.0.1:7077", true));
  EXPECT_NE(one_host.find("one host (127.0.0.1)"), std::string::npos) << one_host;
  EXPECT_NE(one_host.find("executor start-up"), std::string::npos) << one_host;
  EXPECT_EQ(one_host.find(no_room), std::string::npos) << one_host;

  // A standalone cluster on several hosts: the Master may have had no free cores.
  report::Analysis hosts = WaitedFor("spark://master:7077", false);
  auto standalone = FindingsOf(hosts, "resource-wait");
  ASSERT_EQ(standalone.size(), 1u);
  EXPECT_TRUE(RecommendsKey(*standalone[0], "spark.cores.max"));

  // Several hosts: capacity or start-up, and the log cannot tell which; in YARN's words (its
  // queues and NodeManagers, no images to pull or pods: issue 34)...
  const std::string yarn = WaitWords(WaitedFor("yarn", false));
  EXPECT_NE(yarn.find("the cluster manager (YARN) had no room (queue at its capacity, no "
                      "NodeManager with the memory and vcores free, nodes scaling up)"),
            std::string::npos)
      << yarn;
  EXPECT_NE(yarn.find("cannot be told apart"), std::string::npos) << yarn;
  for (const char* not_yarn : {"image", "pod", "node pool"})
    EXPECT_EQ(yarn.find(not_yarn), std::string::npos) << not_yarn << ": " << yarn;
  const std::string kubernetes = WaitWords(WaitedFor("k8s://https://10.0.0.1:443", false));
  EXPECT_NE(kubernetes.find("images pulling"), std::string::npos) << kubernetes;
  EXPECT_EQ(kubernetes.find("NodeManager"), std::string::npos) << kubernetes;
  // ...unless it has the executors' request times: requested 2 s in, registered at 20.3 s.
  report::Analysis requested = WaitedFor("yarn", false, 2000);
  const std::string split = WaitWords(requested);
  EXPECT_NE(split.find("requested 2.0 s after the start and registered 18.3 s after its request"),
            std::string::npos)
      << split;
  EXPECT_NE(split.find("Most of the wait was executor start-up"), std::string::npos) << split;
  EXPECT_NE(split.find("found room, started the container and its JVM"), std::string::npos)
      << split;
  auto wait = FindingsOf(requested, "resource-wait");
  ASSERT_EQ(wait.size(), 1u);
  EXPECT_EQ(EvidenceValue(*wait[0], "first_executor_startup_ms"), 18300);

  // The backlog is a queue a reader can picture, not hours of summed task time.
  EXPECT_EQ(split.find("(task time)"), std::string::npos) << split;
}

// No report shows a time of day as a duration: first_slot_ms (epoch ms, ~490,000 hours) and its
// kind never appear as "490000h 12m"; every duration a report prints is under 1,000 hours here.
TEST(Words, NoEpochTimeIsPrintedAsADuration) {
  report::Analysis a = WaitedFor("local-cluster[2,1,1024]", true);
  ASSERT_GT(a.phases.first_slot_ms, 1'000'000'000'000);
  const std::regex long_duration(R"(\b\d{4,}h\b)");
  for (const std::string& text :
       {report::RenderText(a), report::RenderMarkdown(a), report::RenderHtml(a)}) {
    std::smatch match;
    EXPECT_FALSE(std::regex_search(text, match, long_duration)) << match.str(0);
  }
}

TEST(Words, TheTaskHeapIsTheDriversOnlyInLocalMode) {
  report::Analysis local_cluster = WaitedFor("local-cluster[2,1,1024]", true);
  DiagnosisInput input;
  MakeDiagnosisInput(local_cluster.model, input);
  EXPECT_EQ(input.Manager(), ClusterManager::kLocalCluster);
  EXPECT_FALSE(input.LocalMode());
  EXPECT_STREQ(input.TaskHeapKey(), "spark.executor.memory");  // exit code 52: the executor's
  for (const std::string& assumption : local_cluster.cost.assumptions) {
    EXPECT_EQ(assumption.find("local mode"), std::string::npos) << assumption;
  }
  report::Analysis local = WaitedFor("local[4]", true);
  DiagnosisInput local_input;
  MakeDiagnosisInput(local.model, local_input);
  EXPECT_EQ(local_input.Manager(), ClusterManager::kLocal);
  EXPECT_STREQ(local_input.TaskHeapKey(), "spark.driver.memory");
}

// Live runs: the plugin's S3A statistics (model::S3aIo) become the write finding's evidence.
TEST(Rules, IoWriteBoundCitesTheStagesS3aWork) {
  report::Analysis a =
      AnalyzeText(sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp()));
  ASSERT_EQ(FindingsOf(a, "io-write-bound").size(), 1u);
  EXPECT_EQ(EvidenceValue(*FindingsOf(a, "io-write-bound")[0], "s3a_stage_bytes_written"), -1);
  model::S3aIo& stage = a.model.stages.at({2, 0}).s3a;
  stage.measured = true;
  stage.bytes_written = 12 << 20;
  report::CompleteAnalysis(a);  // the stage's bytes alone: no request figures
  auto write = FindingsOf(a, "io-write-bound");
  ASSERT_EQ(write.size(), 1u);
  EXPECT_EQ(EvidenceValue(*write[0], "s3a_stage_bytes_written"), 12 << 20);
  EXPECT_EQ(EvidenceValue(*write[0], "s3a_application_multipart_uploads"), -1);

  model::S3aIo& executors = a.model.s3a;
  executors.measured = true;
  executors.request_counts = true;
  executors.multipart_initiated = 2;
  executors.multipart_parts = 5;
  executors.put_ms = 1500;
  executors.throttled = 3;
  report::CompleteAnalysis(a);
  write = FindingsOf(a, "io-write-bound");
  ASSERT_EQ(write.size(), 1u);
  EXPECT_EQ(EvidenceValue(*write[0], "s3a_stage_bytes_written"), 12 << 20);
  EXPECT_EQ(EvidenceValue(*write[0], "s3a_application_multipart_uploads"), 2);
  EXPECT_EQ(EvidenceValue(*write[0], "s3a_application_block_uploads"), 5);
  EXPECT_EQ(EvidenceValue(*write[0], "s3a_application_put_ms"), 1500);
  EXPECT_EQ(EvidenceValue(*write[0], "s3a_application_throttled"), 3);
  EXPECT_NE(write[0]->explanation.find("2 multipart uploads of 5 blocks"), std::string::npos)
      << write[0]->explanation;
  EXPECT_NE(write[0]->explanation.find("asked to slow down"), std::string::npos);
}

TEST(Rules, HealthySyntheticAppHasNoFindings) {
  sparkprof::testing::SyntheticApp app;
  app.executor_start_delay_ms = 2000;
  sparkprof::testing::SyntheticStage scan;
  scan.name = "scan";
  scan.tasks = 32;
  scan.input_bytes_per_task = 128ll << 20;
  scan.shuffle_write_bytes_per_task = 32ll << 20;
  app.stages.push_back(scan);
  sparkprof::testing::SyntheticStage agg;
  agg.name = "agg";
  agg.tasks = 32;
  agg.shuffle_read_bytes_per_task = 32ll << 20;
  agg.parents = {0};
  app.stages.push_back(agg);
  report::Analysis a = AnalyzeText(sparkprof::testing::GenerateEventLog(app));
  for (const Finding& f : a.findings) ADD_FAILURE() << f.rule << ": " << f.title;
}

TEST(Rules, TooManySmallTasksOnSynthetic) {
  sparkprof::testing::SyntheticApp app;
  app.executor_start_delay_ms = 1000;
  sparkprof::testing::SyntheticStage tiny;
  tiny.name = "many small files";
  tiny.tasks = 6000;  // DataFlint: > 5000 tasks with median < 500 ms
  tiny.task_ms = 120;
  tiny.input_bytes_per_task = 1 << 20;
  app.stages.push_back(tiny);
  report::Analysis a = AnalyzeText(sparkprof::testing::GenerateEventLog(app));
  auto small = FindingsOf(a, "too-many-small-tasks");
  ASSERT_EQ(small.size(), 1u);
  // max(2 x 16 slots, 6000 MiB read / 128 MiB) = 47.
  EXPECT_EQ(EvidenceValue(*small[0], "recommended_partitions"), 47);
  EXPECT_TRUE(FindingsOf(a, "too-few-partitions").empty());
  // 40 ms per task between launch and finish beyond run time, against 120 ms tasks.
  auto overhead = FindingsOf(a, "scheduler-overhead");
  ASSERT_EQ(overhead.size(), 1u);
  EXPECT_GE(EvidenceValue(*overhead[0], "overhead_share"), 0.2);
  report::Analysis demo =
      AnalyzeText(sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp()));
  EXPECT_TRUE(FindingsOf(demo, "scheduler-overhead").empty());
}

TEST(Rules, ShuffleBottleneckOnSynthetic) {
  sparkprof::testing::SyntheticApp app;
  app.executor_start_delay_ms = 1000;
  sparkprof::testing::SyntheticStage map;
  map.name = "map";
  map.tasks = 32;
  map.shuffle_write_bytes_per_task = 512ll << 20;
  app.stages.push_back(map);
  sparkprof::testing::SyntheticStage reduce;
  reduce.name = "reduce with slow fetches";
  reduce.tasks = 64;
  reduce.task_ms = 6000;
  reduce.shuffle_read_bytes_per_task = 256ll << 20;
  reduce.shuffle_fetch_wait_ms_per_task = 2500;  // ~40% of run time waiting on the network
  reduce.parents = {0};
  app.stages.push_back(reduce);
  report::Analysis a = AnalyzeText(sparkprof::testing::GenerateEventLog(app));
  auto shuffle = FindingsOf(a, "shuffle-bottleneck");
  ASSERT_EQ(shuffle.size(), 1u);
  EXPECT_EQ(shuffle[0]->stage_ids, std::vector<int32_t>{1});
  EXPECT_EQ(EvidenceValue(*shuffle[0], "fetch_wait_ms"), 64 * 2500);
  EXPECT_TRUE(RecommendsKey(*shuffle[0], "spark.reducer.maxSizeInFlight"));
  // The demo's 40 ms of fetch wait per task stays under the threshold.
  report::Analysis demo =
      AnalyzeText(sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp()));
  EXPECT_TRUE(FindingsOf(demo, "shuffle-bottleneck").empty());
  EXPECT_TRUE(FindingsOf(demo, "driver-bound").empty());
  EXPECT_TRUE(FindingsOf(demo, "idle-executors").empty());  // under 1 allocated core-hour
}

TEST(Rules, FetchFailuresOnSyntheticAreClassified) {
  sparkprof::testing::SyntheticApp app = sparkprof::testing::DemoApp();
  app.removed_executors = 0;
  app.stages[1].skewed_tasks = 3;
  app.stages[1].failed_attempts = 3;
  app.stages[1].failure_reason = "FetchFailed";
  app.stages[1].failure_message =
      "java.io.IOException: Failed to connect to worker-2.cluster.local/10.0.0.2:7337";
  report::Analysis a = AnalyzeText(sparkprof::testing::GenerateEventLog(app));
  auto fetch = FindingsOf(a, "fetch-failures");
  ASSERT_EQ(fetch.size(), 1u);
  EXPECT_EQ(fetch[0]->stage_ids, std::vector<int32_t>{1});
  EXPECT_EQ(EvidenceValue(*fetch[0], "fetch_failures"), 3);
  EXPECT_EQ(EvidenceValue(*fetch[0], "class_lost-worker"), 3);
  EXPECT_TRUE(RecommendsKey(*fetch[0], "spark.shuffle.service.enabled"));
  EXPECT_TRUE(FindingsOf(a, "task-failures").empty()) << "fetch failures are not reported twice";
  report::Analysis demo =
      AnalyzeText(sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp()));
  EXPECT_TRUE(FindingsOf(demo, "fetch-failures").empty());
}

TEST(Rules, SpeculationWasteOnSkewedCopies) {
  sparkprof::testing::SyntheticApp app;
  app.executor_start_delay_ms = 1000;
  app.extra_properties = {{"spark.speculation", "true"}};
  sparkprof::testing::SyntheticStage stage;
  stage.name = "skewed with speculation";
  stage.tasks = 32;
  stage.skewed_tasks = 4;
  stage.skew_factor = 6;
  stage.speculative_copies = 4;  // copies of skewed tasks lose: same data, same slowness
  stage.shuffle_read_bytes_per_task = 64ll << 20;
  app.stages.push_back(stage);
  report::Analysis a = AnalyzeText(sparkprof::testing::GenerateEventLog(app));
  auto waste = FindingsOf(a, "speculation-waste");
  ASSERT_EQ(waste.size(), 1u);
  EXPECT_EQ(EvidenceValue(*waste[0], "speculative_attempts"), 4);
  EXPECT_EQ(EvidenceValue(*waste[0], "speculative_wins"), 0);
  EXPECT_EQ(EvidenceValue(*waste[0], "killed_losing_attempts"), 4);
  EXPECT_TRUE(RecommendsKey(*waste[0], "spark.speculation"));
  EXPECT_TRUE(FindingsOf(a, "task-failures").empty()) << "killed copies are not failures";
}

TEST(SharedLogs, SpeculationWasteOnSparkShellLog) {
  // Stage 0: a speculative copy ran 53 s and was killed when the original won (42% of task time).
  // spark.speculation.multiplier is already 4 there: the rule must not suggest lowering it to 3.
  SHARED_OR_SKIP(
      a, "apache+spark/core/src/test/resources/spark-events/application_1628109047826_1317105");
  auto waste = FindingsOf(*a, "speculation-waste");
  ASSERT_EQ(waste.size(), 1u);
  EXPECT_EQ(EvidenceValue(*waste[0], "killed_losing_attempts"), 1);
  EXPECT_FALSE(RecommendsKey(*waste[0], "spark.speculation.multiplier"));
  // No speculation at all: silent.
  report::Analysis demo =
      AnalyzeText(sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp()));
  EXPECT_TRUE(FindingsOf(demo, "speculation-waste").empty());
}

// ---- Shared real logs where the problem is present ----

TEST(SharedLogs, IdleExecutorsOnNdsQ66) {
  // NDS q66 power run: 128 slots held for ~3.4 core-hours while tasks used 0.5 of them.
  SHARED_OR_SKIP(a, std::string(kRapids) + "spark-events-profiling/nds_q66_gpu.zstd");
  auto idle = FindingsOf(*a, "idle-executors");
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0]->severity, Severity::kCritical);
  EXPECT_GE(EvidenceValue(*idle[0], "idle_share"), 0.8);
  EXPECT_TRUE(RecommendsKey(*idle[0], "spark.dynamicAllocation.maxExecutors"));
  EXPECT_EQ(idle[0]->impact.time_saved_ms_high, 0);
  EXPECT_GT(idle[0]->impact.core_hours_saved_high, 0);
}

TEST(SharedLogs, SchedulerOverheadOnMultipleAttempts) {
  // 107 task attempts spent 1m 21s deserialising out of 4m 32s of task time (31% overhead).
  SHARED_OR_SKIP(a, std::string(kRapids) +
                        "spark-events-qualification/multiple_attempts/attempt_1_eventlog.zstd");
  auto overhead = FindingsOf(*a, "scheduler-overhead");
  ASSERT_EQ(overhead.size(), 1u);
  EXPECT_NEAR(EvidenceValue(*overhead[0], "overhead_share"), 0.31, 0.01);
  EXPECT_GT(EvidenceValue(*overhead[0], "deserialize_ms"),
            EvidenceValue(*overhead[0], "scheduler_delay_ms"));
}

TEST(SharedLogs, DriverBoundOnSparkShellSession) {
  // A YARN spark-shell session: 2m 19s of 4m 34s with no task running (1m 47s in one gap).
  SHARED_OR_SKIP(
      a, "apache+spark/core/src/test/resources/spark-events/application_1628109047826_1317105");
  auto driver = FindingsOf(*a, "driver-bound");
  ASSERT_EQ(driver.size(), 1u);
  EXPECT_EQ(driver[0]->severity, Severity::kInfo);  // interactive shell
  EXPECT_NEAR(EvidenceValue(*driver[0], "longest_gap_ms"), 107000, 1000);
}

TEST(SharedLogs, DataSkewOnMultipleAttemptsStage3) {
  // facts.json: stage 3 has 30 tasks, max 18.3 s against a median of 3.0 s (ratio 6.05).
  SHARED_OR_SKIP(a, std::string(kRapids) +
                        "spark-events-qualification/multiple_attempts/attempt_1_eventlog.zstd");
  auto skew = FindingsOf(*a, "data-skew");
  ASSERT_EQ(skew.size(), 1u);
  EXPECT_EQ(skew[0]->stage_ids, std::vector<int32_t>{3});
  EXPECT_NEAR(EvidenceValue(*skew[0], "max_over_median_time"), 6.05, 0.1);
}

TEST(SharedLogs, StragglersWithEvenDataAreNotCalledDataSkew) {
  // sparklint's example: stage 0's longest task took 30x the median but read the same 128 MiB
  // split as the others: time skew without data skew, so speculation, not salting.
  SHARED_OR_SKIP(a, "groupon+sparklint/src/test/resources/spark_event_log_example");
  EXPECT_TRUE(FindingsOf(*a, "data-skew").empty());
  auto skew = FindingsOf(*a, "straggler");
  ASSERT_FALSE(skew.empty());
  EXPECT_EQ(skew[0]->stage_ids, std::vector<int32_t>{0});
  EXPECT_EQ(skew[0]->category, Category::kResourceConfiguration);
  EXPECT_EQ(skew[0]->title.find("Data skew"), std::string::npos) << skew[0]->title;
  EXPECT_NEAR(EvidenceValue(*skew[0], "max_over_median_bytes"), 1.0, 0.05);
  EXPECT_TRUE(RecommendsKey(*skew[0], "spark.speculation"));
  // GC is 26% of run time there (facts.json gc_share 0.265) and not in skewed data. Fixing it
  // is expected to save 9.8-22.9 s of the 5m 12s run (5%): a warning, not critical
  // (severity.h).
  auto gc = FindingsOf(*a, "gc-pressure");
  ASSERT_EQ(gc.size(), 1u);
  EXPECT_EQ(gc[0]->severity, Severity::kWarning);
  EXPECT_NEAR(EvidenceValue(*gc[0], "gc_share"), 0.265, 0.01);
}

TEST(SharedLogs, SpillOnAqeShuffleStage4) {
  // facts.json: 553 MB memory / 119 MB disk spill.
  SHARED_OR_SKIP(a, std::string(kRapids) + "spark-events-qualification/aqeshuffle_eventlog.zstd");
  auto spill = FindingsOf(*a, "spill");
  ASSERT_EQ(spill.size(), 1u);
  EXPECT_EQ(spill[0]->stage_ids, std::vector<int32_t>{4});
  EXPECT_EQ(EvidenceValue(*spill[0], "disk_spill_bytes"), 118948980);
}

TEST(SharedLogs, TaskFailuresOnSparkTestApp) {
  // apache/spark test log: 10 of 26 task attempts ended in ExceptionFailure.
  SHARED_OR_SKIP(a, "apache+spark/core/src/test/resources/spark-events/app-20161115172038-0000");
  auto failures = FindingsOf(*a, "task-failures");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(EvidenceValue(*failures[0], "failed_attempts"), 10);
  EXPECT_EQ(failures[0]->severity, Severity::kCritical);
}

TEST(SharedLogs, ExecutorRemovedAfterTheLastTaskIsNotALoss) {
  // The Databricks q88 log removes one executor, "worker lost: ... got disassociated", 16 s after
  // its last stage completed and 8 ms before the application end: the shutdown, not a loss.
  SHARED_OR_SKIP(a,
                 std::string(kRapids) + "spark-events-qualification/nds_q88_photon_db_13_3.zstd");
  EXPECT_TRUE(FindingsOf(*a, "executor-loss").empty());
}

TEST(SharedLogs, ResourceWaitOnDrElephantLog) {
  // Dr. Elephant's test log: the first executor registers 43 s into a 55 s application.
  SHARED_OR_SKIP(a, "linkedin+dr-elephant/test/resources/spark_event_logs/event_log_1");
  auto wait = FindingsOf(*a, "resource-wait");
  ASSERT_EQ(wait.size(), 1u);
  EXPECT_NEAR(EvidenceValue(*wait[0], "resource_wait_ms"), 43288, 5);
  EXPECT_EQ(wait[0]->severity, Severity::kCritical);
}

TEST(SharedLogs, TooManySmallTasksOnNdsQ66) {
  // NDS q66: stage 23 runs 2185 tasks with a 39 ms median on 8 slots (facts.json worst_skew).
  SHARED_OR_SKIP(a, std::string(kRapids) + "spark-events-profiling/nds_q66_gpu.zstd");
  bool stage23 = false;
  for (const Finding* f : FindingsOf(*a, "too-many-small-tasks"))
    stage23 |= f->stage_ids == std::vector<int32_t>{23};
  EXPECT_TRUE(stage23);
}

TEST(SharedLogs, IoWriteBoundOnDatabricksSubExecution) {
  // Stage 7 writes 7.2 GiB with a task p95 of 71 s against 4.5 s in the other stages.
  SHARED_OR_SKIP(a, std::string(kRapids) + "spark-events-qualification/db_subExecution_id.zstd");
  auto write = FindingsOf(*a, "io-write-bound");
  ASSERT_EQ(write.size(), 1u);
  EXPECT_EQ(write[0]->stage_ids, std::vector<int32_t>{7});
}

TEST(SharedLogs, IoWriteBoundReadsTheSqlJobCommitAfterTheJob) {
  // Spark 3.5 S3A write: job 5 (stage 7) ends, then FileFormatWriter commits for 5548 ms and posts
  // "job commit time" = 5548 and "number of written files" = 2 in a DriverAccumUpdates after the
  // JobEnd (accumulators 350 and 345, registered by an AQE re-plan). The SQL execution ends
  // 5556 ms after the job. Before: job_commit_gap_ms=1, written_files=0, all of it driver-only.
  SHARED_OR_SKIP(a,
                 "kubeflow+mcp-apache-spark-history-server/examples/basic/events/"
                 "eventlog_v2_spark-110be3a8424d4a2789cb88134418217b/"
                 "events_1_spark-110be3a8424d4a2789cb88134418217b");
  ASSERT_EQ(a->model.sql_writes.size(), 1u);
  const model::SqlWrite& write = a->model.sql_writes[0];
  EXPECT_EQ(write.execution_id, 2);
  EXPECT_EQ(write.job_commit_ms, 5548);
  EXPECT_EQ(write.written_files, 2);
  EXPECT_EQ(write.written_bytes, 2702896161);
  EXPECT_FALSE(write.names_from_layout);
  auto io = FindingsOf(*a, "io-write-bound");
  ASSERT_EQ(io.size(), 1u);
  EXPECT_EQ(io[0]->stage_ids, std::vector<int32_t>{7});
  EXPECT_EQ(EvidenceValue(*io[0], "sql_job_commit_ms"), 5548);
  EXPECT_EQ(EvidenceValue(*io[0], "job_commit_gap_ms"), 1 + 5548);
  EXPECT_EQ(EvidenceValue(*io[0], "written_files"), 2);
  EXPECT_GT(io[0]->impact.time_saved_ms_high, 0);
  EXPECT_TRUE(RecommendsKey(*io[0], "spark.hadoop.fs.s3a.committer.name"));  // Parquet on s3a
  // The phase breakdown counts the commit as I/O write, not driver-only.
  EXPECT_GE(a->phases.commit_gap_ms, 5548);
  EXPECT_GE(a->phases.io_write_ms, 5548 + 1);
}

TEST(SharedLogs, IoWriteBoundOnDeltaNamesFilesWithoutS3aAdvice) {
  // Databricks Delta write: the plan does not list the write node, so the driver update
  // [[274,67],[279,126],[276,..],[277,0],[275,..]] is named by the tracker's id layout around the
  // stage's "task commit time" (278). Before: written_files=0 and S3A committer advice.
  SHARED_OR_SKIP(a, std::string(kRapids) + "spark-events-qualification/db_subExecution_id.zstd");
  ASSERT_EQ(a->model.sql_writes.size(), 1u);
  EXPECT_TRUE(a->model.sql_writes[0].names_from_layout);
  EXPECT_EQ(a->model.sql_writes[0].execution_id, 8);
  auto io = FindingsOf(*a, "io-write-bound");
  ASSERT_EQ(io.size(), 1u);
  EXPECT_EQ(EvidenceValue(*io[0], "written_files"), 67);
  EXPECT_EQ(EvidenceValue(*io[0], "sql_job_commit_ms"), 126);
  for (const Recommendation& r : io[0]->recommendations) {
    EXPECT_EQ(r.config_key.find("s3a"), std::string::npos) << r.config_key;
    EXPECT_EQ(r.config_key.find("commitProtocolClass"), std::string::npos) << r.config_key;
    EXPECT_EQ(r.value.find("PathOutputCommitProtocol"), std::string::npos) << r.value;
  }
  EXPECT_NE(io[0]->explanation.find("Delta"), std::string::npos);
}

TEST(SharedLogs, TooFewPartitionsIgnoresTimeWaitingBehindOtherStages) {
  // NDS q88 on Databricks: stage 61 ran one task of 266 ms but was submitted 3m 06s before it
  // completed (it waited behind concurrent stages). Before: "saves 1.5-3 min".
  SHARED_OR_SKIP(a,
                 std::string(kRapids) + "spark-events-qualification/nds_q88_photon_db_13_3.zstd");
  for (const Finding* f : FindingsOf(*a, "too-few-partitions")) {
    EXPECT_NE(f->stage_ids, std::vector<int32_t>{61});
    EXPECT_GE(EvidenceValue(*f, "total_task_ms"), 30000);
  }
  DiagnosisInput input;
  MakeDiagnosisInput(a->model, input);
  for (const StageStats& s : input.stages) {
    if (s.stage_id != 61) continue;
    EXPECT_GT(s.duration_ms, 180000);
    EXPECT_LT(s.task_span_ms, 1000);
  }
}

TEST(SharedLogs, IdleExecutorsNeverRecommendsMoreExecutorsThanTheRunHad) {
  // NDS q66: 8 executors x 16 cores. Counting launch..finish spans, tiny tasks overlap their
  // successors (the slot is freed before the driver records the finish), so 141 "ran at once" on
  // 128 slots and maxExecutors=9 was recommended. Per-executor counts are capped at its cores.
  SHARED_OR_SKIP(a, std::string(kRapids) + "spark-events-profiling/nds_q66_gpu.zstd");
  auto idle = FindingsOf(*a, "idle-executors");
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_LE(EvidenceValue(*idle[0], "p95_running_tasks"), EvidenceValue(*idle[0], "peak_slots"));
  EXPECT_EQ(EvidenceValue(*idle[0], "peak_executors"), 8);
  for (const Recommendation& r : idle[0]->recommendations) {
    if (r.config_key == "spark.dynamicAllocation.maxExecutors") {
      EXPECT_LE(std::stoi(r.value), 8);
    }
  }
}

TEST(SharedLogs, TooFewPartitionsAfterRepartitionByNumberAsksForTheCodeChange) {
  // Spark 3.5, AQE on: stage 7 reads the shuffle of `Exchange RoundRobinPartitioning(2),
  // REPARTITION_BY_NUM` in 2 tasks. Neither spark.sql.shuffle.partitions nor AQE sets that count.
  SHARED_OR_SKIP(a,
                 "kubeflow+mcp-apache-spark-history-server/examples/basic/events/"
                 "eventlog_v2_spark-110be3a8424d4a2789cb88134418217b/"
                 "events_1_spark-110be3a8424d4a2789cb88134418217b");
  auto few = FindingsOf(*a, "too-few-partitions");
  ASSERT_EQ(few.size(), 1u);
  EXPECT_FALSE(RecommendsKey(*few[0], "spark.sql.shuffle.partitions"));
  EXPECT_FALSE(RecommendsKey(*few[0], "spark.sql.adaptive.advisoryPartitionSizeInBytes"));
  ASSERT_EQ(few[0]->recommendations.size(), 1u);
  EXPECT_NE(few[0]->recommendations[0].value.find(".repartition(41)"), std::string::npos);
}

TEST(SharedLogs, SkewedInputSplitsAreNotSentToAqeSkewJoin) {
  // Stage 3 (saveAsTable) reads no shuffle: its longest task read 57.1 MiB of input against a
  // median of 5.4 KiB. Before: AQE skew-join settings and key salting, which only act on shuffles.
  SHARED_OR_SKIP(a, std::string(kRapids) +
                        "spark-events-qualification/multiple_attempts/attempt_1_eventlog.zstd");
  auto skew = FindingsOf(*a, "data-skew");
  ASSERT_EQ(skew.size(), 1u);
  EXPECT_NE(skew[0]->title.find("Skewed input"), std::string::npos) << skew[0]->title;
  EXPECT_FALSE(RecommendsKey(*skew[0], "spark.sql.adaptive.skewJoin.enabled"));
  EXPECT_TRUE(RecommendsKey(*skew[0], "spark.sql.files.maxPartitionBytes"));
  for (const Recommendation& r : skew[0]->recommendations)
    EXPECT_EQ(r.value.find("salt"), std::string::npos) << r.value;
}

TEST(SharedLogs, LocalModeSpillRecommendsDriverMemory) {
  // spark.master=local[*], Spark 3.x with AQE on: stage 4 spills 528 MiB. Before:
  // spark.executor.memory (which local mode ignores) and shuffle partitions without AQE's
  // advisory size (AQE would merge the extra partitions again).
  SHARED_OR_SKIP(a, std::string(kRapids) + "spark-events-qualification/aqeshuffle_eventlog.zstd");
  auto spill = FindingsOf(*a, "spill");
  ASSERT_EQ(spill.size(), 1u);
  EXPECT_FALSE(RecommendsKey(*spill[0], "spark.executor.memory"));
  EXPECT_TRUE(RecommendsKey(*spill[0], "spark.driver.memory"));
  EXPECT_TRUE(RecommendsKey(*spill[0], "spark.sql.adaptive.advisoryPartitionSizeInBytes"));
}

TEST(SharedLogs, IdleExecutorsInLocalModeAdvisesThreadsNotDynamicAllocation) {
  // spark.master=local[*] with 12 cores: the only "executor" is the driver, so dynamic allocation
  // and maxExecutors do not apply; the run needed one task thread 95% of the time.
  SHARED_OR_SKIP(a, std::string(kRapids) + "spark-events-profiling/eventlog-gpu-dsv1.zstd");
  auto idle = FindingsOf(*a, "idle-executors");
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(EvidenceValue(*idle[0], "peak_executors"), 1);
  EXPECT_FALSE(RecommendsKey(*idle[0], "spark.dynamicAllocation.maxExecutors"));
  EXPECT_FALSE(RecommendsKey(*idle[0], "spark.dynamicAllocation.enabled"));
  EXPECT_TRUE(RecommendsKey(*idle[0], "spark.master"));
}

// ---- Silence where the problem is absent, checked against independent figures ----

TEST(SharedLogs, SilentWhereFactsShowNoProblem) {
  std::filesystem::path facts_path = test_util::kEventLogs / "facts.json";
  if (!std::filesystem::exists(facts_path)) GTEST_SKIP() << "no facts.json";
  simdjson::dom::parser parser;
  simdjson::dom::element facts;
  ASSERT_EQ(parser.load(facts_path.string()).get(facts), simdjson::SUCCESS);
  int checked = 0;
  for (simdjson::dom::element fact : facts.get_array()) {
    std::string_view label;
    if (fact["label"].get_string().get(label) || label.find('!') != std::string_view::npos)
      continue;
    std::optional<report::Analysis> a = AnalyzeShared(std::string(label));
    if (!a) continue;
    ++checked;
    auto number = [](simdjson::dom::element value) {
      double out = 0;
      return value.get_double().get(out) == simdjson::SUCCESS ? out : 0.0;
    };
    double worst = 0;
    simdjson::dom::element worst_skew;
    if (!fact["worst_skew"].get(worst_skew) && worst_skew.is_object())
      worst = number(worst_skew["ratio"]);
    double mem_spill = number(fact["mem_spill"]), disk_spill = number(fact["disk_spill"]);
    double failed = number(fact["failed_tasks"]);
    if (worst < 2.0) {
      EXPECT_TRUE(FindingsOf(*a, "data-skew").empty()) << label << " worst max/median " << worst;
    }
    if (mem_spill == 0 && disk_spill == 0) {
      EXPECT_TRUE(FindingsOf(*a, "spill").empty()) << label;
    }
    if (failed == 0) {
      EXPECT_TRUE(FindingsOf(*a, "task-failures").empty()) << label;
    }
    // No failed job and no failed SQL execution: job-failures stays silent, and then nothing
    // ranks above the most important finding by saving.
    simdjson::dom::element job_results;
    bool any_job_failed = false;
    if (!fact["job_results"].get(job_results) && job_results.is_object()) {
      for (auto [result, count] : job_results.get_object()) {
        if (result != "JobSucceeded" && number(count) > 0) any_job_failed = true;
      }
    }
    if (!any_job_failed && number(fact["sql_failed"]) == 0) {
      EXPECT_TRUE(FindingsOf(*a, "job-failures").empty()) << label;
    }
    if (any_job_failed) {
      ASSERT_FALSE(a->findings.empty()) << label;
      EXPECT_EQ(a->findings.front().rule, "job-failures") << label;
    }
    for (const Finding& f : a->findings) {
      EXPECT_FALSE(f.title.empty()) << label;
      EXPECT_FALSE(f.explanation.empty()) << label;
      EXPECT_FALSE(f.recommendations.empty()) << label << " " << f.rule;
      EXPECT_LE(f.impact.time_saved_ms_low, f.impact.time_saved_ms_high) << label << " " << f.rule;
      EXPECT_FALSE(f.impact.method.empty()) << label;
      if (f.rule == "data-skew") {
        EXPECT_GE(EvidenceValue(f, "max_over_median_time"), 4.0) << label;
      }
    }
  }
  EXPECT_GT(checked, 50);
}

// ---- Reports ----

TEST(Reports, JsonFindingsCarryTheIssueKeysAndEscapeLogStrings) {
  sparkprof::testing::SyntheticApp app = sparkprof::testing::DemoApp();
  app.app_name = "<script>alert(1)</script>\x1b[31m";
  app.stages[1].failure_message = "bad \"quote\"\n\x1b[2J <script>";
  app.stages[1].name = "join \x07<b>";
  report::Analysis a = AnalyzeText(sparkprof::testing::GenerateEventLog(app));
  std::string json = report::RenderJson({&a});
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS);
  simdjson::dom::array findings;
  ASSERT_EQ(root["findings"].get_array().get(findings), simdjson::SUCCESS);
  ASSERT_GT(findings.size(), 3u);
  for (simdjson::dom::element f : findings) {
    for (const char* key : {"rule", "severity", "stage_ids", "title", "evidence", "explanation",
                            "recommendations", "expected_impact", "recipe"}) {
      EXPECT_FALSE(f[key].error()) << key;
    }
    std::string_view severity;
    ASSERT_FALSE(f["severity"].get_string().get(severity));
    EXPECT_TRUE(severity == "info" || severity == "warning" || severity == "critical");
    EXPECT_FALSE(f["expected_impact"]["time_saved_ms"]["low"].error());
    EXPECT_FALSE(f["expected_impact"]["core_hours_saved"]["high"].error());
    EXPECT_FALSE(f["expected_impact"]["method"].error());
  }
  for (const char* phase :
       {"resource_wait", "driver_only", "compute", "shuffle", "io_write", "gc", "idle_slots"}) {
    EXPECT_FALSE(root["phases"][phase]["ms"].error()) << phase;
    EXPECT_FALSE(root["phases"][phase]["ratio"].error()) << phase;
  }
  std::string text = report::RenderText(a);
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    EXPECT_TRUE(u == '\n' || (u >= 0x20 && u != 0x7F)) << "control character in text report";
  }
  EXPECT_NE(text.find("Phase breakdown"), std::string::npos);
  EXPECT_NE(text.find("Configuration changes"), std::string::npos);
  EXPECT_NE(text.find("--conf spark.sql.adaptive.skewJoin.enabled=true"), std::string::npos);
}

}  // namespace
}  // namespace sparkprof::diagnosis

namespace sparkprof::diagnosis {
namespace {

// The rules table (rules/rules.cc): one row per rule id, each id documented in the report schema,
// each recipe a page that exists, the first row evaluated; a finding of every rule the synthetic
// demo log triggers carries its row's recipe.
TEST(RulesTable, EveryRowIsDocumentedAndLinksARecipeThatExists) {
  const std::filesystem::path repo = SPARKPROF_SOURCE_DIR;
  std::ifstream schema_file(repo / "docs/report-schema.md");
  std::stringstream schema;
  schema << schema_file.rdbuf();
  std::set<std::string> ids;
  ASSERT_FALSE(rules::AllRules().empty());
  EXPECT_NE(rules::AllRules().front().evaluate, nullptr);
  for (const rules::Rule& rule : rules::AllRules()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << rule.id << " has two rows";
    EXPECT_NE(schema.str().find(std::string("`") + rule.id + "`"), std::string::npos)
        << rule.id << " is not in docs/report-schema.md";
    EXPECT_TRUE(std::filesystem::exists(repo / rule.recipe)) << rule.recipe;
    EXPECT_EQ(rules::FindRule(rule.id), &rule);
  }
  EXPECT_EQ(rules::FindRule("no-such-rule"), nullptr);
  const report::Analysis analysis =
      AnalyzeText(sparkprof::testing::GenerateEventLog(sparkprof::testing::DemoApp()));
  ASSERT_FALSE(analysis.findings.empty());
  for (const Finding& f : analysis.findings) {
    const rules::Rule* rule = rules::FindRule(f.rule);
    ASSERT_NE(rule, nullptr) << f.rule << " has no row";
    EXPECT_EQ(f.recipe, rule->recipe) << f.rule;
  }
}

TEST(ParseSizeMiB, SparkSizesAndHostileValues) {
  EXPECT_EQ(ParseSizeMiB("4g", 1), 4096);
  EXPECT_EQ(ParseSizeMiB("2GB", 1), 2048);
  EXPECT_EQ(ParseSizeMiB("512m", 1), 512);
  EXPECT_EQ(ParseSizeMiB("4096", 1), 4096);
  EXPECT_EQ(ParseSizeMiB("1t", 1), 1 << 20);
  EXPECT_EQ(ParseSizeMiB("2048k", 1), 2);
  EXPECT_EQ(ParseSizeMiB("1p", 1), kMaxSizeMiB);  // at the limit
  EXPECT_EQ(ParseSizeMiB("1025t", 7), 7);         // past it
  EXPECT_EQ(ParseSizeMiB("1073741825", 7), 7);    // past it, in MiB
  for (const char* hostile : {"-4g", "0", "0.5", "nan", "inf", "-inf", "1e300g", "1e999", "0x10",
                              "4gx", "lots", "g", "1k"}) {
    EXPECT_EQ(ParseSizeMiB(hostile, 1024), 1024) << hostile;
  }
}

// Huge, negative or garbage memory settings used to reach undefined behaviour (a double too
// large for int64_t) and print a negative --conf value; the advice now stays sane.
TEST(Rules, HostileMemoryPropertiesNeverGiveNonsenseAdvice) {
  for (const char* hostile : {"9e18g", "-8g", "nan", "inf", "99999999999999999999t", "garbage"}) {
    sparkprof::testing::SyntheticApp app = sparkprof::testing::DemoApp();
    app.extra_properties.push_back({"spark.executor.memory", hostile});
    app.extra_properties.push_back({"spark.executor.memoryOverhead", hostile});
    app.extra_properties.push_back({"spark.driver.memory", hostile});
    report::Analysis a = test_util::AnalyzeText(sparkprof::testing::GenerateEventLog(app));
    for (const Finding& f : a.findings) {
      for (const Recommendation& r : f.recommendations) {
        if (r.config_key.find("memory") == std::string::npos) continue;
        EXPECT_NE(r.value.rfind('-', 0), 0u) << hostile << ": " << r.config_key << "=" << r.value;
        int64_t mib = ParseSizeMiB(r.value, -1);
        if (r.value.find(' ') == std::string::npos && r.value.find('<') == std::string::npos) {
          EXPECT_GT(mib, 0) << hostile << ": " << r.config_key << "=" << r.value;
        }
      }
    }
  }
}

}  // namespace
}  // namespace sparkprof::diagnosis
