// The diagnosis blind spots of issue 11, each on a small hand-written log in Spark's own event
// format: a failed job comes first with its cause and fix; a Resubmitted task end keeps the work
// its attempt did; advice follows the cluster manager; findings rank by saving with root causes
// above their symptoms; an executor removed after the last task is not lost.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/diagnosis/diagnosis_input.h"
#include "analyzer/report/render.h"
#include "analyzer/testing/analysis_test_util.h"
#include "analyzer/testing/event_log_lines.h"

namespace sparkprof::diagnosis {
namespace {

using test_util::AnalyzeText;
using test_util::FindingsOf;
using test_util::RecommendsKey;

using Log = testing::EventLogLines;

const char* kSuccess = R"({"Reason":"Success"})";
const char* kUserException =
    R"({"Reason":"ExceptionFailure","Class Name":"java.lang.IllegalStateException","Description":"bad record 42","Stack Trace":[],"Full Stack Trace":"","Accumulator Updates":[]})";
const char* kOom =
    R"({"Reason":"ExceptionFailure","Class Name":"java.lang.OutOfMemoryError","Description":"Java heap space","Stack Trace":[],"Full Stack Trace":"","Accumulator Updates":[]})";

// A job whose stage 1 fails because task 2 throws twice (spark.task.maxFailures=2).
Log FailedJob(const char* failure_reason, const std::string& master = "spark://127.0.0.1:7077") {
  Log log(master);
  log.Executor("0", 2000);
  log.JobStart(0, {0}, 3000, "healthy count");
  log.StageSubmitted(0, 0, 3000);
  for (int i = 0; i < 4; ++i) log.Task(0, i, i, 0, "0", 3000, 4000, kSuccess, 900);
  log.StageCompleted(0, 0, 3000, 4000);
  log.JobEnd(0, 4000);
  log.JobStart(1, {1}, 5000, "the failing job");
  log.StageSubmitted(1, 0, 5000);
  log.Task(1, 10, 0, 0, "0", 5000, 5500, kSuccess, 400);
  log.Task(1, 11, 2, 0, "0", 5000, 5600, failure_reason, 500);
  log.Task(1, 12, 2, 1, "0", 5600, 6200, failure_reason, 500);
  const std::string message =
      "Job aborted due to stage failure: Task 2 in stage 1.0 failed 2 times, most recent failure: "
      "Lost task 2.1 in stage 1.0 (TID 12) (127.0.0.1 executor 0): java.lang.Foo: x";
  log.StageCompleted(1, 0, 5000, 6300, message);
  log.JobEnd(1, 6300, message);
  log.End(7000);
  return log;
}

TEST(JobFailures, AFailedJobIsTheFirstFindingWithTheTaskAndTheException) {
  report::Analysis a = AnalyzeText(FailedJob(kUserException).text());
  ASSERT_FALSE(a.findings.empty());
  const Finding& f = a.findings.front();
  EXPECT_EQ(f.rule, "job-failures");
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_EQ(f.stage_ids, std::vector<int32_t>{1});
  EXPECT_EQ(f.category, Category::kAlgorithmic);
  EXPECT_NE(f.title.find("java.lang.IllegalStateException"), std::string::npos) << f.title;
  EXPECT_NE(f.title.find("the failing job"), std::string::npos) << f.title;
  EXPECT_EQ(test_util::EvidenceValue(f, "task_index"), 2);
  EXPECT_EQ(test_util::EvidenceValue(f, "task_failures"), 2);
  EXPECT_NE(f.explanation.find("bad record 42"), std::string::npos) << f.explanation;
  ASSERT_FALSE(f.recommendations.empty());
  EXPECT_TRUE(f.recommendations.front().config_key.empty());  // a code fix, no setting
  // The JSON report's jobs[] says which job failed and why.
  ASSERT_EQ(a.summary.jobs.size(), 2u);
  EXPECT_EQ(a.summary.jobs[0].result, "succeeded");
  EXPECT_EQ(a.summary.jobs[1].result, "failed");
  EXPECT_EQ(a.summary.jobs[1].description, "the failing job");
  EXPECT_EQ(a.summary.jobs[1].failed_task_attempts, 2);
  EXPECT_EQ(a.summary.jobs[0].task_attempts, 4);
  EXPECT_NE(a.summary.jobs[1].failure_reason.find("Job aborted"), std::string::npos);
}

// Issue 29: the heap named first; smaller partitions of what the stage reads -- this one reads
// neither a shuffle nor files, so the code's own partition count, never
// spark.sql.shuffle.partitions --, then more heap.
TEST(JobFailures, OutOfMemoryFailuresAskForSmallerPartitionsAndMoreMemory) {
  report::Analysis a = AnalyzeText(FailedJob(kOom).text());
  ASSERT_FALSE(a.findings.empty());
  const Finding& f = a.findings.front();
  EXPECT_EQ(f.rule, "job-failures");
  EXPECT_EQ(f.category, Category::kResourceConfiguration);
  EXPECT_NE(f.title.find(": Executor heap exhausted (java.lang.OutOfMemoryError)"),
            std::string::npos)
      << f.title;
  EXPECT_EQ(f.explanation.rfind("Executor heap exhausted: task 2 of stage 1 threw "
                                "java.lang.OutOfMemoryError: Java heap space",
                                0),
            0u)
      << f.explanation;
  EXPECT_FALSE(RecommendsKey(f, "spark.sql.shuffle.partitions"));
  ASSERT_FALSE(f.recommendations.empty());
  EXPECT_NE(f.recommendations.front().value.find("more partitions"), std::string::npos);
  EXPECT_TRUE(RecommendsKey(f, "spark.executor.memory"));
  // The task failures are its symptom, ranked after it.
  auto failures = FindingsOf(a, "task-failures");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]->symptom_of, "job-failures");
}

