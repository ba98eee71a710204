#include "analyzer/profile/driver_profile.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/profile/stage_profiles.h"
#include "schema/profile_generated.h"

namespace sparkprof::profile {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr int64_t kSecondNs = 1'000'000'000;

struct Sampled {
  const char* thread;
  std::vector<const char*> frames;  // root first
  schema::Category category;
  uint64_t ms;
  int32_t stage = -1;
};

// One batch of `executor` covering [start_s, end_s) seconds of epoch time.
std::string WindowBatch(const char* executor, int64_t start_s, int64_t end_s,
                        const std::vector<Sampled>& sampled) {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<std::string> names;
  auto index_of = [&](const char* name) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return static_cast<uint32_t>(i);
    }
    names.push_back(name);
    return static_cast<uint32_t>(names.size() - 1);
  };
  std::vector<flatbuffers::Offset<schema::Stack>> stacks;
  std::vector<flatbuffers::Offset<schema::StackSample>> samples;
  for (const Sampled& s : sampled) {
    std::vector<uint32_t> frames;
    for (const char* frame : s.frames) frames.push_back(index_of(frame));
    stacks.push_back(schema::CreateStackDirect(builder, &frames));
    samples.push_back(schema::CreateStackSample(
        builder, static_cast<uint32_t>(stacks.size() - 1), s.stage, s.stage >= 0 ? 0 : -1,
        s.stage >= 0 ? 3 : -1, index_of(s.thread), s.category, s.ms / 10, s.ms * kMs));
  }
  std::vector<flatbuffers::Offset<flatbuffers::String>> strings;
  for (const std::string& name : names) strings.push_back(builder.CreateString(name));
  auto batch = schema::CreateBatchDirect(builder, 1, executor, "host", 1, start_s * kSecondNs,
                                         end_s * kSecondNs, 10'000'000, "cpu+wall", &strings,
                                         &stacks, &samples);
  schema::FinishSizePrefixedBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

const char* kMain[] = {"java.lang.Thread.run", "org.apache.spark.deploy.SparkSubmit.main",
                       "com.acme.Job.main", "com.acme.Job.scoreOnDriver", "java.lang.Long.valueOf"};

TEST(DriverProfileTest, ActivitiesAreTheApplicationsFrameElseSparksAndTimeIsSharedByOverlap) {
  const std::vector<const char*> main_stack(std::begin(kMain), std::end(kMain));
  std::string bytes =
      WindowBatch("driver", 100, 105,
                  {{"main", main_stack, schema::Category::compute, 3000},
                   {"C2 CompilerThread0", {"[jit]"}, schema::Category::jit, 1000}}) +
      WindowBatch(
          "driver", 105, 110,
          {{"dag-scheduler-event-loop",
            {"java.lang.Thread.run", "org.apache.spark.util.EventLoop$$anon$1.run",
             "org.apache.spark.scheduler.DAGScheduler.handleJobSubmitted", "java.util.HashMap.get"},
            schema::Category::compute,
            1000},
           {"python-driver",
            {"<module> (app.py:3)", "score (app.py:10)", "fsum (<stdlib>/math.py:1)"},
            schema::Category::python,
            2000},
           {"python-driver",
            {"<module> (app.py:3)", "score (app.py:12)", "[sleep]"},
            schema::Category::python_off_cpu,
            400}}) +
      // An executor's threads outside tasks, and a driver task thread (local mode): not the
      // driver's own time.
      WindowBatch("1", 100, 105, {{"heartbeat", main_stack, schema::Category::compute, 500}}) +
      WindowBatch("driver", 100, 105,
                  {{"Executor task launch worker", main_stack, schema::Category::compute, 700, 2}});
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(bytes, "p.sparkprof");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const DriverProfile& driver = loaded->driver;
  ASSERT_EQ(driver.windows.size(), 2u);
  EXPECT_EQ(driver.windows[0].threads_ns, 3000 * kMs);
  EXPECT_EQ(driver.windows[0].jvm_ns, 1000 * kMs);
  EXPECT_EQ(driver.windows[1].threads_ns, 3400 * kMs);
  EXPECT_EQ(driver.windows[1].off_cpu_ns, 400 * kMs);
  // Both Python stacks are one function: on CPU and off CPU apart.
  ASSERT_EQ(driver.activities.size(), 4u);
  EXPECT_EQ(driver.activities[0].thread, "main");
  EXPECT_EQ(driver.activities[0].frame, "com.acme.Job.scoreOnDriver");
  EXPECT_TRUE(driver.activities[0].application);
  EXPECT_EQ(driver.activities[1].frame,
            "org.apache.spark.scheduler.DAGScheduler.handleJobSubmitted");
  EXPECT_FALSE(driver.activities[1].application);
  EXPECT_EQ(driver.activities[2].frame, "score (app.py)");
  EXPECT_TRUE(driver.activities[2].python);
  EXPECT_TRUE(driver.activities[2].application);
  EXPECT_FALSE(driver.activities[2].off_cpu);
  EXPECT_EQ(driver.activities[3].frame, "score (app.py)");
  EXPECT_TRUE(driver.activities[3].off_cpu);

  // Half of each window: [102.5 s, 107.5 s).
  const std::vector<std::pair<int64_t, int64_t>> gap = {{102'500, 107'500}};
  const DriverTime time = driver.Within(gap);
  EXPECT_EQ(time.covered_ms, 5000);
  EXPECT_EQ(time.threads_ns, 3200 * kMs);
  EXPECT_EQ(time.jvm_ns, 500 * kMs);
  EXPECT_EQ(time.off_cpu_ns, 200 * kMs);
  ASSERT_EQ(time.activities.size(), 4u);
  EXPECT_EQ(driver.activities[time.activities[0].activity].frame, "com.acme.Job.scoreOnDriver");
  EXPECT_EQ(time.activities[0].ns, 1500 * kMs);
  EXPECT_EQ(time.activities[1].ns, 1000 * kMs);  // the Python function on CPU
  EXPECT_EQ(time.activities[3].ns, 200 * kMs);   // and off CPU
  EXPECT_TRUE(time.python);
  // Outside every window, and hostile times that would overflow in ns: nothing, no crash.
  const std::vector<std::pair<int64_t, int64_t>> outside = {{0, 1000}, {INT64_MAX / 2, INT64_MAX}};
  EXPECT_EQ(driver.Within(outside).covered_ms, 0);
}

