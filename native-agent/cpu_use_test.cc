#include "native-agent/cpu_use.h"

#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "native-agent/agent_cpu.h"
#include "native-agent/batch_encoder.h"
#include "native-agent/signal_handler.h"
#include "native-agent/test_files.h"
#include "schema/profile_generated.h"

namespace sparkprof::agent {
namespace {

namespace fs = std::filesystem;

using test_files::FakeCgroup;
using test_files::Write;

class FakeRoot {
 public:
  FakeRoot() : root_(fs::temp_directory_path() / ("cpu_use_test_" + std::to_string(getpid()))) {
    fs::remove_all(root_);
  }
  ~FakeRoot() { fs::remove_all(root_); }
  fs::path operator/(const std::string& relative) const { return root_ / relative; }
  std::string str() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(CpuUseParse, ProcStatCpuLine) {
  std::optional<HostTicks> ticks =
      ParseProcStatCpuLine("cpu  100 5 50 1000 20 3 2 7 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n");
  ASSERT_TRUE(ticks);
  EXPECT_EQ(ticks->busy, 100u + 5 + 50 + 3 + 2);
  EXPECT_EQ(ticks->idle, 1020u);
  EXPECT_EQ(ticks->steal, 7u);
  EXPECT_EQ(ticks->total(), 1187u);
  // Old kernels write four fields only after "cpu"; anything else is not the line.
  EXPECT_TRUE(ParseProcStatCpuLine("cpu 1 2 3 4\n"));
  EXPECT_FALSE(ParseProcStatCpuLine("cpu0 1 2 3 4 5\n"));
  EXPECT_FALSE(ParseProcStatCpuLine("cpu 1 x 3 4 5\n"));
  EXPECT_FALSE(ParseProcStatCpuLine(""));
}

TEST(CpuUseParse, CgroupMembershipV1AndV2) {
  CgroupMembership v1 = ParseProcCgroup(
      "12:pids:/\n4:cpu,cpuacct:/kubepods/pod1/abc\n1:name=systemd:/x\n0::/unified/x\n", "cpu");
  EXPECT_TRUE(v1.has_v1);
  EXPECT_EQ(v1.v1_path, "/kubepods/pod1/abc");
  EXPECT_TRUE(v1.has_v2);
  EXPECT_EQ(v1.v2_path, "/unified/x");
  CgroupMembership v2 = ParseProcCgroup("0::/\n", "cpu");
  EXPECT_FALSE(v2.has_v1);
  EXPECT_TRUE(v2.has_v2);
  EXPECT_EQ(v2.v2_path, "/");
  // cpuset is not cpu.
  EXPECT_FALSE(ParseProcCgroup("3:cpuset:/a\n", "cpu").has_v1);
  EXPECT_TRUE(ParseProcCgroup("5:memory:/m\n", "memory").has_v1);
}

TEST(CpuUseParse, MountinfoFindsTheCpuHierarchyAndCgroup2) {
  CgroupMounts mounts = ParseMountinfo(
      "25 30 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
      "26 25 0:23 / /sys/fs/cgroup/cpuset rw shared:9 - cgroup cgroup rw,cpuset\n"
      "27 25 0:24 /kubepods /sys/fs/cgroup/cpu\\040x rw - cgroup cgroup rw,cpu,cpuacct\n"
      "28 25 0:25 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
      "cpu");
  EXPECT_EQ(mounts.v1_mount, "/sys/fs/cgroup/cpu x");
  EXPECT_EQ(mounts.v1_root, "/kubepods");
  EXPECT_EQ(mounts.v2_mount, "/sys/fs/cgroup/unified");
  EXPECT_EQ(mounts.v2_root, "/");
}

TEST(CpuUseParse, CgroupDirectoryBelowTheMountsRoot) {
  EXPECT_EQ(CgroupDirectory("/m", "/", "/a/b"), "/m/a/b");
  EXPECT_EQ(CgroupDirectory("/m", "/", "/"), "/m");
  EXPECT_EQ(CgroupDirectory("/m", "/kubepods", "/kubepods/pod1"), "/m/pod1");
  EXPECT_EQ(CgroupDirectory("/m", "/kubepods", "/kubepods"), "/m");
  // Outside what the mount shows (another namespace's path): the mount itself, never "..".
  EXPECT_EQ(CgroupDirectory("/m", "/kubepods", "/other"), "/m");
  EXPECT_EQ(CgroupDirectory("/m", "/", "/a/../../etc"), "/m");
}

TEST(CpuUseParse, QuotasAndCpuStat) {
  EXPECT_EQ(ParseCpuMax("max 100000\n"), 0u);
  EXPECT_EQ(ParseCpuMax("50000 100000\n"), 500u);
  EXPECT_EQ(ParseCpuMax("250000 100000"), 2500u);
  EXPECT_FALSE(ParseCpuMax("x 100000"));
  EXPECT_FALSE(ParseCpuMax("5 0"));
  EXPECT_EQ(ParseCfsQuota("-1\n", "100000\n"), 0u);
  EXPECT_EQ(ParseCfsQuota("150000\n", "100000\n"), 1500u);
  EXPECT_FALSE(ParseCfsQuota("", "100000"));
  const std::string stat = "nr_periods 40\nnr_throttled 12\nthrottled_time 900000\n";
  EXPECT_EQ(StatFileValue(stat, "nr_throttled"), 12u);
  EXPECT_EQ(StatFileValue(stat, "throttled_time"), 900000u);
  EXPECT_FALSE(StatFileValue(stat, "throttled_usec"));
}

// A fake /proc and cgroup v1 tree: the meter finds the cgroup from mountinfo and reports
// differences between two readings.
TEST(CpuUseMeterTest, DifferencesOfAFakeV1Tree) {
  FakeRoot root;
  const fs::path cgroup = root / "cg/cpu/pod";
  FakeCgroup(root / "proc", "4:cpu,cpuacct:/pod\n0::/\n", root / "cg/cpu", 1, "cpu,cpuacct");
  Write(root / "proc/stat", "cpu  100 0 100 800 0 0 0 0\n");
  Write(cgroup / "cpu.stat", "nr_periods 10\nnr_throttled 1\nthrottled_time 1000\n");
  Write(cgroup / "cpu.cfs_quota_us", "50000\n");
  Write(cgroup / "cpu.cfs_period_us", "100000\n");
  CpuUseMeter meter(CpuUseMeter::Paths{.proc = (root / "proc").string()});
  EXPECT_EQ(meter.cgroup_version(), 1);
  EXPECT_EQ(meter.cgroup_directory(), cgroup.string());

  Write(root / "proc/stat", "cpu  250 0 150 900 0 0 0 10\n");
  Write(cgroup / "cpu.stat", "nr_periods 30\nnr_throttled 9\nthrottled_time 51000\n");
  CpuUseDelta delta = meter.TakeDelta();
  const uint64_t tick = 1'000'000'000u / static_cast<uint64_t>(sysconf(_SC_CLK_TCK));
  EXPECT_GT(delta.host_cpus, 0u);
  EXPECT_EQ(delta.host_busy_ns, 200 * tick);
  EXPECT_EQ(delta.host_steal_ns, 10 * tick);
  EXPECT_EQ(delta.host_total_ns, 310 * tick);
  EXPECT_EQ(delta.cgroup.version, 1);
  EXPECT_EQ(delta.cgroup.quota_millicpus, 500u);
  EXPECT_EQ(delta.cgroup.periods, 20u);
  EXPECT_EQ(delta.cgroup.throttled_periods, 8u);
  EXPECT_EQ(delta.cgroup.throttled_ns, 50000u);

  // A counter that went backwards (a reset) gives 0, not a wrapped number.
  Write(cgroup / "cpu.stat", "nr_periods 5\nnr_throttled 1\nthrottled_time 10\n");
  delta = meter.TakeDelta();
  EXPECT_EQ(delta.cgroup.periods, 0u);
  EXPECT_EQ(delta.cgroup.throttled_ns, 0u);
  EXPECT_EQ(delta.host_busy_ns, 0u);
}

TEST(CpuUseMeterTest, V2AndNothingReadable) {
  FakeRoot root;
  FakeCgroup(root / "proc", "0::/job\n", root / "cg2", 2);
  Write(root / "proc/stat", "cpu  1 0 1 8 0 0 0 0\n");
  Write(root / "cg2/job/cpu.max", "200000 100000\n");
  Write(root / "cg2/job/cpu.stat",
        "usage_usec 5\nnr_periods 4\nnr_throttled 2\nthrottled_usec 7\n");
  CpuUseMeter meter(CpuUseMeter::Paths{.proc = (root / "proc").string()});
  EXPECT_EQ(meter.cgroup_version(), 2);
  Write(root / "cg2/job/cpu.stat",
        "usage_usec 9\nnr_periods 14\nnr_throttled 5\nthrottled_usec 1007\n");
  CpuUseDelta delta = meter.TakeDelta();
  EXPECT_EQ(delta.cgroup.quota_millicpus, 2000u);
  EXPECT_EQ(delta.cgroup.periods, 10u);
  EXPECT_EQ(delta.cgroup.throttled_periods, 3u);
  EXPECT_EQ(delta.cgroup.throttled_ns, 1'000'000u);

  CpuUseMeter none(CpuUseMeter::Paths{.proc = (root / "missing").string()});
  EXPECT_EQ(none.cgroup_version(), 0);
  delta = none.TakeDelta();
  EXPECT_EQ(delta.host_cpus, 0u);
  EXPECT_EQ(delta.cgroup.version, 0);
}

// This machine's real files: the host's busy time grows while this thread burns CPU, and the
// process's CPU is at most the host's busy time.
TEST(CpuUseMeterTest, RealProcOfThisHost) {
  CpuUseMeter meter;
  volatile uint64_t sink = 0;
  // Burn 60 ms of this thread's CPU (not of wall time: a loaded host may give it less), within
  // a generous wall-time bound.
  auto thread_cpu_ns = [] {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  };
  const int64_t cpu_until = thread_cpu_ns() + 60'000'000;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (thread_cpu_ns() < cpu_until && std::chrono::steady_clock::now() < give_up) {
    for (int i = 0; i < 1000; ++i) sink = sink + 1;
  }
  CpuUseDelta delta = meter.TakeDelta();
  ASSERT_GT(delta.host_cpus, 0u);
  EXPECT_GT(delta.process_cpu_ns, 50'000'000u);
  EXPECT_GT(delta.host_total_ns, 0u);
  EXPECT_LE(delta.host_busy_ns, delta.host_total_ns);
}

// The batch carries both readings, each absent when not given.
TEST(CpuUseMeterTest, TheBatchCarriesCpuAndMemory) {
  Profile empty(16, 0);
  StringTable strings;
  BatchHeader header;
  header.executor_id = "1";
  CpuUseDelta cpu;
  cpu.host_cpus = 4;
  cpu.host_busy_ns = 7;
  cpu.process_cpu_ns = 3;
  cpu.agent_cpu_ns = 2;
  cpu.cgroup.version = 2;
  cpu.cgroup.throttled_ns = 11;
  MemoryUseReading memory;
  memory.rss_bytes = 5;
  memory.cgroup_version = 1;
  memory.cgroup_limit_bytes = 9;
  memory.python_processes = 3;
  memory.python_rss_bytes = 13;
  std::vector<uint8_t> bytes = EncodeBatch(header, empty, strings, {}, {}, {}, &cpu, &memory);
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  ASSERT_TRUE(schema::VerifyBatchBuffer(verifier));
  const schema::Batch* batch = schema::GetBatch(bytes.data());
  ASSERT_NE(batch->cpu(), nullptr);
  EXPECT_EQ(batch->cpu()->host_cpus(), 4u);
  EXPECT_EQ(batch->cpu()->host_busy_ns(), 7u);
  EXPECT_EQ(batch->cpu()->process_cpu_ns(), 3u);
  EXPECT_EQ(batch->cpu()->agent_cpu_ns(), 2u);
  EXPECT_EQ(batch->cpu()->cgroup_version(), 2);
  EXPECT_EQ(batch->cpu()->cgroup_throttled_ns(), 11u);
  ASSERT_NE(batch->memory(), nullptr);
  EXPECT_EQ(batch->memory()->rss_bytes(), 5u);
  EXPECT_EQ(batch->memory()->cgroup_version(), 1);
  EXPECT_EQ(batch->memory()->cgroup_limit_bytes(), 9u);
  EXPECT_EQ(batch->memory()->python_processes(), 3u);
  EXPECT_EQ(batch->memory()->python_rss_bytes(), 13u);
  std::vector<uint8_t> without = EncodeBatch(header, empty, strings, {}, {});
  EXPECT_EQ(schema::GetBatch(without.data())->cpu(), nullptr);
  EXPECT_EQ(schema::GetBatch(without.data())->memory(), nullptr);
}

// The meter reads the CPU clocks of the threads registered with it: a thread that burns CPU shows
// it, a thread that ended keeps its last reading, and a reading never goes backwards.
TEST(AgentCpuMeterTest, SumsItsThreadsClocksAndKeepsEndedThreadsLastReading) {
  AgentCpuMeter meter;
  std::atomic<bool> spun{false}, stop{false};
  std::thread busy([&] {
    meter.AddCurrentThread();
    // 60 ms of its own CPU clock, not of wall time: on a loaded host a thread gets only part of
    // a core (CI measured 8-20 ms in 60 ms of wall time). Gives up after 20 s.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    volatile uint64_t spin = 0;
    while (CurrentThreadCpuNs() < 60'000'000 && std::chrono::steady_clock::now() < give_up) {
      for (int i = 0; i < 1000; ++i) spin = spin + 1;
    }
    spun.store(true);
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!spun.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const uint64_t running = meter.ThreadsNs();
  EXPECT_GE(running, 60'000'000u);  // its spin, and whatever the thread used before it
  EXPECT_LT(running, 5'000'000'000u);
  stop.store(true);
  busy.join();
  // A joined thread's clock may still tick for a moment (the kernel finishes its exit after the
  // join returns): wait until the reading settles, then it must stay.
  uint64_t ended = meter.ThreadsNs();
  for (int i = 0; i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const uint64_t again = meter.ThreadsNs();
    if (again == ended) break;
    ended = again;
  }
  EXPECT_GE(ended, running);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(meter.ThreadsNs(), ended);  // the ended thread's clock no longer moves it
  // Room for kMaxThreads threads.
  for (int i = 1; i < AgentCpuMeter::kMaxThreads; ++i) EXPECT_TRUE(meter.AddCurrentThread());
  EXPECT_FALSE(meter.AddCurrentThread());
}

}  // namespace
}  // namespace sparkprof::agent