// Issue 33: an executor's heap OutOfMemoryError on local-cluster[...] (its tasks run in executor
// JVMs) is the executor's heap; only local[N] runs tasks in the driver.
TEST(JobFailures, OutOfMemoryOnLocalClusterIsTheExecutorsHeap) {
  report::Analysis cluster = AnalyzeText(FailedJob(kOom, "local-cluster[2,1,1024]").text());
  ASSERT_FALSE(cluster.findings.empty());
  EXPECT_TRUE(RecommendsKey(cluster.findings.front(), "spark.executor.memory"));
  for (const Finding& f : cluster.findings) {
    EXPECT_FALSE(RecommendsKey(f, "spark.driver.memory")) << f.rule;
  }
  report::Analysis local = AnalyzeText(FailedJob(kOom, "local[2]").text());
  ASSERT_FALSE(local.findings.empty());
  EXPECT_TRUE(RecommendsKey(local.findings.front(), "spark.driver.memory"));
}

TEST(JobFailures, FetchFailuresAskToKeepShuffleFiles) {
  const std::string fetch =
      R"({"Reason":"FetchFailed","Block Manager Address":{"Executor ID":"1","Host":"127.0.0.1","Port":1},"Shuffle ID":0,"Map ID":0,"Map Index":0,"Reduce ID":2,"Message":"Failed to connect"})";
  report::Analysis a = AnalyzeText(FailedJob(fetch.c_str()).text());
  ASSERT_FALSE(a.findings.empty());
  EXPECT_EQ(a.findings.front().rule, "job-failures");
  EXPECT_TRUE(RecommendsKey(a.findings.front(), "spark.shuffle.service.enabled"));
}

TEST(Resubmitted, AResubmittedTaskEndKeepsTheSuccessfulAttemptsWork) {
  Log log;
  log.Executor("0", 2000);
  log.Executor("1", 2000);
  log.JobStart(0, {0}, 3000, "map");
  log.StageSubmitted(0, 0, 3000);
  log.Task(0, 0, 0, 0, "0", 3000, 4000, kSuccess, 900, 1000);
  log.Task(0, 1, 1, 0, "1", 3000, 4000, kSuccess, 900, 1000);
  // Executor 1 is lost: its map output (task 1) is resubmitted, then recomputed as attempt 1.
  log.ExecutorRemoved("1", 4100, "Command exited with code 137");
  log.TaskEndOnly(0, 1, 1, 0, "1", 3000, 4000, R"({"Reason":"Resubmitted"})", 0, 0);
  log.Task(0, 2, 1, 1, "0", 4200, 5200, kSuccess, 950, 1000);
  log.StageCompleted(0, 0, 3000, 5200);
  log.JobEnd(0, 5200);
  log.End(6000);
  report::Analysis a = AnalyzeText(log.text());
  EXPECT_EQ(a.summary.counts.resubmitted_tasks, 1);
  EXPECT_EQ(a.summary.counts.task_attempts, 3);
  EXPECT_EQ(a.summary.totals.executor_run_time_ms, 900 + 900 + 950);
  EXPECT_EQ(a.summary.totals.shuffle_write_bytes, 3000);
  ASSERT_EQ(a.summary.stages.size(), 1u);
  EXPECT_EQ(a.summary.stages[0].failed_task_attempts, 0);
  EXPECT_EQ(a.summary.task_end_reasons.at("Resubmitted"), 1);
  EXPECT_EQ(a.model.duplicate_task_ends, 0);
}

