// The diagnosis blind spots of issue 11, each on a small hand-written log in Spark's own event
// format: a failed job comes first with its cause and fix; a Resubmitted task end keeps the work
// its attempt did; advice follows the cluster manager; findings rank by saving with root causes
// above their symptoms; an executor removed after the last task is not lost.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/diagnosis/test_util.h"

namespace sparkprof::diagnosis {
namespace {

using test_util::AnalyzeText;
using test_util::FindingsOf;
using test_util::RecommendsKey;

// A few Spark 3.5 events, written the way Spark writes them (only the keys sparkprof reads).
class Log {
 public:
  explicit Log(const std::string& master = "spark://127.0.0.1:7077") {
    Add(R"({"Event":"SparkListenerLogStart","Spark Version":"3.5.9"})");
    Add(R"({"Event":"SparkListenerEnvironmentUpdate","JVM Information":{},"Spark Properties":{"spark.master":")" +
        master +
        R"(","spark.app.id":"app-1"},"Hadoop Properties":{},"System Properties":{},"Classpath Entries":{}})");
    Add(R"({"Event":"SparkListenerApplicationStart","App Name":"t","App ID":"app-1","Timestamp":1000,"User":"u"})");
  }
  void Add(const std::string& line) { text_ += line + "\n"; }
  void Executor(const std::string& id, int64_t at) {
    Add(R"({"Event":"SparkListenerExecutorAdded","Timestamp":)" + std::to_string(at) +
        R"(,"Executor ID":")" + id +
        R"(","Executor Info":{"Host":"127.0.0.1","Total Cores":2,"Log Urls":{}}})");
  }
  void ExecutorRemoved(const std::string& id, int64_t at, const std::string& reason) {
    Add(R"({"Event":"SparkListenerExecutorRemoved","Timestamp":)" + std::to_string(at) +
        R"(,"Executor ID":")" + id + R"(","Removed Reason":")" + reason + R"("})");
  }
  void JobStart(int job, std::vector<int> stages, int64_t at, const std::string& description) {
    std::string infos, ids;
    for (int s : stages) {
      if (!ids.empty()) ids += ",", infos += ",";
      ids += std::to_string(s);
      infos += R"({"Stage ID":)" + std::to_string(s) +
               R"(,"Stage Attempt ID":0,"Stage Name":"stage )" + std::to_string(s) +
               R"(","Number of Tasks":4,"Parent IDs":[],"Details":"","Accumulables":[]})";
    }
    Add(R"({"Event":"SparkListenerJobStart","Job ID":)" + std::to_string(job) +
        R"(,"Submission Time":)" + std::to_string(at) + R"(,"Stage Infos":[)" + infos +
        R"(],"Stage IDs":[)" + ids + R"(],"Properties":{"spark.job.description":")" +
        description + R"("}})");
  }
  void StageSubmitted(int stage, int attempt, int64_t at) {
    Add(R"({"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":)" +
        std::to_string(stage) + R"(,"Stage Attempt ID":)" + std::to_string(attempt) +
        R"(,"Stage Name":"stage )" + std::to_string(stage) +
        R"(","Number of Tasks":4,"Parent IDs":[],"Details":"","Submission Time":)" +
        std::to_string(at) + R"(,"Accumulables":[]},"Properties":{}})");
  }
  void StageCompleted(int stage, int attempt, int64_t submitted, int64_t at,
                      const std::string& failure = "") {
    Add(R"({"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":)" +
        std::to_string(stage) + R"(,"Stage Attempt ID":)" + std::to_string(attempt) +
        R"(,"Stage Name":"stage )" + std::to_string(stage) +
        R"(","Number of Tasks":4,"Parent IDs":[],"Details":"","Submission Time":)" +
        std::to_string(submitted) + R"(,"Completion Time":)" + std::to_string(at) +
        (failure.empty() ? std::string() : R"(,"Failure Reason":")" + failure + R"(")") +
        R"(,"Accumulables":[]}})");
  }
  // reason: the whole "Task End Reason" object.
  void Task(int stage, int64_t tid, int index, int attempt, const std::string& executor,
            int64_t launch, int64_t finish, const std::string& reason, int64_t run_ms,
            int64_t shuffle_write_bytes = 0) {
    const std::string info =
        R"("Task Info":{"Task ID":)" + std::to_string(tid) + R"(,"Index":)" +
        std::to_string(index) + R"(,"Attempt":)" + std::to_string(attempt) +
        R"(,"Launch Time":)" + std::to_string(launch) + R"(,"Executor ID":")" + executor +
        R"(","Host":"127.0.0.1","Locality":"PROCESS_LOCAL","Speculative":false,"Getting Result Time":0,"Finish Time":)" +
        std::to_string(finish) + R"(,"Failed":false,"Killed":false,"Accumulables":[]})";
    Add(R"({"Event":"SparkListenerTaskStart","Stage ID":)" + std::to_string(stage) +
        R"(,"Stage Attempt ID":0,)" + info + "}");
    TaskEndOnly(stage, tid, index, attempt, executor, launch, finish, reason, run_ms,
                shuffle_write_bytes);
  }
  void TaskEndOnly(int stage, int64_t tid, int index, int attempt, const std::string& executor,
                   int64_t launch, int64_t finish, const std::string& reason, int64_t run_ms,
                   int64_t shuffle_write_bytes = 0) {
    Add(R"({"Event":"SparkListenerTaskEnd","Stage ID":)" + std::to_string(stage) +
        R"(,"Stage Attempt ID":0,"Task Type":"ShuffleMapTask","Task End Reason":)" + reason +
        R"(,"Task Info":{"Task ID":)" + std::to_string(tid) + R"(,"Index":)" +
        std::to_string(index) + R"(,"Attempt":)" + std::to_string(attempt) +
        R"(,"Launch Time":)" + std::to_string(launch) + R"(,"Executor ID":")" + executor +
        R"(","Host":"127.0.0.1","Locality":"PROCESS_LOCAL","Speculative":false,"Getting Result Time":0,"Finish Time":)" +
        std::to_string(finish) +
        R"(,"Failed":false,"Killed":false,"Accumulables":[]},"Task Metrics":{"Executor Run Time":)" +
        std::to_string(run_ms) + R"(,"Executor CPU Time":)" + std::to_string(run_ms * 1000000) +
        R"(,"Shuffle Write Metrics":{"Shuffle Bytes Written":)" +
        std::to_string(shuffle_write_bytes) +
        R"(,"Shuffle Write Time":0,"Shuffle Records Written":10}}})");
  }
  void JobEnd(int job, int64_t at, const std::string& failure = "") {
    Add(R"({"Event":"SparkListenerJobEnd","Job ID":)" + std::to_string(job) +
        R"(,"Completion Time":)" + std::to_string(at) + R"(,"Job Result":)" +
        (failure.empty() ? std::string(R"({"Result":"JobSucceeded"})")
                         : R"({"Result":"JobFailed","Exception":{"Message":")" + failure +
                               R"(","Stack Trace":[]}})") +
        "}");
  }
  void End(int64_t at) {
    Add(R"({"Event":"SparkListenerApplicationEnd","Timestamp":)" + std::to_string(at) + "}");
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

const char* kSuccess = R"({"Reason":"Success"})";
const char* kUserException =
    R"({"Reason":"ExceptionFailure","Class Name":"java.lang.IllegalStateException","Description":"bad record 42","Stack Trace":[],"Full Stack Trace":"","Accumulator Updates":[]})";
const char* kOom =
    R"({"Reason":"ExceptionFailure","Class Name":"java.lang.OutOfMemoryError","Description":"Java heap space","Stack Trace":[],"Full Stack Trace":"","Accumulator Updates":[]})";

// A job whose stage 1 fails because task 2 throws twice (spark.task.maxFailures=2).
Log FailedJob(const char* failure_reason) {
  Log log;
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

TEST(JobFailures, OutOfMemoryFailuresAskForSmallerPartitionsAndMoreMemory) {
  report::Analysis a = AnalyzeText(FailedJob(kOom).text());
  ASSERT_FALSE(a.findings.empty());
  const Finding& f = a.findings.front();
  EXPECT_EQ(f.rule, "job-failures");
  EXPECT_EQ(f.category, Category::kResourceConfiguration);
  EXPECT_TRUE(RecommendsKey(f, "spark.sql.shuffle.partitions"));
  EXPECT_TRUE(RecommendsKey(f, "spark.executor.memory"));
  // The task failures are its symptom, ranked after it.
  auto failures = FindingsOf(a, "task-failures");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]->symptom_of, "job-failures");
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
    report::Analysis a = WaitedOn("spark://127.0.0.1:7077");
    auto wait = FindingsOf(a, "resource-wait");
    ASSERT_EQ(wait.size(), 1u);
    EXPECT_FALSE(RecommendsKey(*wait[0], "spark.yarn.queue"));
    EXPECT_TRUE(RecommendsKey(*wait[0], "spark.cores.max"));
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
  EXPECT_TRUE(FindingsOf(run(15000, "worker lost: 127.0.0.1 disassociated"), "executor-loss").empty());
  EXPECT_EQ(FindingsOf(run(5000, "worker lost: 127.0.0.1 disassociated"), "executor-loss").size(),
            1u);
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
            (std::vector<std::string>{"job-failures", "task-failures", "resource-wait",
                                      "data-skew", "spill", "gc-pressure"}));
  EXPECT_EQ(findings[1].symptom_of, "job-failures");
  EXPECT_EQ(findings[4].symptom_of, "data-skew");
  EXPECT_EQ(findings[5].symptom_of, "");
}

}  // namespace
}  // namespace sparkprof::diagnosis
