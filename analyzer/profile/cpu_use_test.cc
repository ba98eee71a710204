#include "analyzer/profile/cpu_use.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyzer/codec/codec.h"
#include "analyzer/codec/encode.h"
#include "analyzer/profile/stage_profiles.h"
#include "analyzer/report/analysis.h"
#include "schema/profile_generated.h"

namespace sparkprof::profile {
namespace {

constexpr int64_t kSecondNs = 1'000'000'000;

flamegraph::CpuUseRow Row(std::string_view executor, std::string_view host, int64_t start_s,
                          int64_t end_s, double busy_cpus, uint32_t cpus, double process_cpus) {
  flamegraph::CpuUseRow row;
  row.executor_id = executor;
  row.host = host;
  row.pid = executor == "driver" ? 1 : 100;
  row.start_epoch_ns = start_s * kSecondNs;
  row.end_epoch_ns = end_s * kSecondNs;
  const double wall = static_cast<double>((end_s - start_s) * kSecondNs);
  row.host_cpus = cpus;
  row.host_total_ns = static_cast<uint64_t>(wall * cpus);
  row.host_busy_ns = static_cast<uint64_t>(wall * busy_cpus);
  row.process_cpu_ns = static_cast<uint64_t>(wall * process_cpus);
  return row;
}

// Two executors on one 2-CPU host, busy 1.9 CPUs: they use 0.4 + 0.5, so others use 1.0.
TEST(ApplicationCpuUseTest, OthersAreTheHostsBusyTimeBeyondTheApplicationsJvms) {
  ApplicationCpuUse use;
  use.Add(Row("1", "h", 100, 110, 1.9, 2, 0.4));
  use.Add(Row("2", "h", 101, 111, 1.9, 2, 0.5));
  CpuDuring during = use.During(102'000, 108'000);
  ASSERT_EQ(during.hosts.size(), 1u);
  EXPECT_DOUBLE_EQ(during.span_s, 6.0);
  EXPECT_EQ(during.cpus(), 2u);
  EXPECT_NEAR(during.busy_cpus(), 1.9, 1e-9);
  EXPECT_NEAR(during.application_cpus(), 0.9, 1e-9);
  EXPECT_NEAR(during.others_cpus(), 1.0, 1e-9);
  EXPECT_EQ(during.cgroup_jvms, 0u);
  // Nothing overlaps: no hosts.
  EXPECT_FALSE(use.During(200'000, 210'000).has_hosts());
  EXPECT_FALSE(use.During(105'000, 105'000).has_hosts());
}

// Over several spans a window counts by what of it they cover; the driver's run-delay steps too,
// and only the driver's.
TEST(ApplicationCpuUseTest, SpansAndTheDriversRunDelayCountByOverlap) {
  ApplicationCpuUse use;
  use.Add(Row("1", "h", 0, 10, 2.0, 2, 1.0));   // others 1.0
  use.Add(Row("1", "h", 10, 20, 0.5, 2, 0.5));  // others 0
  const std::vector<flamegraph::RunDelayStepRow> steps = {
      {1'000, 3'000, 1'000'000'000, 600'000'000},  // 1 s of waiting over [1 s, 3 s)
      {12'000, 13'000, 400'000'000, 400'000'000},
      {15'000, 15'000, 9, 9}};  // empty: left out
  flamegraph::CpuUseRow driver = Row("driver", "h", 0, 20, 2.0, 2, 0.0);
  driver.run_delay_polls = 80;
  driver.run_delay_ns = 1'400'000'000;
  driver.run_delay_steps = steps;
  use.Add(driver);
  flamegraph::CpuUseRow executor = Row("2", "h", 0, 20, 2.0, 2, 0.0);
  executor.pid = 200;
  executor.run_delay_polls = 80;
  executor.run_delay_steps = steps;  // an executor's steps are not the driver's
  use.Add(executor);
  EXPECT_EQ(use.driver_run_delay_steps(), 2u);

  // [2 s, 4 s) and [12 s, 14 s): half of the first step, all of the second.
  const SpansMs spans = {{2'000, 4'000}, {12'000, 14'000}};
  const DriverRunDelay delay = use.DriverRunDelayDuring(spans);
  EXPECT_DOUBLE_EQ(delay.covered_s, 4.0);
  EXPECT_NEAR(delay.total_ns, 0.5e9 + 0.4e9, 1);
  EXPECT_NEAR(delay.busiest_ns, 0.3e9 + 0.4e9, 1);
  // Over the driver's window the host was busy 2.0 CPUs x 20 s, executor 1 on it used 15 s: the
  // others' 25 s, 5 s of them in the spans' 4 s, explain all of the 0.9 s waited there.
  EXPECT_NEAR(delay.others_cpus, 1.25, 1e-9);
  EXPECT_NEAR(delay.others_ns, 0.9e9, 1);
  const CpuDuring during = use.During(spans);
  EXPECT_DOUBLE_EQ(during.span_s, 4.0);
  ASSERT_EQ(during.hosts.size(), 1u);
  // The first of the best-covering JVMs on h (executor 1, 4 s of windows) says busy 2.0 then 0.5.
  EXPECT_NEAR(during.busy_cpus(), 1.25, 1e-9);
  // Nothing of the spans polled: no coverage.
  EXPECT_DOUBLE_EQ(use.DriverRunDelayDuring({{30'000, 40'000}}).covered_s, 0.0);
  EXPECT_DOUBLE_EQ(use.DriverRunDelayDuring({}).total_ns, 0.0);
}

// A sampled Python driver program: its CPU is the application's, not another process's, and its
// main thread's run delay in the spans joins the driver's wait (its windows by overlap).
TEST(ApplicationCpuUseTest, ThePythonDriversCpuIsTheApplicationsAndItsRunDelayCounts) {
  ApplicationCpuUse use;
  flamegraph::CpuUseRow driver = Row("driver", "h", 0, 20, 2.0, 2, 0.0);
  driver.run_delay_polls = 80;
  driver.run_delay_ns = 1'000'000'000;
  const std::vector<flamegraph::RunDelayStepRow> steps = {
      {1'000, 3'000, 1'000'000'000, 600'000'000}};
  driver.run_delay_steps = steps;
  use.Add(driver);
  use.Add(Row("1", "h", 0, 20, 2.0, 2, 0.5));  // an executor on the same host: 10 s of CPU
  const SpansMs spans = {{2'000, 4'000}};
  // Without the Python driver's windows, the host's 40 s busy less the executor's 10 s are others'.
  const DriverRunDelay alone = use.DriverRunDelayDuring(spans);
  EXPECT_NEAR(alone.others_cpus, 1.5, 1e-9);
  EXPECT_DOUBLE_EQ(alone.python_ns, 0.0);
  EXPECT_FALSE(alone.python_sampled);
  // The Python driver used 5 s of CPU in each 10 s window and waited 2 s for a CPU in the first.
  const std::vector<ProcessWindow> python = {{0, 10 * kSecondNs, 5 * kSecondNs, 2 * kSecondNs},
                                             {10 * kSecondNs, 20 * kSecondNs, 5 * kSecondNs, 0}};
  const DriverRunDelay delay = use.DriverRunDelayDuring(spans, python);
  EXPECT_TRUE(delay.python_sampled);
  EXPECT_DOUBLE_EQ(delay.covered_s, 2.0);
  EXPECT_NEAR(delay.total_ns, 0.5e9, 1);
  EXPECT_NEAR(delay.busiest_ns, 0.3e9, 1);
  EXPECT_NEAR(delay.python_ns, 0.4e9, 1);  // 2 s of its 10 s window: 2/10 of 2 s
  // Others: (40 s busy - 10 s executor - 10 s Python) x 2/20 of the window, over 2 s.
  EXPECT_NEAR(delay.others_cpus, 1.0, 1e-9);
  EXPECT_NEAR(delay.others_ns, 0.9e9, 1);  // all of the 0.5 + 0.4 s waited
  // A Python window outside the spans is not "sampled" there.
  const std::vector<ProcessWindow> later = {{30 * kSecondNs, 40 * kSecondNs, 1, 1}};
  EXPECT_FALSE(use.DriverRunDelayDuring(spans, later).python_sampled);
}

// Spans less spans: what none of the second covers; and their exact overlap with a window in ns.
TEST(SpansTest, SubtractAndOverlap) {
  const SpansMs spans = {{0, 10}, {20, 30}, {40, 50}};
  EXPECT_EQ(SubtractSpans(spans, {}), spans);
  EXPECT_EQ(SubtractSpans(spans, {{5, 25}}), (SpansMs{{0, 5}, {25, 30}, {40, 50}}));
  EXPECT_EQ(SubtractSpans(spans, {{-5, 2}, {3, 4}, {8, 45}}), (SpansMs{{2, 3}, {4, 8}, {45, 50}}));
  EXPECT_EQ(SubtractSpans(spans, {{0, 100}}), SpansMs{});
  EXPECT_EQ(SubtractSpans(spans, {{10, 20}, {30, 40}}), spans);  // touching, not covering
  EXPECT_EQ(OverlapNs(spans, 5'000'000, 45'000'000), 5'000'000 + 10'000'000 + 5'000'000);
  EXPECT_EQ(OverlapNs(spans, 10'000'000, 20'000'000), 0);
  // Hostile epoch ms saturate instead of overflowing.
  EXPECT_EQ(OverlapNs(SpansMs{{INT64_MIN, INT64_MAX}}, 0, 7), 7);
}

// Windows count in proportion to their overlap: a busy window and an idle one, half each.
TEST(ApplicationCpuUseTest, PartialWindowsCountByOverlap) {
  ApplicationCpuUse use;
  use.Add(Row("1", "h", 0, 10, 2.0, 2, 2.0));
  use.Add(Row("1", "h", 10, 20, 0.0, 2, 0.0));
  CpuDuring during = use.During(5'000, 15'000);
  EXPECT_NEAR(during.busy_cpus(), 1.0, 1e-9);
  EXPECT_NEAR(during.application_cpus(), 1.0, 1e-9);
  EXPECT_NEAR(during.others_cpus(), 0.0, 1e-9);
}

TEST(ApplicationCpuUseTest, ThrottlingSummedOverCgroupsAndTheSmallestQuota) {
  ApplicationCpuUse use;
  flamegraph::CpuUseRow a = Row("1", "h1", 0, 10, 0.5, 8, 0.5);
  a.cgroup_version = 2;
  a.cgroup_quota_millicpus = 500;
  a.cgroup_periods = 100;
  a.cgroup_throttled_periods = 80;
  a.cgroup_throttled_ns = 4 * kSecondNs;
  flamegraph::CpuUseRow b = Row("2", "h2", 0, 10, 0.2, 8, 0.1);
  b.cgroup_version = 2;
  b.cgroup_quota_millicpus = 2000;
  b.cgroup_periods = 100;
  use.Add(a);
  use.Add(b);
  CpuDuring during = use.During(0, 10'000);
  EXPECT_EQ(during.hosts.size(), 2u);
  EXPECT_EQ(during.cpus(), 16u);
  EXPECT_EQ(during.cgroup_jvms, 2u);
  EXPECT_EQ(during.throttled_jvms, 1u);
  EXPECT_EQ(during.periods, 200u);
  EXPECT_EQ(during.throttled_periods, 80u);
  EXPECT_NEAR(during.throttled_ns, 4e9, 1);
  EXPECT_EQ(during.min_quota_millicpus, 500u);
}

TEST(ApplicationCpuUseTest, BoundedAndEmptyWindowsRefused) {
  ApplicationCpuUse use(2);
  use.Add(Row("1", "h", 0, 1, 1, 2, 1));
  use.Add(Row("1", "h", 1, 1, 1, 2, 1));  // no window: refused, not counted as kept
  use.Add(Row("1", "h", 1, 2, 1, 2, 1));
  use.Add(Row("1", "h", 2, 3, 1, 2, 1));
  EXPECT_EQ(use.windows(), 2u);
  EXPECT_EQ(use.windows_left_out(), 1u);

  // The driver's run-delay steps: as many as the windows, later ones counted.
  ApplicationCpuUse driver_use(2);
  const std::vector<flamegraph::RunDelayStepRow> steps = {
      {0, 250, 1, 1}, {250, 500, 1, 1}, {500, 750, 1, 1}};
  flamegraph::CpuUseRow driver = Row("driver", "h", 0, 1, 1, 2, 1);
  driver.run_delay_polls = 4;
  driver.run_delay_steps = steps;
  driver_use.Add(driver);
  EXPECT_EQ(driver_use.driver_run_delay_steps(), 2u);
  EXPECT_EQ(driver_use.driver_run_delay_steps_left_out(), 1u);
}

std::string CpuOnlyProfile() {
  flatbuffers::FlatBufferBuilder builder;
  auto cpu = schema::CreateCpuUse(builder, 2, 18 * kSecondNs, 0, 20 * kSecondNs, 8 * kSecondNs, 1,
                                  0, 100, 0, 0);
  auto batch = schema::CreateBatchDirect(builder, 1, "3", "worker-a", 42, 1000 * kSecondNs,
                                         1010 * kSecondNs, 10'000'000, "cpu+wall", nullptr, nullptr,
                                         nullptr, nullptr, nullptr, 0, nullptr, cpu);
  schema::FinishSizePrefixedBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

// The agents' own CPU (agent_cpu_ns) is summed against the process CPU of the windows that carry
// it; older agents' windows (0) count in the process CPU only.
TEST(ApplicationCpuUseTest, AgentCpuIsAShareOfItsOwnWindowsProcessCpu) {
  ApplicationCpuUse use;
  flamegraph::CpuUseRow row = Row("1", "h", 0, 1, 1, 2, 1);
  row.process_cpu_ns = 4'000'000'000;
  row.agent_cpu_ns = 20'000'000;
  use.Add(row);
  row.start_epoch_ns = 1;
  row.end_epoch_ns = 2;
  row.agent_cpu_ns = 0;  // an agent before agent_cpu_ns
  use.Add(row);
  EXPECT_EQ(use.process_cpu_ns(), 8'000'000'000u);
  EXPECT_EQ(use.agent_cpu_ns(), 20'000'000u);
  EXPECT_EQ(use.agent_measured_process_cpu_ns(), 4'000'000'000u);
}

ProfileLoadOptions Decoding() {
  ProfileLoadOptions options;
  options.decoder = &report::DecodeProfileFile;
  return options;
}

// A profile kept compressed (as the workload fixtures are, *.sparkprof.zstd) reads, through
// report::DecodeProfileFile (what analyze --profile uses), as the file itself; a corrupt one
// fails naming the codec.
TEST(ApplicationCpuUseTest, CompressedProfileFilesAreRead) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("cpu_use_profile_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (codec::Format format : {codec::Format::kPlain, codec::Format::kZstd, codec::Format::kGzip,
                               codec::Format::kLz4Block}) {
    SCOPED_TRACE(codec::FormatName(format));
    Result<std::string> bytes = codec::Encode(format, CpuOnlyProfile());
    ASSERT_TRUE(bytes.ok());
    const std::string path = (dir / "profile.sparkprof").string();
    std::ofstream(path, std::ios::binary) << *bytes;
    Result<ApplicationProfile> profile = LoadApplicationProfile(path, Decoding());
    ASSERT_TRUE(profile.ok()) << profile.status().message();
    EXPECT_EQ(profile->cpu_use.windows(), 1u);
  }
  Result<std::string> zstd = codec::Encode(codec::Format::kZstd, CpuOnlyProfile());
  const std::string cut = (dir / "cut.sparkprof.zstd").string();
  std::ofstream(cut, std::ios::binary) << zstd->substr(0, zstd->size() / 2);
  Result<ApplicationProfile> truncated = LoadApplicationProfile(cut, Decoding());
  // Without the decoder (the driver's own reading) a compressed file is not a profile.
  EXPECT_FALSE(LoadApplicationProfile(cut).ok());
  EXPECT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("zstd"), std::string::npos)
      << truncated.status().message();
  std::filesystem::remove_all(dir);
}

// Through a saved profile: a batch's CpuUse reaches ApplicationProfile::cpu_use.
TEST(ApplicationCpuUseTest, ReadFromAProfileFile) {
  const std::string bytes = CpuOnlyProfile();
  Result<ApplicationProfile> profile = ApplicationProfileFromBytes(bytes, "p.sparkprof");
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  ASSERT_EQ(profile->cpu_use.windows(), 1u);
  ASSERT_EQ(profile->cpu_use.jvms().size(), 1u);
  EXPECT_EQ(profile->cpu_use.jvms()[0].host, "worker-a");
  CpuDuring during = profile->cpu_use.During(1'000'000, 1'010'000);
  ASSERT_EQ(during.hosts.size(), 1u);
  EXPECT_NEAR(during.busy_cpus(), 1.8, 1e-9);
  EXPECT_NEAR(during.application_cpus(), 0.8, 1e-9);
  EXPECT_NEAR(during.others_cpus(), 1.0, 1e-9);
}

}  // namespace
}  // namespace sparkprof::profile