// A run that waited 60 s for its first executor, on each cluster manager.
report::Analysis WaitedOn(const std::string& master, bool databricks = false) {
  Log log(master);
  if (databricks) log.Add(R"({"Event":"DBCEventLoggingListenerMetadata","Timestamp":1000})");
  log.Executor("0", 61000);
  log.JobStart(0, {0}, 61000, "work");
  log.StageSubmitted(0, 0, 61000);
  for (int i = 0; i < 4; ++i) log.Task(0, i, i, 0, "0", 61000, 80000, kSuccess, 18000);
  log.StageCompleted(0, 0, 61000, 80000);
  log.JobEnd(0, 80000);
  log.End(81000);
  return AnalyzeText(log.text());
}

TEST(ClusterManagerAdvice, ResourceWaitFollowsTheClusterManager) {
  {
    report::Analysis a = WaitedOn("k8s://https://10.0.0.1:443");
    auto wait = FindingsOf(a, "resource-wait");
    ASSERT_EQ(wait.size(), 1u);
    EXPECT_FALSE(RecommendsKey(*wait[0], "spark.yarn.queue"));
    EXPECT_TRUE(RecommendsKey(*wait[0], "spark.kubernetes.allocation.batch.size"));
    EXPECT_NE(wait[0]->explanation.find("Kubernetes"), std::string::npos);
  }
  {
    // A standalone cluster whose executors all ran on one host (127.0.0.1): the wait is their
    // JVMs starting there, not a Master short of cores (issue 33).
    report::Analysis a = WaitedOn("spark://127.0.0.1:7077");
    auto wait = FindingsOf(a, "resource-wait");
    ASSERT_EQ(wait.size(), 1u);
    EXPECT_FALSE(RecommendsKey(*wait[0], "spark.yarn.queue"));
    EXPECT_FALSE(RecommendsKey(*wait[0], "spark.cores.max"));
    EXPECT_NE(wait[0]->explanation.find("executor start-up"), std::string::npos);
  }
  {
    report::Analysis a = WaitedOn("yarn");
    auto wait = FindingsOf(a, "resource-wait");
    ASSERT_EQ(wait.size(), 1u);
    EXPECT_TRUE(RecommendsKey(*wait[0], "spark.yarn.queue"));
  }
  {
    report::Analysis a = WaitedOn("spark://10.1.2.3:7077", true);
    auto wait = FindingsOf(a, "resource-wait");
    ASSERT_EQ(wait.size(), 1u);
    EXPECT_FALSE(RecommendsKey(*wait[0], "spark.yarn.queue"));
    EXPECT_FALSE(RecommendsKey(*wait[0], "spark.cores.max"));
    EXPECT_NE(wait[0]->recommendations.front().value.find("instance pool"), std::string::npos);
  }
}

TEST(ExecutorLoss, RemovalAfterTheLastTaskIsNotALossButALossMidRunIs) {
  auto run = [](int64_t removed_at, const std::string& reason) {
    Log log;
    log.Executor("0", 2000);
    log.Executor("1", 2000);
    log.JobStart(0, {0}, 3000, "work");
    log.StageSubmitted(0, 0, 3000);
    for (int i = 0; i < 4; ++i) log.Task(0, i, i, 0, "0", 3000, 9000, kSuccess, 5900);
    log.StageCompleted(0, 0, 3000, 9000);
    log.JobEnd(0, 9000);
    log.ExecutorRemoved("1", removed_at, reason);
    log.End(20000);
    return AnalyzeText(log.text());
  };
  EXPECT_TRUE(
      FindingsOf(run(15000, "worker lost: 127.0.0.1 disassociated"), "executor-loss").empty());
  EXPECT_EQ(FindingsOf(run(5000, "worker lost: 127.0.0.1 disassociated"), "executor-loss").size(),
            1u);
  // On a standalone cluster (the Log's master) nothing enforces a container limit: SIGKILL is
  // the host's OOM killer or an operator, never "raise spark.executor.memoryOverhead".
  report::Analysis killed = run(5000, "Command exited with code 137");
  auto loss = FindingsOf(killed, "executor-loss");
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_FALSE(RecommendsKey(*loss[0], "spark.executor.memoryOverhead"));
  EXPECT_EQ(test_util::EvidenceValue(*loss[0], "lost_other"), 1);
  // Killed for memory after the last task still says something about its memory.
  EXPECT_EQ(FindingsOf(run(15000, "Container killed by YARN for exceeding physical memory limits"),
                       "executor-loss")
                .size(),
            1u);
}

