// Issue 29 goal 2, the kill classified: each cause Spark's words can name (the model's
// vocabulary, analyzer/model/failure_causes.h) on its own text, then on small hand-written logs
// the findings that lead with it and the fix sized from its figures (rules/kill_causes.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/model/failure_causes.h"
#include "analyzer/model/spark_values.h"
#include "analyzer/testing/analysis_test_util.h"
#include "analyzer/testing/event_log_lines.h"

namespace sparkprof::diagnosis {
namespace {

using model::Exhaustion;
using test_util::AnalyzeText;
using test_util::EvidenceValue;
using test_util::FindingsOf;
using test_util::RecommendedValue;
using test_util::RecommendsKey;
using Log = testing::EventLogLines;

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(Exhaustion, SparksWordsNameWhatRanOut) {
  struct Case {
    const char* text;
    bool exit_137_is_memory;
    bool driver_side;
    Exhaustion what;
    int exit_code;
  };
  const Case cases[] = {
      // Standalone: the Worker's words for an executor that exited.
      {"Command exited with code 52", false, false, Exhaustion::kExecutorHeap, 52},
      {"Command exited with code 137", false, false, Exhaustion::kUnknown, 137},
      {"Command exited with code 137", true, false, Exhaustion::kContainerMemory, 137},
      {"Command exited with code 143", true, false, Exhaustion::kUnknown, 143},
      // YARN and Kubernetes.
      {"Container killed by YARN for exceeding physical memory limits. 5.6 GB of 5.5 GB physical "
       "memory used. Consider boosting spark.executor.memoryOverhead.",
       true, false, Exhaustion::kContainerMemory, -1},
      {"Container marked as failed: c_1 on host: h. Exit status: 137. Diagnostics: Container "
       "killed on request. Exit code is 137",
       true, false, Exhaustion::kContainerMemory, 137},
      {"The executor with id 3 exited with exit code 137(SIGKILL, possible container OOM).", true,
       false, Exhaustion::kContainerMemory, 137},
      {"The API gave the following brief reason: OOMKilled", false, false,
       Exhaustion::kContainerMemory, -1},
      // Exceptions and their root causes.
      {"java.lang.OutOfMemoryError: Java heap space", false, false, Exhaustion::kExecutorHeap, -1},
      {"java.lang.OutOfMemoryError: GC overhead limit exceeded", false, false,
       Exhaustion::kExecutorHeap, -1},
      {"java.lang.OutOfMemoryError: Java heap space", false, true, Exhaustion::kDriverHeap, -1},
      {"java.lang.OutOfMemoryError: Direct buffer memory", false, false, Exhaustion::kDirectMemory,
       -1},
      {"io.netty.util.internal.OutOfDirectMemoryError: failed to allocate 16777216 byte(s) of "
       "direct memory (used: 50331648, max: 67108864)",
       false, false, Exhaustion::kDirectMemory, -1},
      {"org.apache.spark.api.python.PythonException: Traceback ...\nMemoryError", false, false,
       Exhaustion::kPythonMemory, -1},
      {"org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)", false, false,
       Exhaustion::kPythonMemory, -1},
      {"Job aborted due to stage failure: Total size of serialized results of 3 tasks (36.1 MiB) "
       "is bigger than spark.driver.maxResultSize (32.0 MiB)",
       false, true, Exhaustion::kDriverResultSize, -1},
      {"Not enough memory to build and broadcast the table to all worker nodes.", false, true,
       Exhaustion::kDriverHeap, -1},
      {"java.io.IOException: No space left on device", false, false, Exhaustion::kDiskFull, -1},
      {"Executor self-exiting due to : Unable to create executor due to Netty direct memory "
       "should at least be bigger than 'spark.network.maxRemoteBlockSizeFetchToMem', but got "
       "67108864 bytes < 209715200",
       false, false, Exhaustion::kDirectBelowFetchToMem, -1},
      {"worker lost: 127.0.0.1 disassociated", true, false, Exhaustion::kUnknown, -1},
      {"java.lang.IllegalStateException: bad record 42", true, false, Exhaustion::kUnknown, -1},
  };
  for (const Case& c : cases) {
    const model::ExhaustionReading reading =
        model::ReadExhaustion(c.text, c.exit_137_is_memory, c.driver_side);
    EXPECT_EQ(model::ExhaustionName(reading.what), std::string(model::ExhaustionName(c.what)))
        << c.text;
    EXPECT_EQ(reading.exit_code, c.exit_code) << c.text;
  }
  // The figures the words carry.
  const model::ExhaustionReading yarn = model::ReadExhaustion(
      "Container [pid=1,containerID=c] is running 104857600B beyond the 'PHYSICAL' memory limit. "
      "Current usage: 5.6 GB of 5.5 GB physical memory used; 7.1 GB of 11.5 GB virtual memory "
      "used. Killing container.",
      true);
  EXPECT_NEAR(static_cast<double>(yarn.used_bytes) / kMiB, 5.6 * 1024, 0.01);
  EXPECT_EQ(yarn.limit_bytes, static_cast<int64_t>(5.5 * 1024 * kMiB));
  // The words a real YARN wrote (Hadoop 3.5's NodeManager under Spark 3.5.9, the
  // yarn_pmem_kill workload): Spark's removal reason and the NodeManager's diagnostics, whose
  // exit code is the SIGTERM's 143, not 137.
  const model::ExhaustionReading spark_words = model::ReadExhaustion(
      "ExecutorLostFailure (executor 2 exited caused by one of the running tasks) Reason: "
      "Container killed by YARN for exceeding physical memory limits. 939.9 MB of 896 MB physical "
      "memory used. Consider boosting spark.executor.memoryOverhead.",
      false);
  EXPECT_EQ(spark_words.what, Exhaustion::kContainerMemory);
  EXPECT_NEAR(static_cast<double>(spark_words.used_bytes) / kMiB, 939.9, 0.01);
  EXPECT_EQ(spark_words.limit_bytes, 896 * kMiB);
  const model::ExhaustionReading node_manager_words = model::ReadExhaustion(
      "Container [pid=22686,containerID=container_1795971750739_0001_01_000002] is running "
      "29118464B beyond the 'PHYSICAL' memory limit. Current usage: 923.8 MB of 896 MB physical "
      "memory used; 3.7 GB of 1.8 GB virtual memory used. Killing container.\n"
      "Dump of the process-tree for container_1795971750739_0001_01_000002 :\n"
      "Container killed on request. Exit code is 143\n"
      "Container exited with a non-zero exit code 143. ",
      false);
  EXPECT_EQ(node_manager_words.what, Exhaustion::kContainerMemory);
  EXPECT_EQ(node_manager_words.exit_code, 143);
  EXPECT_NEAR(static_cast<double>(node_manager_words.used_bytes) / kMiB, 923.8, 0.01);
  EXPECT_EQ(node_manager_words.limit_bytes, 896 * kMiB);
  EXPECT_STREQ(model::ClassifyRemovalReason("Container killed by YARN for exceeding physical "
                                            "memory limits. 923.8 MB of 896 MB physical memory "
                                            "used. Consider boosting "
                                            "spark.executor.memoryOverhead.",
                                            false),
               "memory");
  const model::ExhaustionReading results = model::ReadExhaustion(
      "Total size of serialized results of 3 tasks (36.1 MiB) is bigger than "
      "spark.driver.maxResultSize (32.0 MiB)",
      false, true);
  EXPECT_EQ(results.result_tasks, 3);
  EXPECT_EQ(results.limit_bytes, 32 * kMiB);
  EXPECT_NEAR(static_cast<double>(results.used_bytes) / kMiB, 36.1, 0.01);
  // The start-up refusal's figures: Netty's direct limit and the fetch-to-memory size.
  const model::ExhaustionReading refusal = model::ReadExhaustion(
      "org.apache.spark.SparkException: Netty direct memory should at least be bigger than "
      "'spark.network.maxRemoteBlockSizeFetchToMem', but got 67108864 bytes < 209715200",
      false);
  EXPECT_EQ(refusal.used_bytes, 64 * kMiB);
  EXPECT_EQ(refusal.limit_bytes, 200 * kMiB);
  // Removal reasons keep their three families; a memory cause is "memory".
  EXPECT_STREQ(model::ClassifyRemovalReason("Command exited with code 52", false), "memory");
  EXPECT_STREQ(model::ClassifyRemovalReason("Command exited with code 137", false), "other");
  EXPECT_STREQ(model::ClassifyRemovalReason("Command exited with code 137", true), "memory");
  EXPECT_STREQ(model::ClassifyRemovalReason("worker lost", true), "node");
  EXPECT_EQ(model::ClassifyRemovalReason("Executor killed by driver.", true), nullptr);
}

const char* kSuccess = R"({"Reason":"Success"})";

// A job of one stage whose task 0 fails twice with `first` then `second` (task end reasons),
// on executors 0 and 1; each executor is removed with `removal` right after ("" keeps them).
Log FailingStage(const std::string& first, const std::string& second, const std::string& removal,
                 const std::string& master = "spark://127.0.0.1:7077",
                 const std::vector<std::pair<std::string, std::string>>& properties = {},
                 const std::string& job_message =
                     "Job aborted due to stage failure: Task 0 in "
                     "stage 0.0 failed 2 times") {
  Log log(master, properties);
  log.Executor("0", 2000);
  log.Executor("1", 2000);
  log.JobStart(0, {0}, 3000, "the failing job", 0);
  log.StageSubmitted(0, 0, 3000);
  log.Task(0, 1, 1, 0, "1", 3000, 3900, kSuccess, 800);
  log.Task(0, 0, 0, 0, "0", 3000, 5000, first, 1900);
  if (!removal.empty()) log.ExecutorRemoved("0", 5001, removal);
  log.Task(0, 2, 0, 1, "1", 5100, 7000, second, 1800);
  if (!removal.empty()) log.ExecutorRemoved("1", 7001, removal);
  log.StageCompleted(0, 0, 3000, 7100, job_message);
  log.JobEnd(0, 7100, job_message);
  log.End(8000);
  return log;
}

std::string LostTo(const std::string& executor, const std::string& reason) {
  return R"({"Reason":"ExecutorLostFailure","Executor ID":")" + executor +
         R"(","Exit Caused By App":true,"Loss Reason":")" + reason + R"("})";
}

