#include "native-agent/memory_use.h"
#include "native-agent/test_files.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace sparkprof::agent {
namespace {

namespace fs = std::filesystem;

using test_files::FakeCgroup;
using test_files::Write;

TEST(MemoryUseParse, StatmStatusLimitsAndChildren) {
  EXPECT_EQ(ParseStatmResidentBytes("765 437 409 5 0 123 0\n", 4096), 437u * 4096);
  EXPECT_FALSE(ParseStatmResidentBytes("765\n", 4096));
  EXPECT_FALSE(ParseStatmResidentBytes("765 x 1\n", 4096));
  const std::string status = "Name:\tjava\nVmHWM:\t  1936 kB\nVmRSS:\t 1900 kB\nThreads:\t42\n";
  EXPECT_EQ(StatusValue(status, "VmHWM"), 1936u * 1024);
  EXPECT_EQ(StatusValue(status, "Threads"), 42u);
  EXPECT_FALSE(StatusValue(status, "VmSwap"));
  EXPECT_EQ(ParseMemoryLimit("max\n"), 0u);
  EXPECT_EQ(ParseMemoryLimit("9223372036854771712\n"), 0u);  // v1's "no limit"
  EXPECT_EQ(ParseMemoryLimit("2147483648\n"), 2147483648u);
  EXPECT_FALSE(ParseMemoryLimit("lots"));
  EXPECT_EQ(ParseChildren("12 34 \n"), (std::vector<pid_t>{12, 34}));
  EXPECT_TRUE(ParseChildren("").empty());
  EXPECT_EQ(ParseChildren("5 x -3 7"), (std::vector<pid_t>{5, 7}));
}

// A fake /proc and cgroup v2 tree: a JVM whose thread forked a Python daemon, which forked a
// worker; a shell beside them is not Python.
TEST(MemoryUseMeterTest, AFakeTreeWithPythonDescendants) {
  const fs::path root = fs::temp_directory_path() / ("memory_use_test_" + std::to_string(getpid()));
  fs::remove_all(root);
  const fs::path proc = root / "proc";
  FakeCgroup(proc, "0::/pod\n", root / "cg2", 2);
  Write(proc / "self/statm", "1000 500 10 1 0 100 0\n");
  Write(proc / "self/status", "VmHWM:\t4096 kB\nThreads:\t77\n");
  Write(proc / "self/task/1/children", "");
  Write(proc / "self/task/2/children", "100 200\n");
  Write(proc / "100/comm", "python3\n");
  Write(proc / "100/statm", "10 25 1 1 0 1 0\n");
  Write(proc / "100/task/100/children", "101\n");
  Write(proc / "101/comm", "python3\n");
  Write(proc / "101/statm", "10 5 1 1 0 1 0\n");
  Write(proc / "200/comm", "bash\n");
  Write(proc / "200/statm", "10 1000 1 1 0 1 0\n");
  Write(root / "cg2/pod/memory.current", "3000000\n");
  Write(root / "cg2/pod/memory.max", "4000000\n");
  Write(root / "cg2/pod/memory.stat", "anon 2000000\nfile 900000\nanon_thp 0\n");
  Write(root / "cg2/pod/memory.events",
        "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n");
  MemoryUseMeter meter(MemoryUseMeter::Paths{.proc = proc.string()});
  EXPECT_EQ(meter.cgroup_version(), 2);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  MemoryUseReading reading = meter.Read();
  EXPECT_EQ(reading.rss_bytes, 500 * page);
  EXPECT_EQ(reading.rss_peak_bytes, 4096u * 1024);
  EXPECT_EQ(reading.threads, 77u);
  EXPECT_EQ(reading.cgroup_usage_bytes, 3000000u);
  EXPECT_EQ(reading.cgroup_limit_bytes, 4000000u);
  EXPECT_EQ(reading.cgroup_peak_bytes, 0u);  // no memory.peak
  EXPECT_EQ(reading.cgroup_anon_bytes, 2000000u);
  EXPECT_EQ(reading.cgroup_file_bytes, 900000u);
  EXPECT_EQ(reading.cgroup_oom_kills, 2u);  // oom_kill, not oom or oom_group_kill
  EXPECT_TRUE(reading.cgroup_oom_kills_counted);
  // A kernel that keeps no count: not counted, rather than a count of 0.
  Write(root / "cg2/pod/memory.events", "low 0\nhigh 0\nmax 12\noom 3\n");
  EXPECT_FALSE(meter.Read().cgroup_oom_kills_counted);
  EXPECT_EQ(reading.python_processes, 2u);
  EXPECT_EQ(reading.python_rss_bytes, 30 * page);
  fs::remove_all(root);
}

// This process's real files, with a real child whose command name starts with "python" (a
// copy of /bin/sleep named so): found below this process and its RSS counted.
TEST(MemoryUseMeterTest, RealProcWithAChild) {
  MemoryUseMeter meter;
  MemoryUseReading before = meter.Read();
  EXPECT_GT(before.rss_bytes, 0u);
  EXPECT_GE(before.rss_peak_bytes, before.rss_bytes / 2);
  EXPECT_GT(before.threads, 0u);
  const fs::path copy = fs::temp_directory_path() / ("python-sleep-" + std::to_string(getpid()));
  std::error_code error;
  fs::copy_file("/bin/sleep", copy, fs::copy_options::overwrite_existing, error);
  if (error) GTEST_SKIP() << "cannot copy /bin/sleep: " << error.message();
  pid_t child = fork();
  if (child == 0) {
    execl(copy.c_str(), copy.filename().c_str(), "5", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(child, 0);
  MemoryUseReading with_child;
  for (int i = 0; i < 50 && with_child.python_processes == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    with_child = meter.Read();
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  fs::remove(copy);
  if (!fs::exists("/proc/self/task/" + std::to_string(getpid()) + "/children")) {
    GTEST_SKIP() << "this kernel has no /proc/<pid>/task/<tid>/children";
  }
  EXPECT_EQ(with_child.python_processes, 1u);
  EXPECT_GT(with_child.python_rss_bytes, 0u);
}

}  // namespace
}  // namespace sparkprof::agent