Finding Make(const char* rule, int64_t saving_ms, std::vector<int32_t> stages = {},
             Severity severity = Severity::kWarning) {
  Finding f;
  f.rule = rule;
  f.severity = severity;
  f.stage_ids = std::move(stages);
  f.impact.time_saved_ms_low = saving_ms;
  f.impact.time_saved_ms_high = saving_ms;
  f.cost_ms = saving_ms;
  return f;
}

std::vector<std::string> Rules(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  out.reserve(findings.size());
  for (const Finding& f : findings) out.push_back(f.rule);
  return out;
}

TEST(Ranking, FailuresFirstThenSavingWithSymptomsAfterTheirRoot) {
  std::vector<Finding> findings = {
      Make("spill", 90'000, {3}, Severity::kCritical),  // big symptom of the skew on stage 3
      Make("data-skew", 40'000, {3}),
      Make("resource-wait", 60'000),
      Make("gc-pressure", 5'000, {7}),  // stage 7 is not skewed: not a symptom
      Make("job-failures", 1, {9}),
      Make("task-failures", 100'000, {9}),
  };
  RankFindings(findings);
  EXPECT_EQ(Rules(findings),
            (std::vector<std::string>{"job-failures", "task-failures", "resource-wait", "data-skew",
                                      "spill", "gc-pressure"}));
  EXPECT_EQ(findings[1].symptom_of, "job-failures");
  EXPECT_EQ(findings[4].symptom_of, "data-skew");
  EXPECT_EQ(findings[5].symptom_of, "");
}

std::string Acc(int64_t id, const std::string& name, int64_t value);

TEST(Photon, ZeroTaskMetricsAreFilledFromPhotonsSqlMetrics) {
  // Photon tasks report no shuffle write time and no spill in Spark's task metrics; its own SQL
  // metrics carry them.
  Log log;
  log.Executor("0", 1500);
  log.JobStart(0, {0}, 2000, "photon");
  log.StageSubmitted(0, 0, 2000);
  for (int i = 0; i < 4; ++i) log.Task(0, i, i, 0, "0", 2000, 30000, kSuccess, 27000, 1 << 20);
  log.StageCompleted(0, 0, 2000, 30000, "",
                     Acc(1, "total time spent producing shuffle files", 40'000'000'000) + "," +
                         Acc(2, "num bytes spilled to disk due to memory pressure", 3ll << 30));
  log.JobEnd(0, 30000);
  log.End(31000);
  report::Analysis a = AnalyzeText(log.text());
  DiagnosisInput input;
  MakeDiagnosisInput(a.model, input);
  ASSERT_EQ(input.stages.size(), 1u);
  EXPECT_EQ(input.stages[0].shuffle_write_ms, 40'000);
  EXPECT_EQ(input.stages[0].disk_spill_bytes, 3ll << 30);
  EXPECT_EQ(input.stages[0].photon_figures, "shuffle write time, spill");
  auto spill = FindingsOf(a, "spill");
  ASSERT_EQ(spill.size(), 1u);
  EXPECT_NE(spill[0]->explanation.find("Photon"), std::string::npos);
}

// ---- Plan rules (SQL plans with their metrics) ----

// A plan node: name, simpleString, children, metrics as (accumulator id, name, type), metadata.
std::string Node(const std::string& name, const std::string& simple,
                 const std::vector<std::string>& children,
                 const std::vector<std::tuple<int64_t, std::string, std::string>>& metrics,
                 const std::string& metadata = "{}") {
  std::string out =
      R"({"nodeName":")" + name + R"(","simpleString":")" + simple + R"(","children":[)";
  for (size_t i = 0; i < children.size(); ++i) out += (i ? "," : "") + children[i];
  out += R"(],"metadata":)" + metadata + R"(,"metrics":[)";
  for (size_t i = 0; i < metrics.size(); ++i) {
    const auto& [id, metric, type] = metrics[i];
    out += std::string(i ? "," : "") + R"({"name":")" + metric + R"(","accumulatorId":)" +
           std::to_string(id) + R"(,"metricType":")" + type + R"("})";
  }
  return out + "]}";
}

std::string Acc(int64_t id, const std::string& name, int64_t value) {
  return R"({"ID":)" + std::to_string(id) + R"(,"Name":")" + name + R"(","Value":)" +
         std::to_string(value) + R"(,"Internal":true,"Count Failed Values":true,"Metadata":"sql"})";
}

// One SQL query in three stages (two maps and the stage reading the plan's top node), with the
// plan and the metric values given; each stage's tasks run 4 x run_ms.
report::Analysis PlanRun(const std::string& plan, const std::vector<std::string>& stage_accs,
                         int64_t run_ms = 5000, const std::string& threshold = "-1") {
  Log log;
  log.Add(
      R"({"Event":"SparkListenerEnvironmentUpdate","JVM Information":{},"Spark Properties":{"spark.master":"spark://h:7077","spark.sql.autoBroadcastJoinThreshold":")" +
      threshold + R"("},"Hadoop Properties":{},"System Properties":{},"Classpath Entries":{}})");
  log.Executor("0", 1500);
  log.SqlStart(0, 2000, plan);
  const int stages = static_cast<int>(stage_accs.size());
  std::vector<int> ids;
  ids.reserve(stages);
  for (int s = 0; s < stages; ++s) ids.push_back(s);
  log.JobStart(0, ids, 2000, "query");
  int64_t now = 2000, tid = 0;
  for (int s = 0; s < stages; ++s) {
    log.StageSubmitted(s, 0, now);
    for (int i = 0; i < 4; ++i) log.Task(s, tid++, i, 0, "0", now, now + run_ms, kSuccess, run_ms);
    log.StageCompleted(s, 0, now, now + run_ms, "", stage_accs[s]);
    now += run_ms;
  }
  log.JobEnd(0, now);
  log.End(now + 100);
  return AnalyzeText(log.text());
}

// Photon leaves "Peak Execution Memory" at 0 and reports "peak memory usage" per operator in the
// task's accumulables; the spill finding says where its peak came from. Without a Photon plan the
// task accumulables are not read (and a 0 stays 0).
report::Analysis PhotonPeakRun(bool photon_plan) {
  Log log;
  log.Executor("0", 1500);
  const std::string op = photon_plan ? "PhotonGroupingAgg" : "HashAggregate";
  log.SqlStart(0, 2000, Node(op, op, {}, {{7, "peak memory usage", "size"}}));
  log.JobStart(0, {0}, 2000, "photon");
  log.StageSubmitted(0, 0, 2000);
  for (int i = 0; i < 4; ++i) log.Task(0, i, i, 0, "0", 2000, 30000, kSuccess, 27000, 1 << 20);
  log.Add(R"({"Event":"SparkListenerStageExecutorMetrics","Executor ID":"0","Stage ID":0,)"
          R"("Stage Attempt ID":0,"Executor Metrics":{"OnHeapExecutionMemory":1048576,)"
          R"("OffHeapExecutionMemory":805306368}})");
  log.StageCompleted(0, 0, 2000, 30000, "",
                     Acc(2, "num bytes spilled to disk due to memory pressure", 3ll << 30) + "," +
                         Acc(7, "peak memory usage", 4 * (150ll << 20)));
  log.JobEnd(0, 30000);
  log.End(31000);
  std::string text = log.text();
  // Each task's end carries two Photon operators' peaks: 100 MiB and 50 MiB (as strings, the
  // way Spark writes SQL accumulator updates).
  const std::string empty = R"("Accumulables":[]},"Task Metrics")";
  const std::string peaks =
      R"("Accumulables":[{"ID":7,"Name":"peak memory usage","Update":"104857600",)"
      R"("Value":"104857600","Internal":true,"Count Failed Values":true,"Metadata":"sql"},)"
      R"({"ID":8,"Name":"peak memory usage","Update":"52428800","Value":"52428800"},)"
      R"({"ID":9,"Name":"number of output rows","Update":"5000000","Value":"5000000"}]},)"
      R"("Task Metrics")";
  for (size_t at = text.find(empty); at != std::string::npos; at = text.find(empty, at)) {
    text.replace(at, empty.size(), peaks);
    at += peaks.size();
  }
  return AnalyzeText(text);
}

TEST(Photon, TaskPeakMemoryIsTheSumOfItsOperatorsPeaks) {
  report::Analysis a = PhotonPeakRun(/*photon_plan=*/true);
  EXPECT_EQ(a.model.photon_peak_memory_tasks, 4);
  DiagnosisInput input;
  MakeDiagnosisInput(a.model, input);
  ASSERT_EQ(input.stages.size(), 1u);
  EXPECT_EQ(input.stages[0].peak_execution_memory_max, 150ll << 20);
  EXPECT_EQ(input.stages[0].executor_execution_memory_peak, (768ll << 20) + (1 << 20));
  EXPECT_EQ(input.stages[0].photon_figures, "spill, peak memory");
  auto spill = FindingsOf(a, "spill");
  ASSERT_EQ(spill.size(), 1u);
  EXPECT_NE(spill[0]->explanation.find("sum of its Photon operators' peaks, an upper bound"),
            std::string::npos);
  EXPECT_NE(spill[0]->confidence.reason.find("peak memory from Photon"), std::string::npos);
  // Beside it, the largest operator's peak (spark-rapids-tools' figure): 100 of the 150 MiB.
  EXPECT_EQ(input.stages[0].photon_peak_memory_largest_operator_max, 100ll << 20);
  EXPECT_NE(spill[0]->explanation.find("By its largest operator's peak instead (a lower bound; "
                                       "the figure spark-rapids-tools reports), a task held at "
                                       "most 100.0 MiB"),
            std::string::npos)
      << spill[0]->explanation;
  bool executor_peak = false;
  for (const auto& e : spill[0]->evidence) {
    executor_peak |= e.name == "executor_execution_memory_peak" && e.value == (769 << 20);
  }
  EXPECT_TRUE(executor_peak);
}

TEST(Photon, TaskAccumulablesAreNotReadWithoutAPhotonPlan) {
  report::Analysis a = PhotonPeakRun(/*photon_plan=*/false);
  EXPECT_EQ(a.model.photon_peak_memory_tasks, 0);
  for (const auto& task : a.model.tasks) {
    EXPECT_EQ(task.metrics.peak_execution_memory_bytes, 0);
    EXPECT_EQ(task.metrics.photon_peak_memory_largest_operator_bytes, 0);
  }
  EXPECT_EQ(a.summary.totals.photon_peak_memory_largest_operator_bytes_max, 0);
  EXPECT_EQ(report::RenderReport("json", {&a}).find("largest_operator"), std::string::npos);
  EXPECT_EQ(report::RenderReport("text", {&a}).find("Photon peak memory"), std::string::npos);
}

// Both definitions of a Photon task's peak, in every report and named: the operators' peaks
// summed (sparkprof's, an upper bound) and the largest operator's (spark-rapids-tools', a lower
// bound); the JSON has the second beside the first in every totals that holds such a task.
TEST(Photon, PeakMemoryByBothDefinitionsInEveryReport) {
  report::Analysis a = PhotonPeakRun(/*photon_plan=*/true);
  EXPECT_EQ(a.summary.totals.peak_execution_memory_bytes_max, 150ll << 20);
  EXPECT_EQ(a.summary.totals.photon_peak_memory_largest_operator_bytes_max, 100ll << 20);
  ASSERT_EQ(a.summary.stages.size(), 1u);
  EXPECT_EQ(a.summary.stages[0].totals.photon_peak_memory_largest_operator_bytes_max, 100ll << 20);
  const std::string json = report::RenderReport("json", {&a});
  size_t keys = 0;
  for (size_t at = json.find("\"photon_peak_memory_largest_operator_bytes_max\": 104857600");
       at != std::string::npos;
       at = json.find("\"photon_peak_memory_largest_operator_bytes_max\": 104857600", at + 1)) {
    ++keys;
  }
  EXPECT_EQ(keys, 3u) << json;  // the application's, the stage's, the job's
  for (const char* format : {"text", "md", "html"}) {
    std::string report = report::RenderReport(format, {&a});
    // Text wraps lines, HTML escapes the apostrophes: compare words.
    for (const std::string from : {"\n  ", "&#39;"}) {
      for (size_t at = report.find(from); at != std::string::npos; at = report.find(from, at)) {
        report.replace(at, from.size(), from == "&#39;" ? "'" : " ");
      }
    }
    EXPECT_NE(report.find("Photon peak memory, the largest of one task: 150.0 MiB as its "
                          "operators' peaks summed (sparkprof's figure: an upper bound, the peaks "
                          "need not coincide); 100.0 MiB as its largest operator's peak "
                          "(spark-rapids-tools' figure: a lower bound)"),
              std::string::npos)
        << format << ":\n"
        << report;
  }
}

TEST(PlanRules, SortMergeJoinWithASmallSideIsABroadcastMissed) {
  const std::string small = Node(
      "Exchange", "Exchange hashpartitioning(k#1, 200)",
      {Node("Scan parquet dim", "Scan parquet dim", {}, {{1, "number of output rows", "sum"}})},
      {{2, "data size", "size"}, {3, "shuffle write time", "nsTiming"}});
  const std::string large = Node(
      "Exchange", "Exchange hashpartitioning(k#2, 200)",
      {Node("Scan parquet fact", "Scan parquet fact", {}, {{4, "number of output rows", "sum"}})},
      {{5, "data size", "size"}, {6, "shuffle write time", "nsTiming"}});
  const std::string join =
      Node("SortMergeJoin", "SortMergeJoin [k#2], [k#1], Inner",
           {Node("Sort", "Sort [k#2 ASC]", {large}, {{7, "sort time", "timing"}}),
            Node("Sort", "Sort [k#1 ASC]", {small}, {{8, "sort time", "timing"}})},
           {{9, "number of output rows", "sum"}});
  report::Analysis a = PlanRun(
      join, {Acc(1, "number of output rows", 1000) + "," + Acc(2, "data size", 2 << 20) + "," +
                 Acc(3, "shuffle write time", 100'000'000),
             Acc(4, "number of output rows", 50'000'000) + "," + Acc(5, "data size", 900 << 20) +
                 "," + Acc(6, "shuffle write time", 6'000'000'000),
             Acc(7, "sort time", 4000) + "," + Acc(8, "sort time", 10) + "," +
                 Acc(9, "number of output rows", 50'000'000)});
  auto missed = FindingsOf(a, "broadcast-join-missed");
  ASSERT_EQ(missed.size(), 1u);
  EXPECT_EQ(missed[0]->category, Category::kAlgorithmic);
  EXPECT_EQ(test_util::EvidenceValue(*missed[0], "small_side_bytes"), 2 << 20);
  EXPECT_EQ(test_util::EvidenceValue(*missed[0], "large_side_shuffle_write_ms"), 6000);
  EXPECT_TRUE(RecommendsKey(*missed[0], "spark.sql.autoBroadcastJoinThreshold"));
  EXPECT_NE(std::find(missed[0]->stage_ids.begin(), missed[0]->stage_ids.end(), 2),
            missed[0]->stage_ids.end());
  EXPECT_NE(missed[0]->explanation.find("SQL execution 0, plan node"), std::string::npos);
  // A left outer join cannot broadcast its left side: no finding when that side is the small one.
  const std::string left_outer =
      Node("SortMergeJoin", "SortMergeJoin [k#1], [k#2], LeftOuter",
           {Node("Sort", "Sort [k#1 ASC]", {small}, {{8, "sort time", "timing"}}),
            Node("Sort", "Sort [k#2 ASC]", {large}, {{7, "sort time", "timing"}})},
           {{9, "number of output rows", "sum"}});
  report::Analysis b =
      PlanRun(left_outer, {Acc(2, "data size", 2 << 20), Acc(5, "data size", 900 << 20),
                           Acc(9, "number of output rows", 10)});
  EXPECT_TRUE(FindingsOf(b, "broadcast-join-missed").empty());
}

TEST(PlanRules, NestedLoopAndExplodingJoins) {
  const std::string left =
      Node("Scan parquet a", "Scan parquet a", {}, {{1, "number of output rows", "sum"}});
  const std::string right =
      Node("Scan parquet b", "Scan parquet b", {}, {{2, "number of output rows", "sum"}});
  report::Analysis a = PlanRun(
      Node(
          "BroadcastNestedLoopJoin", "BroadcastNestedLoopJoin BuildRight, Inner, (x#1 < y#2)",
          {left, Node("BroadcastExchange", "BroadcastExchange IdentityBroadcastMode", {right}, {})},
          {{3, "number of output rows", "sum"}}),
      {Acc(1, "number of output rows", 20000) + "," + Acc(2, "number of output rows", 3000) + "," +
       Acc(3, "number of output rows", 30'000'000)});
  ASSERT_EQ(FindingsOf(a, "nested-loop-join").size(), 1u);
  EXPECT_TRUE(FindingsOf(a, "exploding-join").empty());  // one finding per join
  report::Analysis b = PlanRun(
      Node("BroadcastHashJoin", "BroadcastHashJoin [k#1], [k#2], Inner, BuildRight", {left, right},
           {{3, "number of output rows", "sum"}}),
      {Acc(1, "number of output rows", 200000) + "," + Acc(2, "number of output rows", 3000) + "," +
       Acc(3, "number of output rows", 5'000'000)});
  auto exploding = FindingsOf(b, "exploding-join");
  ASSERT_EQ(exploding.size(), 1u);
  EXPECT_NEAR(test_util::EvidenceValue(*exploding[0], "output_over_larger_input"), 25, 0.01);
}

TEST(PlanRules, FullScanOfAPartitionedTableWithoutPartitionFilter) {
  auto run = [](const std::string& partition_filters, const std::string& pushed) {
    const std::string scan =
        Node("Scan parquet db.events", "FileScan parquet db.events", {},
             {{1, "number of output rows", "sum"},
              {2, "number of files read", "sum"},
              {3, "number of partitions read", "sum"},
              {4, "size of files read", "size"}},
             R"({"PartitionFilters":")" + partition_filters + R"(","PushedFilters":")" + pushed +
                 R"(","Format":"Parquet"})");
    const std::string plan = Node("WholeStageCodegen (1)", "WholeStageCodegen (1)",
                                  {Node("Filter", "Filter (upper(day#3) = 2024-01-01)",
                                        {Node("ColumnarToRow", "ColumnarToRow", {scan}, {})},
                                        {{5, "number of output rows", "sum"}})},
                                  {});
    return PlanRun(plan, {Acc(1, "number of output rows", 4'000'000) + "," +
                          Acc(2, "number of files read", 365) + "," +
                          Acc(3, "number of partitions read", 365) + "," +
                          Acc(5, "number of output rows", 11'000)});
  };
  report::Analysis a = run("[]", "[IsNotNull(x)]");
  auto scans = FindingsOf(a, "full-scan");
  ASSERT_EQ(scans.size(), 1u);
  EXPECT_EQ(scans[0]->confidence.level, ConfidenceLevel::kHigh);
  EXPECT_EQ(test_util::EvidenceValue(*scans[0], "partitions_read"), 365);
  // With a partition filter that reached the scan, nothing to say.
  EXPECT_TRUE(
      FindingsOf(run("[isnotnull(day#3), (day#3 = 2024-01-01)]", "[IsNotNull(x)]"), "full-scan")
          .empty());
  // Nothing pushed at all (a UDF predicate on a non-partitioned read): medium confidence.
  report::Analysis nothing_pushed = run("[isnotnull(day#3)]", "[]");
  auto unpushed = FindingsOf(nothing_pushed, "full-scan");
  ASSERT_EQ(unpushed.size(), 1u);
  EXPECT_EQ(unpushed[0]->confidence.level, ConfidenceLevel::kMedium);
}

TEST(PlanRules, PythonUdfDominatingTheRun) {
  const std::string plan = Node(
      "BatchEvalPython", "BatchEvalPython [score(x#1)#5]",
      {Node("Scan ExistingRDD", "Scan ExistingRDD", {}, {{1, "number of output rows", "sum"}})},
      {{2, "number of output rows", "sum"},
       {3, "data sent to Python workers", "size"},
       {4, "data returned from Python workers", "size"}});
  report::Analysis a = PlanRun(plan,
                               {Acc(1, "number of output rows", 1'000'000) + "," +
                                Acc(2, "number of output rows", 1'000'000) + "," +
                                Acc(3, "data sent to Python workers", 40 << 20) + "," +
                                Acc(4, "data returned from Python workers", 8 << 20)},
                               9000);
  auto udf = FindingsOf(a, "python-udf");
  ASSERT_EQ(udf.size(), 1u);
  EXPECT_EQ(udf[0]->stage_ids, std::vector<int32_t>{0});
  EXPECT_TRUE(RecommendsKey(*udf[0], "spark.sql.execution.pythonUDF.arrow.enabled"));
}

TEST(PlanRules, CachedAndNeverReused) {
  auto run = [](bool reused) {
    Log log;
    log.Executor("0", 1500);
    const std::string rdd =
        R"({"RDD ID":7,"Name":"*(1) Project [a#1]","Storage Level":{"Use Disk":true,"Use Memory":true,"Deserialized":true,"Replication":1},"Number of Partitions":4,"Number of Cached Partitions":0,"Memory Size":0,"Disk Size":0})";
    log.JobStart(0, {0}, 2000, "cache it");
    log.StageSubmitted(0, 0, 2000);
    for (int i = 0; i < 4; ++i) log.Task(0, i, i, 0, "0", 2000, 3000, kSuccess, 900);
    log.StageCompleted(0, 0, 2000, 3000, "", "", rdd);
    log.JobEnd(0, 3000);
    log.JobStart(1, {1}, 3100, "read it again");
    log.StageSubmitted(1, 0, 3100);
    for (int i = 0; i < 4; ++i) log.Task(1, 10 + i, i, 0, "0", 3100, 3500, kSuccess, 390);
    log.StageCompleted(1, 0, 3100, 3500, "", "", reused ? rdd : "");
    log.JobEnd(1, 3500);
    log.End(4000);
    return AnalyzeText(log.text());
  };
  report::Analysis not_reused = run(false);
  auto unused = FindingsOf(not_reused, "cache-misuse");
  ASSERT_EQ(unused.size(), 1u);
  EXPECT_EQ(unused[0]->stage_ids, std::vector<int32_t>{0});
  EXPECT_NE(unused[0]->title.find("never reused"), std::string::npos) << unused[0]->title;
  EXPECT_TRUE(FindingsOf(run(true), "cache-misuse").empty());
}

}  // namespace
}  // namespace sparkprof::diagnosis
