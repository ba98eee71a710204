#include "analyzer/executor_logs/executor_logs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analyzer/codec/gzip_writer.h"
#include "analyzer/executor_logs/log_signals.h"

namespace sparkprof::executor_logs {
namespace {

namespace fs = std::filesystem;

TEST(LogSignalsTest, FindsEachSignalInSparksWords) {
  struct Case {
    const char* line;
    LogSignal signal;
  };
  const Case cases[] = {
      {"java.lang.OutOfMemoryError: Java heap space", LogSignal::kHeapSpace},
      {"Exception in thread \"x\" java.lang.OutOfMemoryError: GC overhead limit exceeded",
       LogSignal::kGcOverhead},
      {"java.lang.OutOfMemoryError: Direct buffer memory", LogSignal::kDirectBufferMemory},
      {"io.netty.util.internal.OutOfDirectMemoryError: failed to allocate 16777216 byte(s)",
       LogSignal::kDirectBufferMemory},
      {"java.lang.OutOfMemoryError: Metaspace", LogSignal::kMetaspace},
      {"java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory",
       LogSignal::kNativeThread},
      {"java.lang.OutOfMemoryError: Requested array size exceeds VM limit",
       LogSignal::kOtherOutOfMemory},
      {"Container killed by YARN for exceeding memory limits. 5.6 GB of 5.5 GB physical memory "
       "used.",
       LogSignal::kContainerMemoryKill},
      {"Container [pid=1,containerID=c] is running 10 MB beyond the 'PHYSICAL' memory limit.",
       LogSignal::kContainerMemoryKill},
      {"[Sun Nov 29 16:42:00 2026] Memory cgroup out of memory: Killed process 20473 (java)",
       LogSignal::kKernelOomKill},
      {"Executor app-1/0 finished with state EXITED message Command exited with code 137",
       LogSignal::kExitCode},
      {"26/11/29 16:31:44 ERROR CoarseGrainedExecutorBackend: RECEIVED SIGNAL TERM",
       LogSignal::kSigterm},
      {"org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)",
       LogSignal::kPythonWorkerCrashed},
      {"MemoryError", LogSignal::kPythonMemoryError},
      {"MemoryError: cannot allocate", LogSignal::kPythonMemoryError},
      {"java.io.IOException: No space left on device", LogSignal::kDiskFull},
      {"org.apache.spark.shuffle.FetchFailedException: Failed to connect to host/1.2.3.4:7337",
       LogSignal::kFetchFailed},
      // An executor's start-up refusal, as Spark 3.5.9's and 4.2.0's write it (the ERROR line
      // and the exception's own line).
      {"26/11/30 17:27:07 ERROR CoarseGrainedExecutorBackend: Executor self-exiting due to : "
       "Unable to create executor due to Netty direct memory should at least be bigger than "
       "'spark.network.maxRemoteBlockSizeFetchToMem', but got 67108864 bytes < 209715200",
       LogSignal::kDirectBelowFetchToMem},
      {"org.apache.spark.SparkException: Netty direct memory should at least be bigger than "
       "'spark.network.maxRemoteBlockSizeFetchToMem', but got 67108864 bytes < 209715200",
       LogSignal::kDirectBelowFetchToMem},
  };
  for (const Case& c : cases) {
    const std::optional<SignalMatch> match = MatchSignal(c.line);
    ASSERT_TRUE(match.has_value()) << c.line;
    EXPECT_EQ(LogSignalName(match->signal), std::string(LogSignalName(c.signal))) << c.line;
  }
  EXPECT_FALSE(MatchSignal("INFO Executor: Finished task 0.0 in stage 0.0 (TID 0)"));
  EXPECT_FALSE(MatchSignal("-XX:OnOutOfMemoryError='kill %p'"));
  EXPECT_FALSE(MatchSignal("NotAMemoryError"));
  EXPECT_FALSE(
      MatchSignal("WARN TaskSetManager: Lost task 2.0 in stage 0.0 (TID 4) (127.0.0.1 "
                  "executor 2): java.lang.OutOfMemoryError: Java heap space"));
  EXPECT_FALSE(
      MatchSignal("INFO Executor: Executor is trying to kill task 1.1 in stage 0.0, "
                  "reason: Stage cancelled: Job aborted due to stage failure: most "
                  "recent failure: java.lang.OutOfMemoryError: Java heap space"));
  const SignalMatch kill = *MatchSignal("Memory cgroup out of memory: Killed process 20473 (java)");
  EXPECT_EQ(kill.pid, 20473);
  EXPECT_TRUE(kill.memory_cgroup);
  EXPECT_EQ(MatchSignal("Out of memory: Killed process 9 (python3)")->memory_cgroup, false);
  EXPECT_EQ(MatchSignal("Command exited with code 52")->exit_code, 52);
}

TEST(LogSignalsTest, ReadsTheTimesLogsStartWith) {
  EXPECT_EQ(ReadLogTime("26/11/29 16:31:44 INFO x").text, "26/11/29 16:31:44");
  EXPECT_EQ(ReadLogTime("26/11/29 16:31:44 INFO x").epoch_ms, 1795969904000);
  EXPECT_EQ(ReadLogTime("2026-11-29 16:31:44,250 INFO x").epoch_ms, 1795969904250);
  EXPECT_EQ(ReadLogTime("2026-11-29T16:31:44.5Z stderr").epoch_ms, 1795969904500);
  EXPECT_EQ(ReadLogTime("{\"ts\":\"2026-11-29T16:31:44.000Z\",\"level\":\"ERROR\"}").epoch_ms,
            1795969904000);
  EXPECT_EQ(ReadLogTime("[Sun Nov 29 16:31:44 2026] Memory cgroup").epoch_ms, 1795969904000);
  EXPECT_EQ(ParseIsoTime("2026-11-29T17:31:44+01:00"), 1795969904000);
  EXPECT_EQ(ReadLogTime("\tat java.util.Arrays.copyOf").epoch_ms, -1);
  EXPECT_EQ(ReadLogTime("99/99/99 99:99:99 nonsense").epoch_ms, -1);
  EXPECT_EQ(ReadLogTime("").epoch_ms, -1);
}

TEST(LogScannerTest, ContainerIdsName) {
  EXPECT_EQ(ApplicationOfContainer("container_1700000000000_0007_01_000002"),
            "application_1700000000000_0007");
  EXPECT_EQ(ApplicationOfContainer("container_e05_1700000000000_0007_01_000002"),
            "application_1700000000000_0007");
  EXPECT_EQ(ApplicationOfContainer("container_x_y"), "");
  EXPECT_EQ(ApplicationOfContainer("pod-1"), "");
}

const char* kYarnLogs =
    "Container: container_e05_1700000000000_0007_01_000002 on node1_45454\n"
    "LogAggregationType: AGGREGATED\n"
    "LogType:stdout\n"
    "LogLength:0\n"
    "Log Contents:\n"
    "End of LogType:stdout\n"
    "LogType:stderr\n"
    "LogLength:420\n"
    "Log Contents:\n"
    "26/11/29 16:39:01 INFO CoarseGrainedExecutorBackend: Started daemon with process name: "
    "4242@node1\n"
    "26/11/29 16:39:58 ERROR Executor: Exception in task 3.0 in stage 2.0 (TID 17)\n"
    "java.lang.OutOfMemoryError: GC overhead limit exceeded\n"
    "\tat java.util.Arrays.copyOf(Arrays.java:3236)\n"
    "26/11/29 16:39:59 ERROR SparkUncaughtExceptionHandler: Uncaught exception\n"
    "java.lang.OutOfMemoryError: GC overhead limit exceeded\n"
    "26/11/29 16:40:05 INFO Executor: Starting executor ID 1 on host node1\n"
    "End of LogType:stderr\n"
    "\n"
    "Container: container_e05_1700000000000_0007_01_000001 on node2_45454\n"
    "LogType:stderr\n"
    "Log Contents:\n"
    "26/11/29 16:38:50 INFO SparkContext: Running Spark version 3.5.9\n"
    "26/11/29 16:40:01 WARN YarnAllocator: Container killed by YARN for exceeding memory limits. "
    "Exit status: 137. 3.2 GB of 2 GB physical memory used.\n"
    "End of LogType:stderr\n"
    "Container: container_e05_1700000000000_0099_01_000002 on node3_45454\n"
    "LogType:stderr\n"
    "26/11/29 16:40:05 INFO Executor: Starting executor ID 1 on host node1\n"
    "java.lang.OutOfMemoryError: Java heap space\n";

TEST(ExecutorLogsTest, YarnAggregatedLogsNameEachContainersProcess) {
  const ExecutorLogs logs =
      ReadExecutorLogBytes("yarn.log", kYarnLogs, "application_1700000000000_0007");
  ASSERT_EQ(logs.hits.size(), 2u) << (logs.hits.empty() ? "" : logs.hits[0].text);
  EXPECT_EQ(logs.other_application_hits, 1u);  // container of application ..._0099
  const LogHit& gc = logs.hits[0];
  EXPECT_EQ(gc.signal, LogSignal::kGcOverhead);
  // Named by a line after the hit: the container is its process.
  EXPECT_EQ(logs.ExecutorOf(gc), "1");
  EXPECT_EQ(gc.count, 2u);
  EXPECT_EQ(gc.time, "26/11/29 16:39:58");
  EXPECT_EQ(gc.last_time, "26/11/29 16:39:59");
  EXPECT_EQ(gc.line, 12u);
  EXPECT_EQ(gc.file, "yarn.log (container_e05_1700000000000_0007_01_000002, stderr)");
  EXPECT_EQ(logs.processes[gc.process].pid, 4242);
  const LogHit& kill = logs.hits[1];
  EXPECT_EQ(kill.signal, LogSignal::kContainerMemoryKill);
  EXPECT_EQ(logs.ExecutorOf(kill), "driver");
  const model::ExhaustionReading reading = ReadingOf(kill, false);
  EXPECT_EQ(reading.what, model::Exhaustion::kContainerMemory);
  EXPECT_EQ(reading.exit_code, 137);
  EXPECT_EQ(reading.limit_bytes, int64_t{2} << 30);
  ASSERT_NE(logs.CauseFor("1"), nullptr);
  EXPECT_EQ(ReadingOf(*logs.CauseFor("1"), false).what, model::Exhaustion::kExecutorHeap);
  EXPECT_EQ(logs.layouts, std::vector<std::string>{"yarn"});
}

TEST(ExecutorLogsTest, PodDescriptionsGiveOomKilledContainers) {
  const std::string pods =
      R"({"kind":"List","items":[{"kind":"Pod","metadata":{"name":"job-exec-2","labels":)"
      R"({"spark-role":"executor","spark-exec-id":"2","spark-app-selector":"spark-abc"}},)"
      R"("status":{"containerStatuses":[{"name":"spark-kubernetes-executor","lastState":)"
      R"({"terminated":{"reason":"OOMKilled","exitCode":137,"finishedAt":"2026-11-29T16:41:07Z"}},)"
      R"("state":{"running":{}}}]}},{"kind":"Pod","metadata":{"name":"other","labels":)"
      R"({"spark-role":"executor","spark-exec-id":"1","spark-app-selector":"spark-zzz"}},)"
      R"("status":{"containerStatuses":[{"name":"c","state":{"terminated":{"reason":"OOMKilled",)"
      R"("exitCode":137}}}]}}]})";
  const ExecutorLogs logs = ReadExecutorLogBytes("pods.json", pods, "spark-abc");
  ASSERT_EQ(logs.hits.size(), 1u);
  EXPECT_EQ(logs.other_application_hits, 1u);
  const LogHit& hit = logs.hits[0];
  EXPECT_EQ(hit.signal, LogSignal::kPodOomKilled);
  EXPECT_EQ(logs.ExecutorOf(hit), "2");
  EXPECT_EQ(hit.time, "2026-11-29T16:41:07Z");
  EXPECT_EQ(hit.exit_code, 137);
  EXPECT_EQ(ReadingOf(hit, false).what, model::Exhaustion::kContainerMemory);
  EXPECT_EQ(logs.CauseFor("2"), &logs.hits[0]);
}

TEST(ExecutorLogsTest, HostileBytesGiveLocatedProblemsNeverACrash) {
  LogReadLimits limits;
  limits.scan.max_line_bytes = 64;
  limits.scan.max_lines_per_file = 3;
  std::string bytes = std::string(1000, 'x') + "\njava.lang.OutOfMemoryError: Java heap space\n";
  bytes += std::string("\0\0\xff\n", 4) + "line 4\nline 5\n";
  const ExecutorLogs logs = ReadExecutorLogBytes("bad.log", bytes, "", limits);
  ASSERT_EQ(logs.hits.size(), 1u);
  EXPECT_EQ(logs.hits[0].line, 2u);
  ASSERT_EQ(logs.problems.messages.size(), 1u);
  EXPECT_EQ(logs.problems.messages[0],
            "bad.log: only the first 3 lines read (the limit per log file, docs/limits.md)");
  const ExecutorLogs cut = ReadExecutorLogBytes("long.log", std::string(1000, 'y'), "", limits);
  ASSERT_EQ(cut.problems.messages.size(), 1u);
  EXPECT_EQ(cut.problems.messages[0],
            "long.log: 1 line(s) longer than 64 bytes read only up to there");
  const ExecutorLogs json = ReadExecutorLogBytes("x.json", "{\"kind\": [1,2", "", limits);
  ASSERT_EQ(json.problems.count, 1u);
  EXPECT_NE(json.problems.messages[0].find("x.json: not a Kubernetes pod description"),
            std::string::npos);
}

class ExecutorLogsDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("sparkprof_executor_logs_test_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& relative, const std::string& bytes) {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
  }
  fs::path root_;
};

TEST_F(ExecutorLogsDirTest, StandaloneWorkDirectoryAndTheKernelsKill) {
  Write("worker-1/app-1/0/stderr",
        "26/11/29 16:31:44 INFO CoarseGrainedExecutorBackend: Started daemon with process name: "
        "20473@vm\n26/11/29 16:31:51 INFO Executor: Starting executor ID 0 on host 127.0.0.1\n");
  Write("worker-1/app-1/1/stderr.gz",
        codec::EncodeGzip("26/11/29 16:32:22 ERROR Executor: Exception in task 0.0\n"
                          "java.lang.OutOfMemoryError: Java heap space\n"));
  Write("worker-1/app-2/1/stderr", "java.lang.OutOfMemoryError: Java heap space\n");
  Write("worker-1/app-1/1/common.py", "raise MemoryError\n");
  const std::string cut = codec::EncodeGzip(std::string(100000, 'z') + "\n");
  Write("worker-1/app-1/2/stderr.gz", cut.substr(0, cut.size() / 2));  // a cut gzip stream
  Write("dmesg.txt",
        "[Sun Nov 29 16:33:00 2026] Memory cgroup out of memory: Killed process 20473 (java)\n");
  Result<ExecutorLogs> read = ReadExecutorLogs(root_.string(), "app-1");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const ExecutorLogs& logs = *read;
  EXPECT_EQ(logs.files_not_logs, 1u);
  EXPECT_EQ(logs.other_application_hits, 1u);
  ASSERT_EQ(logs.hits.size(), 2u);
  EXPECT_EQ(logs.ExecutorOf(logs.hits[0]), "1");
  EXPECT_EQ(logs.hits[0].signal, LogSignal::kHeapSpace);
  EXPECT_EQ(logs.hits[0].time, "26/11/29 16:32:22");
  EXPECT_EQ(logs.ExecutorOf(logs.hits[1]), "0");  // joined by its pid
  EXPECT_EQ(logs.hits[1].signal, LogSignal::kKernelOomKill);
  EXPECT_EQ(ReadingOf(*logs.CauseFor("0"), false).what, model::Exhaustion::kContainerMemory);
  EXPECT_EQ(logs.CauseFor("7"), nullptr);
  ASSERT_EQ(logs.problems.count, 1u);
  EXPECT_NE(logs.problems.messages[0].find("worker-1/app-1/2/stderr.gz"), std::string::npos)
      << logs.problems.messages[0];
  EXPECT_EQ(logs.layouts, (std::vector<std::string>{"kernel", "standalone"}));
}

TEST_F(ExecutorLogsDirTest, DatabricksDeliveryAndPodLogs) {
  Write("0123-abc/driver/log4j-active.log",
        "26/11/29 10:00:00 ERROR Utils: java.lang.OutOfMemoryError: Java heap space\n");
  Write("0123-abc/executor/app-9/3/stderr--2026-11-29--10-00.gz",
        codec::EncodeGzip("26/11/29 10:00:02 ERROR Executor: x\njava.io.IOException: No space "
                          "left on device\n"));
  Write("k8s/pods.json",
        R"({"kind":"Pod","metadata":{"name":"exec-pod-5","labels":{"spark-role":"executor",)"
        R"("spark-exec-id":"5","spark-app-selector":"app-9"}},"status":{}})");
  Write("k8s/exec-pod-5.log", "Traceback (most recent call last):\nMemoryError\n");
  Result<ExecutorLogs> read = ReadExecutorLogs(root_.string(), "app-9");
  ASSERT_TRUE(read.ok());
  const ExecutorLogs& logs = *read;
  ASSERT_EQ(logs.hits.size(), 3u);
  EXPECT_EQ(logs.ExecutorOf(logs.hits[0]), "driver");
  EXPECT_EQ(ReadingOf(logs.hits[0], true).what, model::Exhaustion::kDriverHeap);
  EXPECT_EQ(logs.ExecutorOf(logs.hits[1]), "3");
  EXPECT_EQ(logs.hits[1].signal, LogSignal::kDiskFull);
  EXPECT_EQ(logs.ExecutorOf(logs.hits[2]), "5");
  EXPECT_EQ(ReadingOf(*logs.CauseFor("5"), false).what, model::Exhaustion::kPythonMemory);
}

TEST_F(ExecutorLogsDirTest, MissingPathIsNamed) {
  Result<ExecutorLogs> read = ReadExecutorLogs((root_ / "nope").string(), "");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find("nope: no such file or directory"), std::string::npos);
}

}  // namespace
}  // namespace sparkprof::executor_logs