TEST(DriverProfileTest, WindowsPastTheLimitAreCountedAndNamed) {
  std::string bytes;
  for (size_t i = 0; i <= kMaxDriverWindows; ++i) {
    const auto start = static_cast<int64_t>(i);
    bytes += WindowBatch("driver", start, start + 1,
                         {{"main", {"com.acme.Job.main"}, schema::Category::compute, 10}});
  }
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(bytes, "p.sparkprof");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->driver.windows.size(), kMaxDriverWindows);
  EXPECT_EQ(loaded->driver.windows_left_out, 1u);
  EXPECT_EQ(loaded->driver.ns_left_out, 10 * kMs);
  bool named = false;
  for (const std::string& problem : loaded->problems) {
    named = named || problem.find("left out of the driver's timeline") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

TEST(DriverProfileTest, OverlappingWindowsCoverTheirUnion) {
  // The driver JVM's batch and the Python driver's, over the same seconds.
  std::string bytes =
      WindowBatch("driver", 100, 110,
                  {{"main", {"com.acme.Job.main"}, schema::Category::compute, 1000}}) +
      WindowBatch("driver", 104, 112,
                  {{"python driver", {"<module> (app.py:1)"}, schema::Category::python, 4000}});
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(bytes, "p.sparkprof");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::vector<std::pair<int64_t, int64_t>> gap = {{100'000, 120'000}};
  const DriverTime time = loaded->driver.Within(gap);
  EXPECT_EQ(time.covered_ms, 12'000);
  EXPECT_EQ(time.threads_ns, 5000 * kMs);
  EXPECT_EQ(loaded->driver.Total().covered_ms, 12'000);
}

TEST(DriverProfileTest, ThePythonDriversCpuAndRunDelayAreKeptPerWindow) {
  // The Python driver's sampler: 4 s on CPU in score, 1 s off CPU in it, of which 600 ms runnable
  // with no CPU (under the runnable marker); the driver JVM's own window is not the program's.
  std::string bytes =
      WindowBatch("driver", 100, 110,
                  {{"main", {"com.acme.Job.main"}, schema::Category::compute, 1000}}) +
      WindowBatch("driver", 104, 114,
                  {{"python driver",
                    {"<module> (app.py:1)", "score (app.py:9)"},
                    schema::Category::python,
                    4000},
                   {"python driver",
                    {"<module> (app.py:1)", "score (app.py:9)"},
                    schema::Category::python_off_cpu,
                    400},
                   {"python driver",
                    {"<module> (app.py:1)", "score (app.py:9)", "[runnable: waiting for a CPU]"},
                    schema::Category::python_off_cpu,
                    600}});
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(bytes, "p.sparkprof");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::vector<ProcessWindow> python = loaded->driver.PythonWindows();
  ASSERT_EQ(python.size(), 1u);
  EXPECT_EQ(python[0].start_ns, 104 * 1000 * kMs);
  EXPECT_EQ(python[0].end_ns, 114 * 1000 * kMs);
  EXPECT_EQ(python[0].cpu_ns, 4000 * kMs);
  EXPECT_EQ(python[0].run_delay_ns, 600 * kMs);
  // Half of the Python window: half of its run delay; the off-CPU time holds it.
  const std::vector<std::pair<int64_t, int64_t>> gap = {{109'000, 120'000}};
  const DriverTime time = loaded->driver.Within(gap);
  EXPECT_EQ(time.python_run_delay_ns, 300 * kMs);
  EXPECT_EQ(time.off_cpu_ns, 500 * kMs);
  EXPECT_TRUE(time.python);
}

}  // namespace
}  // namespace sparkprof::profile
