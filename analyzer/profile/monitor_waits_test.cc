#include "analyzer/profile/monitor_waits.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/profile/stage_profiles.h"
#include "analyzer/report/profile_view.h"
#include "analyzer/testing/profile_batch.h"

namespace sparkprof::profile {
namespace {

using test_util::MonitorWaitSpec;
using test_util::ProfileBatchBuilder;

constexpr uint64_t kMs = 1'000'000;
const std::vector<std::string> kTask = {"java.lang.Thread.run",
                                        "org.apache.spark.executor.Executor$TaskRunner.run"};
constexpr const char* kScorer = "com.acme.SharedScorer";
constexpr const char* kWorker = "Executor task launch worker";

std::vector<std::string> Under(std::vector<std::string> frames) {
  std::vector<std::string> stack = kTask;
  stack.insert(stack.end(), frames.begin(), frames.end());
  return stack;
}

// Stage 1's task threads: one compute sample, so the stage attempt has a summary.
ProfileBatchBuilder StageOne(const char* executor = "1") {
  ProfileBatchBuilder batch("cpu+wall", executor);
  batch.Sample(1, 0, Under({"com.acme.Job.map"}), schema::Category::compute, 1000 * kMs);
  return batch;
}

TEST(MonitorWaitsTest, SiteOfAStackIsTheInnermostFrameOutsideTheJdkAndTheApplicationFrame) {
  const std::vector<std::string_view> jdk_waiter = {
      "com.acme.Job.map", "org.apache.spark.util.Utils.tryLog", "java.util.Hashtable.get"};
  StackSite site = SiteOfStack(jdk_waiter);
  EXPECT_EQ(site.frame, "org.apache.spark.util.Utils.tryLog");
  EXPECT_EQ(site.application_frame, "com.acme.Job.map");
  const std::vector<std::string_view> jdk_only = {"java.lang.Thread.run", "java.lang.Object.wait"};
  EXPECT_EQ(SiteOfStack(jdk_only).frame, "");
  EXPECT_EQ(SiteOfStack(jdk_only).application_frame, "");
  EXPECT_EQ(SiteOfStack({}).frame, "");
}

// Rows of one key add up over batches and executors; per class: the waits, their time, the
// waiter sites by time, the holder sites by looks, the owners' threads by waits.
TEST(MonitorWaitsTest, RowsAreSummedPerStageClassAndSite) {
  const MonitorWaitSpec looked{1,
                               0,
                               kScorer,
                               Under({"com.acme.Job.lockedWork"}),
                               Under({"com.acme.SharedScorer.score", "java.lang.Math.exp"}),
                               true,
                               kWorker,
                               9,
                               900};
  MonitorWaitSpec unlooked = looked;  // the agent names the owner only at a look
  unlooked.holder_looked = false;
  unlooked.holder_thread = "";
  unlooked.waits = 400;
  unlooked.wait_ms = 2200;
  MonitorWaitSpec other_site = unlooked;
  other_site.waiter = Under({"com.acme.Job.otherWork"});
  other_site.waits = 3;
  other_site.wait_ms = 30;
  const MonitorWaitSpec object{
      1, 0, "java.lang.Object", Under({"com.acme.Cache.get"}), {}, false, "", 1, 5};
  const std::string bytes = StageOne().MonitorWait(looked).MonitorWait(unlooked).Bytes() +
                            StageOne("2").MonitorWait(looked).MonitorWait(other_site).Bytes() +
                            ProfileBatchBuilder().MonitorWait(object).Bytes();
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(bytes, "m.sparkprof");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->problems.empty());
  const StageProfile* stage = loaded->Find(1, 0);
  ASSERT_NE(stage, nullptr);
  const StageMonitors& monitors = stage->monitors;
  EXPECT_EQ(monitors.waits, 422u);
  EXPECT_EQ(monitors.wait_ns, 4035 * kMs);
  EXPECT_EQ(monitors.holder_looks, 18u);
  ASSERT_EQ(monitors.classes.size(), 2u);
  const MonitorTime& scorer = monitors.classes[0];
  EXPECT_EQ(scorer.monitor_class, kScorer);
  EXPECT_EQ(scorer.waits, 421u);
  EXPECT_EQ(scorer.wait_ns, 4030 * kMs);
  EXPECT_EQ(scorer.mean_wait_ns(), 4030 * kMs / 421);
  EXPECT_EQ(scorer.holder_looks, 18u);
  ASSERT_EQ(scorer.waiters.size(), 2u);
  EXPECT_EQ(scorer.waiters[0].frame, "com.acme.Job.lockedWork");
  EXPECT_EQ(scorer.waiters[0].application_frame, "com.acme.Job.lockedWork");
  EXPECT_EQ(scorer.waiters[0].waits, 418u);
  EXPECT_EQ(scorer.waiters[0].wait_ns, 4000 * kMs);
  EXPECT_EQ(scorer.waiters[1].frame, "com.acme.Job.otherWork");
  ASSERT_EQ(scorer.holders.size(), 1u);
  EXPECT_EQ(scorer.holders[0].frame, "com.acme.SharedScorer.score");  // not Math.exp (the JDK)
  EXPECT_EQ(scorer.holders[0].looks, 18u);
  ASSERT_EQ(scorer.holder_threads.size(), 1u);
  EXPECT_EQ(scorer.holder_threads[0].thread, kWorker);
  EXPECT_EQ(scorer.holder_threads[0].looks, 18u);
  EXPECT_EQ(monitors.classes[1].monitor_class, "java.lang.Object");
  EXPECT_TRUE(monitors.classes[1].holders.empty());
}

// The table keeps at most max_monitor_keys keys: a row that would add one more is counted with
// its wait and named; rows of kept keys still add up. Waits of a stage attempt without stack
// samples have no summary to go to: named too.
TEST(MonitorWaitsTest, KeysPastTheLimitAndStagesWithoutSamplesAreCountedAndNamed) {
  auto row = [](const char* monitor_class, int32_t stage, uint64_t ms) {
    return MonitorWaitSpec{
        stage, 0, monitor_class, Under({"com.acme.Job.lockedWork"}), {}, false, "", 1, ms};
  };
  const std::string bytes = StageOne()
                                .MonitorWait(row("com.acme.A", 1, 10))
                                .MonitorWait(row("com.acme.B", 1, 20))
                                .MonitorWait(row("com.acme.C", 1, 40))  // a third key
                                .MonitorWait(row("com.acme.A", 1, 5))   // a kept key
                                .Bytes() +
                            ProfileBatchBuilder().MonitorWait(row("com.acme.A", 7, 1)).Bytes();
  ProfileLoadOptions options;
  options.max_monitor_keys = 2;
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(bytes, "m.sparkprof", options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const StageMonitors& monitors = loaded->Find(1, 0)->monitors;
  ASSERT_EQ(monitors.classes.size(), 2u);
  EXPECT_EQ(monitors.classes[0].monitor_class, "com.acme.B");
  EXPECT_EQ(monitors.classes[1].wait_ns, 15 * kMs);
  EXPECT_EQ(loaded->max_monitor_keys, 2u);
  EXPECT_EQ(loaded->monitor_rows_left_out, 2u);  // C, and stage 7's A (a third key)
  EXPECT_EQ(loaded->monitor_wait_ns_left_out, 41 * kMs);
  ASSERT_EQ(loaded->problems.size(), 1u);
  EXPECT_EQ(loaded->problems[0],
            "m.sparkprof: 2 monitor-wait row(s) (41 ms waiting) past the limit of 2 distinct "
            "monitor keys (docs/limits.md) are left out of the stages' monitors");

  options.max_monitor_keys = 20;
  Result<ApplicationProfile> all = ApplicationProfileFromBytes(bytes, "m.sparkprof", options);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->Find(1, 0)->monitors.classes.size(), 3u);
  EXPECT_EQ(all->monitor_rows_left_out, 0u);
  EXPECT_EQ(all->monitor_wait_ns_left_out, 1 * kMs);
  ASSERT_EQ(all->problems.size(), 1u);
  EXPECT_EQ(all->problems[0],
            "m.sparkprof: monitor waits of 1 ms belong to stage attempts without stack samples "
            "(or to no task) and are left out of the stages' monitors");
}

// A stage's attempts combined: classes, sites and threads matched by name and summed.
TEST(MonitorWaitsTest, AttemptsAreCombinedByClassAndSite) {
  MonitorWaitSpec first{1,
                        0,
                        kScorer,
                        Under({"com.acme.Job.lockedWork"}),
                        Under({"com.acme.SharedScorer.score"}),
                        true,
                        kWorker,
                        10,
                        100};
  MonitorWaitSpec second = first;
  second.stage_attempt = 1;
  second.waits = 5;
  second.wait_ms = 60;
  MonitorWaitSpec object = second;
  object.monitor_class = "java.lang.Object";
  ProfileBatchBuilder batch = StageOne();
  batch.Sample(1, 1, Under({"com.acme.Job.map"}), schema::Category::compute, 500 * kMs);
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(
      batch.MonitorWait(first).MonitorWait(second).MonitorWait(object).Bytes(), "m.sparkprof");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const StageProfile combined = loaded->Combined(1);
  EXPECT_EQ(combined.monitors.waits, 20u);
  EXPECT_EQ(combined.monitors.wait_ns, 220 * kMs);
  ASSERT_EQ(combined.monitors.classes.size(), 2u);
  const MonitorTime& scorer = combined.monitors.classes[0];
  EXPECT_EQ(scorer.monitor_class, kScorer);
  EXPECT_EQ(scorer.wait_ns, 160 * kMs);
  ASSERT_EQ(scorer.waiters.size(), 1u);
  EXPECT_EQ(scorer.waiters[0].waits, 15u);
  ASSERT_EQ(scorer.holders.size(), 1u);
  EXPECT_EQ(scorer.holders[0].looks, 15u);
  EXPECT_EQ(scorer.holder_threads[0].looks, 15u);
}

// Array classes read as Java writes them; the reports print the heaviest classes and sum the rest.
TEST(MonitorWaitsTest, ArrayClassesReadAsJavaWritesThemAndTheReportsSumTheRest) {
  ProfileBatchBuilder batch = StageOne();
  const char* classes[] = {"[I", "[[Ljava.lang.String;", "[Q", "java.lang.Object", "[L;"};
  uint64_t ms = 50;
  for (const char* monitor_class : classes) {
    batch.MonitorWait({1,
                       0,
                       monitor_class,
                       Under({"com.acme.Job.lockedWork"}),
                       {},
                       false,
                       "",
                       ms == 10 ? 1u : 2u,
                       ms});
    ms -= 10;
  }
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(batch.Bytes(), "m.sparkprof");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const StageProfile& stage = *loaded->Find(1, 0);
  std::vector<std::string> names;
  for (const MonitorTime& monitor : stage.monitors.classes) names.push_back(monitor.monitor_class);
  EXPECT_EQ(names, (std::vector<std::string>{"int[]", "java.lang.String[][]", "[Q",
                                             "java.lang.Object", "[L;"}));
  const std::vector<std::string> lines = report::MonitorLines(stage);
  ASSERT_EQ(lines.size(), report::kMonitorLinesShown + 1);
  EXPECT_EQ(lines[0], "int[]: 2 waits, 50 ms waiting (25 ms each), in com.acme.Job.lockedWork");
  EXPECT_EQ(lines[2], "[Q: 2 waits, 30 ms waiting (15 ms each), in com.acme.Job.lockedWork");
  EXPECT_EQ(lines[3], "other classes: 3 waits, 30 ms waiting");
  // One wait is "1 wait".
  StageProfile one;
  one.monitors.waits = 1;
  one.monitors.wait_ns = 2 * kMs;
  one.monitors.classes.push_back({"java.lang.Object", 1, 2 * kMs, 0, {}, {}, {}});
  EXPECT_EQ(report::MonitorLines(one),
            std::vector<std::string>{"java.lang.Object: 1 wait, 2.00 ms waiting (2.00 ms each)"});
}

}  // namespace
}  // namespace sparkprof::profile