std::string Threw(const std::string& exception_class, const std::string& description,
                  const std::string& full_stack_trace = "") {
  return R"({"Reason":"ExceptionFailure","Class Name":")" + exception_class +
         R"(","Description":")" + description + R"(","Stack Trace":[],"Full Stack Trace":")" +
         full_stack_trace + R"(","Accumulator Updates":[]})";
}

const Finding* Only(const report::Analysis& a, const std::string& rule) {
  auto found = FindingsOf(a, rule);
  EXPECT_EQ(found.size(), 1u) << rule;
  return found.empty() ? nullptr : found.front();
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// The finding leads with its cause: its title and its explanation start so.
void ExpectLeadsWith(const Finding& f, const std::string& title, const std::string& explanation) {
  EXPECT_TRUE(StartsWith(f.title, title)) << f.title;
  EXPECT_TRUE(StartsWith(f.explanation, explanation)) << f.explanation;
}

// The issue's executor OutOfMemoryError: a collect_list of each group. More partitions split
// rows, never a group; the executor's heap is the one, never the driver's.
TEST(KillCauses, HeapOutOfMemoryOfACollectingAggregateIsNotAPartitionProblem) {
  Log log =
      FailingStage(Threw("java.lang.OutOfMemoryError", "Java heap space"),
                   LostTo("1", "Command exited with code 52"), "Command exited with code 52",
                   "spark://127.0.0.1:7077",
                   {{"spark.executor.memory", "512m"}, {"spark.sql.shuffle.partitions", "8"}});
  log.SqlStart(
      0, 2900,
      R"json({"nodeName":"ObjectHashAggregate","simpleString":"ObjectHashAggregate(keys=[store#1L], functions=[partial_collect_list(payload#2, 0, 0)])","children":[],"metadata":{},"metrics":[]})json");
  report::Analysis a = AnalyzeText(log.text());
  const Finding* job = Only(a, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(job->title.find(": Executor heap exhausted"), std::string::npos) << job->title;
  EXPECT_TRUE(StartsWith(job->explanation, "Executor heap exhausted: ")) << job->explanation;
  EXPECT_NE(job->explanation.find("executor 1 exited with code 52 (Spark's exit code after an "
                                  "OutOfMemoryError), with 512.0 MiB of heap "
                                  "(spark.executor.memory) shared by 2 task slots (256.0 MiB "
                                  "each)"),
            std::string::npos)
      << job->explanation;
  ASSERT_FALSE(job->recommendations.empty());
  EXPECT_NE(job->recommendations.front().value.find("collect_list"), std::string::npos);
  EXPECT_FALSE(RecommendsKey(*job, "spark.sql.shuffle.partitions"));
  EXPECT_FALSE(RecommendsKey(*job, "spark.driver.memory"));
  EXPECT_EQ(RecommendedValue(*job, "spark.executor.memory"), "768m");
  EXPECT_EQ(EvidenceValue(*job, "exit_code"), 52);
  const Finding* loss = Only(a, "executor-loss");
  ASSERT_NE(loss, nullptr);
  ExpectLeadsWith(*loss, "Executor heap exhausted: 2 of 2 lost executor(s)",
                  "Executor heap exhausted: executor 0 exited with code 52 after "
                  "java.lang.OutOfMemoryError: Java heap space");
  EXPECT_FALSE(RecommendsKey(*loss, "spark.sql.shuffle.partitions"));
  EXPECT_FALSE(RecommendsKey(*loss, "spark.driver.memory"));
}

// The issue's Python MemoryError under spark.executor.pyspark.memory: a memory, not a bug.
TEST(KillCauses, PythonMemoryErrorSizesThePythonMemory) {
  const std::string memory_error = Threw(
      "org.apache.spark.api.python.PythonException",
      R"(An exception was thrown from the Python worker. Please see the stack trace below.\nTraceback (most recent call last):\n  File \"udf.py\", line 3, in expand\n    document = bytearray(300 << 20)\nMemoryError\n)");
  report::Analysis a = AnalyzeText(
      FailingStage(memory_error, memory_error, "", "spark://127.0.0.1:7077",
                   {{"spark.executor.pyspark.memory", "256m"}, {"spark.executor.cores", "2"}})
          .text());
  const Finding* job = Only(a, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(job->title.find(": Python worker memory exhausted (MemoryError)"), std::string::npos)
      << job->title;
  EXPECT_EQ(job->category, Category::kResourceConfiguration);
  EXPECT_TRUE(StartsWith(job->explanation,
                         "Python worker memory exhausted: the Python worker of task 0 of stage 0 "
                         "failed with MemoryError, under spark.executor.pyspark.memory=256m"))
      << job->explanation;
  EXPECT_NE(job->explanation.find("2 Python worker(s): 128.0 MiB each"), std::string::npos)
      << job->explanation;
  ASSERT_FALSE(job->recommendations.empty());
  EXPECT_EQ(job->recommendations.front().config_key, "spark.executor.pyspark.memory");
  EXPECT_EQ(job->recommendations.front().value, "512m");
  for (const Recommendation& r : job->recommendations) {
    EXPECT_EQ(r.value.find("fix the code or the input record"), std::string::npos) << r.value;
  }
  EXPECT_EQ(EvidenceValue(*job, "pyspark_memory_bytes"), 256.0 * kMiB);
  const Finding* tasks = Only(a, "task-failures");
  ASSERT_NE(tasks, nullptr);
  EXPECT_TRUE(StartsWith(tasks->title, "Python worker memory exhausted: 2 of 2 failed task"))
      << tasks->title;
  EXPECT_TRUE(RecommendsKey(*tasks, "spark.executor.pyspark.memory"));
}

// A collect() over spark.driver.maxResultSize: Spark kills the tasks and aborts the stage, so
// only its message tells; the limit was passed by 3 of the stage's 4 tasks.
TEST(KillCauses, ResultsOverMaxResultSizeAreSizedForAllTasks) {
  const std::string message =
      "Job aborted due to stage failure: Total size of serialized results of 3 tasks (36.1 MiB) "
      "is bigger than spark.driver.maxResultSize (32.0 MiB)";
  const std::string killed =
      R"({"Reason":"TaskKilled","Kill Reason":"Tasks result size has exceeded maxResultSize"})";
  report::Analysis a = AnalyzeText(
      FailingStage(killed, killed, "", "spark://127.0.0.1:7077",
                   {{"spark.driver.memory", "512m"}, {"spark.driver.maxResultSize", "32m"}},
                   message)
          .text());
  const Finding* job = Only(a, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(job->title.find(": Driver result size over spark.driver.maxResultSize"),
            std::string::npos)
      << job->title;
  EXPECT_TRUE(StartsWith(job->explanation,
                         "Driver result size over spark.driver.maxResultSize: the serialized "
                         "results of 3 task(s) came to 36.1 MiB, over the 32.0 MiB limit; all of "
                         "the stage's tasks would have sent about 48.1 MiB"))
      << job->explanation;
  ASSERT_FALSE(job->recommendations.empty());
  EXPECT_TRUE(job->recommendations.front().config_key.empty());  // collect less, first
  // 25% above the 49 MiB estimate, in 64 MiB steps; the driver gets twice the estimate more.
  EXPECT_EQ(RecommendedValue(*job, "spark.driver.maxResultSize"), "64m");
  EXPECT_EQ(RecommendedValue(*job, "spark.driver.memory"), "640m");
  EXPECT_FALSE(RecommendsKey(*job, "spark.executor.memory"));
  EXPECT_EQ(EvidenceValue(*job, "result_tasks"), 3);
}

// YARN's own words carry the container's use and limit: the overhead is sized from them.
TEST(KillCauses, YarnContainerKillSizesTheOverheadFromItsFigures) {
  const std::string reason =
      "Container killed by YARN for exceeding physical memory limits. 5.6 GB of 5.5 GB physical "
      "memory used. Consider boosting spark.executor.memoryOverhead.";
  report::Analysis a = AnalyzeText(FailingStage(LostTo("0", reason), LostTo("1", reason), reason,
                                                "yarn", {{"spark.executor.memory", "4g"}})
                                       .text());
  const Finding* loss = Only(a, "executor-loss");
  ASSERT_NE(loss, nullptr);
  ExpectLeadsWith(*loss, "Container memory limit exceeded: 2 of 2 lost executor(s)",
                  "Container memory limit exceeded: executor 0 was killed with 5.6 GiB of its "
                  "5.5 GiB limit in use. Its settings: heap 4.0 GiB, and Spark allows 409.0 MiB "
                  "more");
  // 5734 MiB used - 4096 MiB heap = 1638 MiB outside the heap; 25% above it, in 64 MiB steps.
  EXPECT_EQ(RecommendedValue(*loss, "spark.executor.memoryOverhead"), "2048m");
  EXPECT_EQ(EvidenceValue(*loss, "container_limit_bytes"), 5.5 * 1024 * kMiB);
  const Finding* job = Only(a, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(job->title.find(": Container memory limit exceeded"), std::string::npos) << job->title;
  EXPECT_EQ(RecommendedValue(*job, "spark.executor.memoryOverhead"), "2048m");
}

// Kubernetes: a pod's exit code 137 is its memory limit; with no figure, 25% above the overhead
// the kill proves too small.
TEST(KillCauses, KubernetesSigkillIsTheContainerLimit) {
  const std::string reason =
      "The executor with id 0 exited with exit code 137(SIGKILL, possible container OOM).";
  report::Analysis a = AnalyzeText(
      FailingStage(LostTo("0", reason), LostTo("1", reason), reason, "k8s://https://k8s:443")
          .text());
  const Finding* loss = Only(a, "executor-loss");
  ASSERT_NE(loss, nullptr);
  ExpectLeadsWith(*loss, "Container memory limit exceeded",
                  "Container memory limit exceeded: executor 0 was killed (exit code 137, "
                  "SIGKILL)");
  EXPECT_EQ(RecommendedValue(*loss, "spark.executor.memoryOverhead"), "512m");  // 1.25 x 384
}

// Exit code 52 follows any OutOfMemoryError: the executor's task said direct buffers.
TEST(KillCauses, DirectBufferMemoryIsNotTheHeap) {
  report::Analysis a =
      AnalyzeText(FailingStage(Threw("java.lang.OutOfMemoryError", "Direct buffer memory"),
                               Threw("java.lang.OutOfMemoryError", "Direct buffer memory"),
                               "Command exited with code 52")
                      .text());
  const Finding* loss = Only(a, "executor-loss");
  ASSERT_NE(loss, nullptr);
  ExpectLeadsWith(*loss, "Direct buffer memory exhausted",
                  "Direct buffer memory exhausted: executor 0 exited with code 52 after "
                  "java.lang.OutOfMemoryError: Direct buffer memory; the JVM's direct buffers "
                  "are bounded by -XX:MaxDirectMemorySize, by default its heap's maximum (1.0 "
                  "GiB).");
  EXPECT_EQ(RecommendedValue(*loss, "spark.executor.extraJavaOptions"),
            "-XX:MaxDirectMemorySize=2048m");  // twice the default: the 1 GiB heap
  EXPECT_FALSE(RecommendsKey(*loss, "spark.executor.memory"));

  // The property as Spark logs it holds the options Spark adds itself (its module options, the
  // IPv6 default): the fix keeps only the user's own and replaces the limit.
  const std::string oom =
      Threw("java.lang.OutOfMemoryError", "Cannot reserve 33554432 bytes of direct buffer memory");
  report::Analysis logged = AnalyzeText(
      FailingStage(oom, oom, "Command exited with code 52", "spark://127.0.0.1:7077",
                   {{"spark.executor.extraJavaOptions",
                     "-Djava.net.preferIPv6Addresses=false -XX:+IgnoreUnrecognizedVMOptions "
                     "--add-opens=java.base/java.lang=ALL-UNNAMED -XX:MaxDirectMemorySize=256m "
                     "-Dapp.mode=batch -Djdk.reflect.useDirectMethodHandle=false"}})
          .text());
  const Finding* job = Only(logged, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(RecommendedValue(*job, "spark.executor.extraJavaOptions"),
            "-Dapp.mode=batch -XX:MaxDirectMemorySize=512m");
}

// "No space left on device" only in the stack trace's innermost cause.
TEST(KillCauses, NoSpaceLeftOnDeviceIsTheLocalDisk) {
  const std::string full_disk = Threw(
      "org.apache.spark.SparkException", "Task failed while writing rows.",
      R"(org.apache.spark.SparkException: Task failed while writing rows.\n\tat a.b(c.java:1)\nCaused by: java.io.IOException: No space left on device\n\tat d.e(f.java:2))");
  report::Analysis a = AnalyzeText(FailingStage(full_disk, full_disk, "").text());
  const Finding* job = Only(a, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(job->title.find(": Local disk full"), std::string::npos) << job->title;
  EXPECT_TRUE(StartsWith(job->explanation,
                         "Local disk full: task 0 of stage 0 threw "
                         "java.io.IOException: No space left on device"))
      << job->explanation;
  EXPECT_TRUE(RecommendsKey(*job, "spark.local.dir"));
  const Finding* tasks = Only(a, "task-failures");
  ASSERT_NE(tasks, nullptr);
  EXPECT_TRUE(StartsWith(tasks->title, "Local disk full")) << tasks->title;
}

// A query that failed on the driver, no job failing: a broadcast the driver could not build.
TEST(KillCauses, BroadcastOutOfMemoryOnTheDriverIsTheDriversHeap) {
  Log log("spark://127.0.0.1:7077", {{"spark.driver.memory", "2g"}});
  log.Executor("0", 2000);
  log.SqlStart(
      0, 3000,
      R"({"nodeName":"BroadcastExchange","simpleString":"BroadcastExchange","children":[],"metadata":{},"metrics":[]})");
  log.SqlEnd(0, 9000,
             "Not enough memory to build and broadcast the table to all worker nodes. As a "
             "workaround, you can either disable broadcast by setting "
             "spark.sql.autoBroadcastJoinThreshold to -1 or increase the spark driver memory");
  log.End(10000);
  report::Analysis a = AnalyzeText(log.text());
  const Finding* job = Only(a, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(job->title.find("failed: Driver heap exhausted"), std::string::npos) << job->title;
  EXPECT_EQ(RecommendedValue(*job, "spark.driver.memory"), "3072m");
  EXPECT_FALSE(RecommendsKey(*job, "spark.executor.memory"));
}

// The executors' JVM options as every rule reads them: split on spaces and tabs, the last of a
// repeated option taken, as the JVM takes it.
TEST(Exhaustion, JavaOptionsAreSplitOnBlanksAndTheLastOfARepeatedOneWins) {
  EXPECT_EQ(model::SplitJavaOptions("  -Xss1m\t-Da=b  -XX:+UseG1GC "),
            (std::vector<std::string_view>{"-Xss1m", "-Da=b", "-XX:+UseG1GC"}));
  EXPECT_TRUE(model::SplitJavaOptions(" \t ").empty());
  EXPECT_EQ(model::LastJavaOptionValue("-XX:MaxDirectMemorySize=64m -XX:MaxDirectMemorySize=1g",
                                       "-XX:MaxDirectMemorySize="),
            "1g");
  EXPECT_EQ(model::LastJavaOptionValue("-Dx=1", "-XX:MaxDirectMemorySize="), std::nullopt);
}

// Spark's executor start-up check, read from the settings as the JVM and Netty read them.
TEST(Exhaustion, FetchToMemCheckReadsTheSettingsAsTheJvmAndNetty) {
  const int64_t heap = 512 * kMiB;
  model::FetchToMemCheck check =
      model::ReadFetchToMemCheck("-XX:MaxDirectMemorySize=64m", "", "", heap);
  EXPECT_TRUE(check.checked);
  EXPECT_EQ(check.direct_limit_bytes, 64 * kMiB);
  EXPECT_EQ(check.direct_limit_option, "-XX:MaxDirectMemorySize=64m");
  EXPECT_EQ(check.fetch_to_mem_bytes, 200 * kMiB);  // Spark's default in 3.5 and 4.x
  EXPECT_TRUE(check.Fails());
  // The last option wins, as in the JVM; a bare number is bytes.
  EXPECT_FALSE(
      model::ReadFetchToMemCheck(
          "-XX:MaxDirectMemorySize=64m -Dx=y -XX:MaxDirectMemorySize=268435456", "", "", heap)
          .Fails());
  // Netty's own limit, when above 0, is the one it checks.
  check = model::ReadFetchToMemCheck(
      "-XX:MaxDirectMemorySize=1g -Dio.netty.maxDirectMemory=1048576", "", "", heap);
  EXPECT_EQ(check.direct_limit_bytes, kMiB);
  EXPECT_TRUE(check.Fails());
  EXPECT_FALSE(model::ReadFetchToMemCheck("-XX:MaxDirectMemorySize=1g -Dio.netty.maxDirectMemory=0",
                                          "", "", heap)
                   .Fails());
  // The fetch-to-memory size in bytes, or with a unit.
  EXPECT_FALSE(
      model::ReadFetchToMemCheck("-XX:MaxDirectMemorySize=64m", "33554432", "", heap).Fails());
  EXPECT_TRUE(model::ReadFetchToMemCheck("-XX:MaxDirectMemorySize=64m", "65m", "", heap).Fails());
  // No check where Netty does not prefer direct buffers.
  EXPECT_FALSE(
      model::ReadFetchToMemCheck("-XX:MaxDirectMemorySize=64m", "", "false", heap).Fails());
  EXPECT_FALSE(model::ReadFetchToMemCheck(
                   "-XX:MaxDirectMemorySize=64m -Dio.netty.noPreferDirect=true", "", "", heap)
                   .Fails());
  // No option: the heap's maximum, at most the heap, so a size at or above the heap fails.
  check = model::ReadFetchToMemCheck("", "", "", heap);
  EXPECT_EQ(check.direct_limit_bytes, heap);
  EXPECT_FALSE(check.Fails());
  EXPECT_TRUE(model::ReadFetchToMemCheck("", "512m", "", heap).Fails());
  // Hostile values are not known, never a claim.
  EXPECT_FALSE(model::ReadFetchToMemCheck("-XX:MaxDirectMemorySize=lots", "", "", heap).Fails());
  EXPECT_FALSE(model::ReadFetchToMemCheck("-XX:MaxDirectMemorySize=64m", "-5", "", heap).Fails());
}

// Executors that registered and exited with code 1 before any task, repeatedly, while a job
// waited until it was cancelled: the event log of the netty_direct_memory workload.
Log RefusedExecutors(const std::string& java_options) {
  Log log("spark://127.0.0.1:7077",
          {{"spark.executor.memory", "512m"}, {"spark.executor.extraJavaOptions", java_options}});
  log.JobStart(0, {0}, 1500, "netty direct memory: sum", 0);
  log.StageSubmitted(0, 0, 1500);
  for (int i = 0; i < 3; ++i) {
    log.Executor(std::to_string(i), 2000 + 7000 * i);
    log.ExecutorRemoved(std::to_string(i), 2500 + 7000 * i, "Command exited with code 1");
  }
  const std::string cancelled = "Job 0 cancelled as part of cancellation of all jobs";
  log.StageCompleted(0, 0, 1500, 46500, cancelled);
  log.JobEnd(0, 46500, cancelled);
  log.End(47000);
  return log;
}

TEST(KillCauses, ExecutorsRefusedForDirectMemoryBelowTheFetchToMemSizeFromTheSettings) {
  const report::Analysis a =
      AnalyzeText(RefusedExecutors("-Dapp=1 -XX:MaxDirectMemorySize=64m").text());
  const Finding* job = Only(a, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(
      job->title.find("failed in stage 0: Executor refused to start: Netty direct memory below "
                      "spark.network.maxRemoteBlockSizeFetchToMem"),
      std::string::npos)
      << job->title;
  EXPECT_TRUE(
      StartsWith(job->explanation,
                 "Executor refused to start: Netty direct memory below "
                 "spark.network.maxRemoteBlockSizeFetchToMem: executor 0 exited with code "
                 "1 at start-up, before running any task (3 executors were refused so): "
                 "its JVM gives Netty 64.0 MiB of direct memory (-XX:MaxDirectMemorySize=64m"))
      << job->explanation;
  EXPECT_NE(job->explanation.find("inferred from the settings"), std::string::npos);
  EXPECT_EQ(job->confidence.level, ConfidenceLevel::kMedium);
  EXPECT_EQ(EvidenceValue(*job, "direct_memory_limit_bytes"), 64 * kMiB);
  EXPECT_EQ(EvidenceValue(*job, "fetch_to_mem_bytes"), 200 * kMiB);
  EXPECT_EQ(EvidenceValue(*job, "refused_executors"), 3);
  // 25% above the 200 MiB, rounded up to 64 MiB; or the size lowered to 64 MiB less 48 MiB.
  EXPECT_EQ(RecommendedValue(*job, "spark.executor.extraJavaOptions"),
            "-Dapp=1 -XX:MaxDirectMemorySize=256m");
  EXPECT_EQ(RecommendedValue(*job, "spark.network.maxRemoteBlockSizeFetchToMem"), "16m");
  EXPECT_FALSE(RecommendsKey(*job, "spark.executor.memory"));
  EXPECT_FALSE(RecommendsKey(*job, "spark.driver.memory"));
  const Finding* loss = Only(a, "executor-loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_TRUE(StartsWith(loss->title, "Executor refused to start")) << loss->title;

  // The same exits with a direct limit above the size: the check passes, nothing is inferred.
  const report::Analysis passing =
      AnalyzeText(RefusedExecutors("-XX:MaxDirectMemorySize=256m").text());
  const Finding* other = Only(passing, "job-failures");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->title.find("refused"), std::string::npos) << other->title;
  EXPECT_FALSE(RecommendsKey(*other, "spark.network.maxRemoteBlockSizeFetchToMem"));
}

// The executor's own log (a standalone work directory) says it: the figures are the log's and
// the confidence is not lowered.
TEST(KillCauses, ExecutorLogNamesTheDirectMemoryRefusal) {
  const std::filesystem::path logs = std::filesystem::temp_directory_path() /
                                     ("sparkprof_kill_logs_netty_" + std::to_string(getpid()));
  std::filesystem::create_directories(logs / "app-1" / "0");
  std::ofstream(logs / "app-1" / "0" / "stderr")
      << "26/11/30 17:27:07 ERROR CoarseGrainedExecutorBackend: Executor self-exiting due to : "
         "Unable to create executor due to Netty direct memory should at least be bigger than "
         "'spark.network.maxRemoteBlockSizeFetchToMem', but got 67108864 bytes < 209715200\n";
  // The settings say nothing (the limit set some other way): the log alone names it.
  const report::Analysis a = AnalyzeText(RefusedExecutors("").text(), logs.string());
  std::filesystem::remove_all(logs);
  ASSERT_NE(a.logs, nullptr) << a.logs_error;
  const Finding* job = Only(a, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(job->title.find("Executor refused to start"), std::string::npos) << job->title;
  EXPECT_EQ(job->confidence.level, ConfidenceLevel::kHigh);
  EXPECT_EQ(job->explanation.find("inferred"), std::string::npos) << job->explanation;
  EXPECT_NE(job->explanation.find("Its log names the cause"), std::string::npos)
      << job->explanation;
  EXPECT_EQ(EvidenceValue(*job, "direct_memory_limit_bytes"), 64 * kMiB);
  EXPECT_EQ(RecommendedValue(*job, "spark.executor.extraJavaOptions"),
            "-XX:MaxDirectMemorySize=256m");
}

// A collect whose results the driver could not get: three of a stage's four tasks sent
// `result_bytes` each, the fourth's result was lost, the job aborted while getting a result (the
// words Spark 3.5.9 and 4.2.0 wrote in the driver_heap_collect workload).
std::string ResultsLost(int64_t result_bytes, const std::string& driver_memory) {
  Log log("spark://127.0.0.1:7077",
          {{"spark.driver.memory", driver_memory}, {"spark.driver.maxResultSize", "0"}});
  log.Executor("0", 2000);
  log.JobStart(0, {0}, 3000, "driver heap collect: collect digests", 0);
  log.StageSubmitted(0, 0, 3000);
  for (int i = 0; i < 3; ++i) log.Task(0, i, i, 0, "0", 3000, 4000 + i, kSuccess, 900);
  log.Task(0, 3, 3, 0, "0", 3000, 4500, R"({"Reason":"TaskResultLost"})", 900);
  const std::string aborted =
      "Job aborted due to stage failure: Exception while getting task result: "
      "java.lang.IllegalStateException: unread block data";
  log.StageCompleted(0, 0, 3000, 5000, aborted);
  log.JobEnd(0, 5000, aborted);
  log.End(6000);
  std::string text = log.text();
  const std::string metrics = R"("Task Metrics":{"Executor Run Time")";
  const std::string sized = R"("Task Metrics":{"Result Size":)" + std::to_string(result_bytes) +
                            R"(,"Executor Run Time")";
  for (size_t at = text.find(metrics); at != std::string::npos; at = text.find(metrics, at + 1)) {
    text.replace(at, metrics.size(), sized);
  }
  return text;
}

TEST(KillCauses, ResultsTheDriverCouldNotHoldAreItsHeapNotTheExecutors) {
  // 3 x 100 MiB received, about 400 MiB for the 4 tasks, twice that against a 512 MiB heap.
  const report::Analysis a = AnalyzeText(ResultsLost(100 * kMiB, "512m"));
  const Finding* job = Only(a, "job-failures");
  ASSERT_NE(job, nullptr);
  EXPECT_NE(job->title.find("failed in stage 0: Driver heap exhausted"), std::string::npos)
      << job->title;
  EXPECT_TRUE(StartsWith(job->explanation,
                         "Driver heap exhausted: the driver failed while getting the tasks' "
                         "results (Exception while getting task result: "
                         "java.lang.IllegalStateException: unread block data): the 3 result(s) "
                         "it had received came to 300.0 MiB serialized, about 400.0 MiB for all 4 "
                         "tasks"))
      << job->explanation;
  EXPECT_NE(job->explanation.find("spark.driver.maxResultSize=0 set no limit"), std::string::npos);
  EXPECT_EQ(job->confidence.level, ConfidenceLevel::kMedium);
  EXPECT_EQ(EvidenceValue(*job, "result_bytes_estimated"), 400 * kMiB);
  EXPECT_EQ(EvidenceValue(*job, "driver_heap_bytes"), 512 * kMiB);
  // The 512 MiB it had plus twice the 400 MiB, rounded up to 64 MiB; a limit 25% above them.
  EXPECT_EQ(RecommendedValue(*job, "spark.driver.memory"), "1344m");
  EXPECT_EQ(RecommendedValue(*job, "spark.driver.maxResultSize"), "512m");
  EXPECT_FALSE(RecommendsKey(*job, "spark.executor.memory"));
  EXPECT_FALSE(RecommendsKey(*job, "spark.sql.shuffle.partitions"));

  // Small results the same way (a class mismatch also says "unread block data"): no claim.
  const report::Analysis small = AnalyzeText(ResultsLost(kMiB, "512m"));
  const Finding* other = Only(small, "job-failures");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->title.find("Driver heap"), std::string::npos) << other->title;
  EXPECT_FALSE(RecommendsKey(*other, "spark.driver.memory"));
  // The same results with a heap twice them fit: no claim either.
  const report::Analysis roomy = AnalyzeText(ResultsLost(100 * kMiB, "1g"));
  const Finding* fits = Only(roomy, "job-failures");
  ASSERT_NE(fits, nullptr);
  EXPECT_EQ(fits->title.find("Driver heap"), std::string::npos) << fits->title;
}

}  // namespace
}  // namespace sparkprof::diagnosis

namespace sparkprof::diagnosis {
namespace {

// Issue 29 goal 3: an executor lost on a standalone cluster with only "Command exited with code
// 137" is a cause unknown to the event log; its stderr named its pid, and the kernel's line
// names that pid killed in a memory cgroup: the container's limit, said with the line.
TEST(KillCauses, TheExecutorsOwnLogNamesWhatAnExitCodeAloneCannot) {
  const std::string lost = "Command exited with code 137";
  const std::string event_log = FailingStage(LostTo("0", lost), LostTo("1", lost), lost).text();
  const report::Analysis without_logs = AnalyzeText(event_log);
  const Finding* alone = Only(without_logs, "executor-loss");
  ASSERT_NE(alone, nullptr);
  EXPECT_TRUE(StartsWith(alone->explanation, "Killed by SIGKILL (exit code 137), cause unknown"))
      << alone->explanation;

  const std::filesystem::path logs =
      std::filesystem::temp_directory_path() / ("sparkprof_kill_logs_" + std::to_string(getpid()));
  std::filesystem::create_directories(logs);
  std::ofstream(logs / "executor-0.log")
      << "26/11/29 16:34:00 INFO CoarseGrainedExecutorBackend: Started daemon with process name: "
         "21596@vm\n"
         "26/11/29 16:34:05 INFO Executor: Starting executor ID 0 on host 127.0.0.1\n";
  std::ofstream(logs / "dmesg.txt")
      << "[Sun Nov 29 16:34:21 2026] Memory cgroup out of memory: Killed process 21596 (java) "
         "total-vm:3980668kB, anon-rss:908676kB\n";
  const report::Analysis a = AnalyzeText(event_log, logs.string());
  std::filesystem::remove_all(logs);
  ASSERT_NE(a.logs, nullptr) << a.logs_error;
  const std::vector<const Finding*> losses = FindingsOf(a, "executor-loss");
  ASSERT_FALSE(losses.empty());
  const Finding& loss = *losses.front();
  ExpectLeadsWith(loss, "Container memory limit exceeded",
                  "Container memory limit exceeded: executor 0 was killed (exit code 137, "
                  "SIGKILL)");
  EXPECT_NE(loss.explanation.find("Its log names the cause, where the event log gives only an "
                                  "exit code: "),
            std::string::npos)
      << loss.explanation;
  EXPECT_NE(loss.explanation.find("dmesg.txt line 1 at Sun Nov 29 16:34:21 2026: Memory cgroup "
                                  "out of memory: Killed process 21596 (java)"),
            std::string::npos)
      << loss.explanation;
  EXPECT_EQ(EvidenceValue(loss, "log_line"), 1);
}

// Spark's words that name a memory stand: YARN says the container's limit, and the log's
// OutOfMemoryError is quoted beside them, never in their place.
TEST(KillCauses, SparksWordsThatNameTheMemoryStandBesideTheLog) {
  const std::string yarn =
      "Container killed by YARN for exceeding physical memory limits. 5.6 GB of 5.5 GB physical "
      "memory used.";
  const std::string event_log =
      FailingStage(LostTo("0", yarn), LostTo("1", yarn), yarn, "yarn").text();
  const std::filesystem::path logs = std::filesystem::temp_directory_path() /
                                     ("sparkprof_kill_logs_yarn_" + std::to_string(getpid()));
  std::filesystem::create_directories(logs);
  std::ofstream(logs / "executor-0.log")
      << "26/11/29 16:34:05 INFO Executor: Starting executor ID 0 on host h\n"
         "26/11/29 16:35:00 ERROR Executor: Exception in task 0.0\n"
         "java.lang.OutOfMemoryError: Java heap space\n";
  const report::Analysis a = AnalyzeText(event_log, logs.string());
  std::filesystem::remove_all(logs);
  const std::vector<const Finding*> losses = FindingsOf(a, "executor-loss");
  ASSERT_FALSE(losses.empty());
  EXPECT_TRUE(StartsWith(losses.front()->title, "Container memory limit exceeded"))
      << losses.front()->title;
  EXPECT_NE(losses.front()->explanation.find(
                "Its log also says: " + (logs / "executor-0.log").string() +
                " line 3 at 26/11/29 16:35:00: java.lang.OutOfMemoryError: Java heap space."),
            std::string::npos)
      << losses.front()->explanation;
}

}  // namespace
}  // namespace sparkprof::diagnosis
