#include "analyzer/profile/stage_profiles.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "schema/profile_generated.h"

namespace sparkprof::profile {
namespace {

using flamegraph::ProfileModel;
using flamegraph::WeightUnit;

constexpr uint64_t kMs = 1'000'000;

void Add(ProfileModel& model, std::vector<std::string_view> frames, Category category,
         uint64_t ms) {
  model.AddStack(std::span<const std::string_view>(frames), category, ms * kMs);
}

TEST(StageProfilesTest, CategoriesOnAndOffCpuAndPythonApart) {
  ProfileModel model(WeightUnit::kNanoseconds);
  Add(model, {"java.lang.Thread.run", "com.acme.Job.map", "java.io.ObjectOutputStream.writeObject"},
      Category::kSerialization, 600);
  Add(model, {"java.lang.Thread.run", "com.acme.Job.map"}, Category::kCompute, 200);
  Add(model,
      {"java.lang.Thread.run", "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.next",
       "java.io.DataInputStream.readInt"},
      Category::kPythonWait, 150);
  Add(model, {"[python] udf.py:f"}, Category::kPython, 140);
  Add(model, {"java.lang.Thread.run", "com.acme.Job.map", "java.lang.Thread.sleep"},
      Category::kSleep, 50);
  StageProfile stage = SummarizeStage(model, 3, 1);
  EXPECT_EQ(stage.stage_id, 3);
  EXPECT_EQ(stage.stage_attempt, 1);
  EXPECT_EQ(stage.task_ns, 1000 * kMs);  // python kept apart
  EXPECT_EQ(stage.python_ns, 140 * kMs);
  EXPECT_EQ(stage.on_cpu_ns, 800 * kMs);
  EXPECT_EQ(stage.off_cpu_ns, 200 * kMs);
  EXPECT_DOUBLE_EQ(stage.Share(Category::kSerialization), 0.6);
  ASSERT_FALSE(stage.top_self.empty());
  EXPECT_EQ(stage.top_self[0].frame, "java.io.ObjectOutputStream.writeObject");
  EXPECT_EQ(stage.top_self[0].category, Category::kSerialization);
  // The application's frame: on-CPU inclusive (serialization + compute under it), all time too.
  ASSERT_FALSE(stage.top_application.empty());
  EXPECT_EQ(stage.top_application[0].frame, "com.acme.Job.map");
  EXPECT_EQ(stage.top_application[0].on_cpu_inclusive_ns, 800 * kMs);
  EXPECT_EQ(stage.top_application[0].inclusive_ns, 850 * kMs);
  // Sites: the python wait happened in Spark's runner, not in DataInputStream.
  std::vector<const Site*> python = stage.SitesOf(Category::kPythonWait);
  ASSERT_EQ(python.size(), 1u);
  EXPECT_EQ(python[0]->frame, "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.next");
  EXPECT_EQ(python[0]->application_frame, "");
  std::vector<const Site*> sleep = stage.SitesOf(Category::kSleep);
  ASSERT_EQ(sleep.size(), 1u);
  EXPECT_EQ(sleep[0]->frame, "com.acme.Job.map");
  EXPECT_EQ(sleep[0]->application_frame, "com.acme.Job.map");
  EXPECT_EQ(stage.application_site_ns[CategoryIndex(Category::kSleep)], 50 * kMs);
  EXPECT_EQ(stage.application_site_ns[CategoryIndex(Category::kSerialization)], 600 * kMs);
  EXPECT_EQ(stage.application_site_ns[CategoryIndex(Category::kPythonWait)], 0u);
  // Patterns.
  const PatternTime* java = stage.FindPattern(Pattern::kJavaSerialization);
  ASSERT_NE(java, nullptr);
  EXPECT_EQ(java->ns, 600 * kMs);
  EXPECT_EQ(java->application_frame, "com.acme.Job.map");
  const PatternTime* runner = stage.FindPattern(Pattern::kPythonRunner);
  ASSERT_NE(runner, nullptr);
  EXPECT_EQ(runner->on_cpu_ns, 0u);
  EXPECT_EQ(stage.FindPattern(Pattern::kKryo), nullptr);
}

TEST(StageProfilesTest, RunDelayBelongsToTheWorkWaitingToRun) {
  ProfileModel model(WeightUnit::kNanoseconds);
  Add(model, {"com.acme.Job.map", "java.io.ObjectOutputStream.writeObject"},
      Category::kSerialization, 300);
  Add(model, {"com.acme.Job.map", "java.io.ObjectOutputStream.writeObject"}, Category::kCpuStarved,
      500);
  Add(model, {"com.acme.Job.map"}, Category::kCompute, 100);
  Add(model, {"com.acme.Job.map"}, Category::kCpuStarved, 100);
  StageProfile stage = SummarizeStage(model, 0, 0);
  EXPECT_DOUBLE_EQ(stage.RunnableFactor(), 1000.0 / 400.0);
  EXPECT_EQ(stage.RunnableNs(300 * kMs), 750 * kMs);
  EXPECT_EQ(stage.RunnableNs(2000 * kMs), stage.task_ns);  // never more than the stage
  // The frame did serialization when it ran, though most of its samples waited for a CPU.
  EXPECT_EQ(stage.top_self[0].frame, "java.io.ObjectOutputStream.writeObject");
  EXPECT_EQ(stage.top_self[0].category, Category::kSerialization);
}

// Sites that tie on category and time, one without an application frame: ordered by name with
// no lookup of the missing frame (a lookup of "none" read past the string table: a driver crash).
TEST(StageProfilesTest, TiedSitesWithoutApplicationFramesAreOrderedSafely) {
  ProfileModel model(WeightUnit::kNanoseconds);
  for (int i = 0; i < 50; ++i) {
    const std::string site = "org.apache.spark.Site" + std::to_string(i) + ".run";
    Add(model, {"java.lang.Thread.run", site, "java.lang.Object.wait"}, Category::kLockWait, 10);
    Add(model, {"com.acme.Job" + std::to_string(i) + ".run", site, "java.lang.Object.wait"},
        Category::kLockWait, 10);
  }
  StageProfile stage = SummarizeStage(model, 0, 0);
  std::vector<const Site*> sites = stage.SitesOf(Category::kLockWait);
  ASSERT_EQ(sites.size(), kSitesPerCategory);
  for (const Site* site : sites) EXPECT_EQ(site->ns, 10 * kMs);
  // Ties by frame name, then the missing application frame ("") first.
  EXPECT_EQ(sites[0]->frame, "org.apache.spark.Site0.run");
  EXPECT_EQ(sites[0]->application_frame, "");
  EXPECT_EQ(sites[1]->frame, "org.apache.spark.Site0.run");
  EXPECT_EQ(sites[1]->application_frame, "com.acme.Job0.run");
}

// A stack the agent walked only from a compiled caller (past a VM stub: a contended monitor)
// ends in its walk-error marker: the site is that compiled frame, and it says its inlined
// callees are not known; the same frame with whole stacks is a site of its own.
TEST(StageProfilesTest, SitesOfPartialWalksSayTheirInlinedCalleesAreUnknown) {
  ProfileModel model(WeightUnit::kNanoseconds);
  Add(model,
      {"java.lang.Thread.run", "scala.collection.Iterator$$anon$10.next",
       "[not_walkable_not_Java]"},
      Category::kLockWait, 300);
  Add(model,
      {"java.lang.Thread.run", "scala.collection.Iterator$$anon$10.next", "com.acme.Job.lambda$1"},
      Category::kLockWait, 100);
  StageProfile stage = SummarizeStage(model, 0, 0);
  std::vector<const Site*> sites = stage.SitesOf(Category::kLockWait);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0]->frame, "scala.collection.Iterator$$anon$10.next");
  EXPECT_TRUE(sites[0]->inlined_callees_unknown);
  EXPECT_EQ(sites[0]->ns, 300 * kMs);
  EXPECT_EQ(sites[1]->frame, "com.acme.Job.lambda$1");
  EXPECT_FALSE(sites[1]->inlined_callees_unknown);
  EXPECT_TRUE(IsPartialWalkMarker("[unknown_Java]"));
  EXPECT_FALSE(IsPartialWalkMarker("[python worker]"));
}

TEST(StageProfilesTest, RecursionCountsOnceAndStringSplitNeedsCompile) {
  ProfileModel model(WeightUnit::kNanoseconds);
  Add(model, {"com.acme.Tree.walk", "com.acme.Tree.walk", "com.acme.Tree.walk"}, Category::kCompute,
      100);
  // A one-character split does not compile a regex: no pattern time.
  Add(model, {"com.acme.Parser.parse", "java.lang.String.split", "java.lang.String.indexOf"},
      Category::kCompute, 30);
  Add(model,
      {"com.acme.Parser.parse", "java.lang.String.split", "java.util.regex.Pattern.compile",
       "java.util.regex.Pattern.expr"},
      Category::kCompute, 70);
  StageProfile stage = SummarizeStage(model, 0, 0);
  ASSERT_GE(stage.top_application.size(), 2u);
  for (const FrameTime& frame : stage.top_application) {
    if (frame.frame == "com.acme.Tree.walk") {
      EXPECT_EQ(frame.inclusive_ns, 100 * kMs);
      EXPECT_EQ(frame.self_ns, 100 * kMs);
    }
  }
  const PatternTime* regex = stage.FindPattern(Pattern::kRegexCompile);
  ASSERT_NE(regex, nullptr);
  EXPECT_EQ(regex->ns, 70 * kMs);
  // Reflection inside Java serialization is serialization's, not a per-record pattern.
  ProfileModel nested(WeightUnit::kNanoseconds);
  Add(nested,
      {"com.acme.Copier.copy", "java.io.ObjectInputStream.readObject",
       "java.io.ObjectStreamClass.invokeReadObject", "java.lang.reflect.Method.invoke"},
      Category::kSerialization, 40);
  Add(nested, {"com.acme.Plugin.call", "java.lang.reflect.Method.invoke"}, Category::kCompute, 10);
  StageProfile with_reflection = SummarizeStage(nested, 0, 0);
  ASSERT_NE(with_reflection.FindPattern(Pattern::kReflection), nullptr);
  EXPECT_EQ(with_reflection.FindPattern(Pattern::kReflection)->ns, 10 * kMs);
  EXPECT_EQ(with_reflection.FindPattern(Pattern::kJavaSerialization)->ns, 40 * kMs);
  EXPECT_EQ(regex->application_frame, "com.acme.Parser.parse");
}

TEST(StageProfilesTest, ApplicationFrames) {
  EXPECT_TRUE(IsApplicationFrame("com.acme.Parser.parse"));
  EXPECT_TRUE(IsApplicationFrame("Demo$.$anonfun$main$1"));
  EXPECT_FALSE(IsApplicationFrame("org.apache.spark.rdd.RDD.iterator"));
  EXPECT_FALSE(IsApplicationFrame("java.util.HashMap.get"));
  EXPECT_FALSE(IsApplicationFrame("scala.collection.Iterator$$anon$10.next"));
  EXPECT_FALSE(IsApplicationFrame("[overflow: stage call tree full]"));
  EXPECT_FALSE(IsApplicationFrame("io.sparkprof.SparkProfPlugin$Executor.onTaskStart"));
  EXPECT_FALSE(IsApplicationFrame("io.sparkprof.shaded.io.opentelemetry.Foo.bar"));
  EXPECT_TRUE(IsApplicationFrame("io.sparkprof.demo.OrderGraph.deepCopy"));
}

std::string Batch(const char* mode, int32_t stage, int32_t attempt, schema::Category category,
                  uint64_t weight_ns, const char* executor = "1") {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<uint32_t> frames = {0, 1};
  std::vector<flatbuffers::Offset<schema::Stack>> stacks = {
      schema::CreateStackDirect(builder, &frames)};
  std::vector<flatbuffers::Offset<schema::StackSample>> samples = {schema::CreateStackSample(
      builder, 0, stage, attempt, 7, 0, category, weight_ns / 10'000'000, weight_ns)};
  std::vector<flatbuffers::Offset<flatbuffers::String>> strings = {
      builder.CreateString("java.lang.Thread.run"), builder.CreateString("com.acme.Job.map")};
  auto batch = schema::CreateBatchDirect(builder, 1, executor, "host", 1, 0, 1, 10'000'000, mode,
                                         &strings, &stacks, &samples);
  schema::FinishSizePrefixedBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

TEST(StageProfilesTest, ReadsStagesModesAndNamesBadBatches) {
  std::string bytes = Batch("cpu+wall", 1, 0, schema::Category::compute, 300 * kMs) +
                      Batch("cpu+wall", 1, 0, schema::Category::lock_wait, 100 * kMs, "2") +
                      Batch("cpu", 2, 1, schema::Category::compute, 50 * kMs) +
                      Batch("cpu", -1, -1, schema::Category::compute, 20 * kMs);
  const size_t good = bytes.size();
  bytes += std::string("\x10\x00\x00\x00garbagegarbage!!", 20);
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(bytes, "p.sparkprof");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const ApplicationProfile& profile = *loaded;
  EXPECT_EQ(profile.modes, (std::vector<std::string>{"cpu", "cpu+wall"}));
  EXPECT_TRUE(profile.has_off_cpu());  // cpu+wall somewhere; wall alone would not split
  EXPECT_EQ(profile.interval_ns, 10'000'000);
  EXPECT_EQ(profile.executors, 2u);
  EXPECT_EQ(profile.batches_read, 4u);
  EXPECT_EQ(profile.batches_skipped, 1u);
  ASSERT_EQ(profile.problems.size(), 1u);
  EXPECT_NE(profile.problems[0].find("p.sparkprof: byte " + std::to_string(good)),
            std::string::npos);
  EXPECT_EQ(profile.untagged_ns, 20 * kMs);
  ASSERT_EQ(profile.stages.size(), 2u);
  const StageProfile* one = profile.Find(1, 0);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->task_ns, 400 * kMs);
  EXPECT_EQ(one->off_cpu_ns, 100 * kMs);
  EXPECT_EQ(profile.Find(2, 0), nullptr);
  ASSERT_NE(profile.Find(2, 1), nullptr);
  EXPECT_EQ(profile.Combined(2).task_ns, 50 * kMs);
}

struct TaskRow {
  int32_t stage;
  int64_t task;
  schema::Category category;
  uint64_t ms;
};

// A batch with one compute sample in each of `sampled_stages` (attempt 0) and the task-time rows.
std::string TaskTimesBatch(std::vector<int32_t> sampled_stages, const std::vector<TaskRow>& rows,
                           const char* executor = "1") {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<uint32_t> frames = {0};
  std::vector<flatbuffers::Offset<schema::Stack>> stacks = {
      schema::CreateStackDirect(builder, &frames)};
  std::vector<flatbuffers::Offset<schema::StackSample>> samples;
  for (int32_t stage : sampled_stages) {
    samples.push_back(schema::CreateStackSample(builder, 0, stage, 0, 7, 0,
                                                schema::Category::compute, 1, 10 * kMs));
  }
  std::vector<flatbuffers::Offset<schema::TaskCategoryTime>> times;
  for (const TaskRow& row : rows) {
    times.push_back(schema::CreateTaskCategoryTime(builder, row.stage, 0, row.task, row.category,
                                                   row.ms / 10, row.ms * kMs));
  }
  std::vector<flatbuffers::Offset<flatbuffers::String>> strings = {
      builder.CreateString("com.acme.Job.map")};
  auto batch = schema::CreateBatchDirect(builder, 1, executor, "host", 1, 0, 1, 10'000'000,
                                         "cpu+wall", &strings, &stacks, &samples, &times);
  schema::FinishSizePrefixedBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

TEST(StageProfilesTest, TaskTimesAreSummedAcrossBatchesAndExecutors) {
  const std::string bytes =
      TaskTimesBatch({1}, {{1, 7, schema::Category::serialization, 300},
                           {1, 7, schema::Category::compute, 100},
                           {1, 8, schema::Category::compute, 50},
                           {-1, -1, schema::Category::gc, 999},  // the JVM's own threads
                           {1, 7, schema::Category::python, 40}}) +
      TaskTimesBatch(
          {1},
          {{1, 7, schema::Category::serialization, 200}, {1, 7, schema::Category::io_wait, 60}},
          "2");
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(bytes, "t.sparkprof");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const StageProfile* stage = loaded->Find(1, 0);
  ASSERT_NE(stage, nullptr);
  ASSERT_EQ(stage->tasks.size(), 2u);
  EXPECT_EQ(stage->tasks[0].task_attempt_id, 7);  // by task id
  const TaskTime* task = stage->FindTask(7);
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->category_ns[CategoryIndex(Category::kSerialization)], 500 * kMs);
  EXPECT_EQ(task->on_cpu_ns(), 600 * kMs);
  EXPECT_EQ(task->off_cpu_ns(), 60 * kMs);
  EXPECT_EQ(task->task_ns(), 660 * kMs);  // the Python worker's 40 ms apart
  EXPECT_EQ(task->category_ns[CategoryIndex(Category::kPython)], 40 * kMs);
  EXPECT_EQ(stage->FindTask(8)->task_ns(), 50 * kMs);
  EXPECT_EQ(stage->FindTask(9), nullptr);
  EXPECT_EQ(loaded->task_rows_left_out, 0u);
  EXPECT_TRUE(loaded->problems.empty());
  EXPECT_EQ(loaded->Combined(1).tasks.size(), 2u);
}

TEST(StageProfilesTest, TasksPastTheLimitAndWithoutSamplesAreCountedAndNamed) {
  // Stage 2 has task rows but no stack sample: no summary to hold them.
  const std::string bytes = TaskTimesBatch({}, {{2, 4, schema::Category::gc, 3}}) +
                            TaskTimesBatch({1}, {{1, 1, schema::Category::compute, 10},
                                                 {1, 2, schema::Category::compute, 20},
                                                 {1, 3, schema::Category::compute, 30},
                                                 {1, 1, schema::Category::gc, 5},
                                                 {1, 3, schema::Category::gc, 7}});
  ProfileLoadOptions options;
  options.max_profiled_tasks = 3;
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes(bytes, "t.sparkprof", options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const StageProfile* stage = loaded->Find(1, 0);
  ASSERT_NE(stage, nullptr);
  ASSERT_EQ(stage->tasks.size(), 2u);  // 4 (stage 2), 1 and 2 were kept; 3 came past the limit
  EXPECT_EQ(stage->FindTask(1)->task_ns(), 15 * kMs);  // a kept task still sums its later rows
  EXPECT_EQ(stage->FindTask(3), nullptr);
  EXPECT_EQ(loaded->Find(2, 0), nullptr);
  EXPECT_EQ(loaded->max_profiled_tasks, 3u);
  EXPECT_EQ(loaded->task_rows_left_out, 3u);  // task 3's two rows, stage 2's one
  EXPECT_EQ(loaded->task_ns_left_out, 40 * kMs);
  ASSERT_EQ(loaded->problems.size(), 2u);
  EXPECT_NE(loaded->problems[0].find("2 task-time row(s) (37 ms) of task attempts beyond the "
                                     "first 3"),
            std::string::npos)
      << loaded->problems[0];
  EXPECT_NE(loaded->problems[1].find("1 task-time row(s) (3 ms) belong to stage attempts without "
                                     "stack samples"),
            std::string::npos)
      << loaded->problems[1];
  EXPECT_EQ(loaded->problem_count, 2u);
}

TEST(StageProfilesTest, NoReadableBatchIsAnError) {
  Result<ApplicationProfile> loaded = ApplicationProfileFromBytes("not a profile", "x.sparkprof");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("x.sparkprof"), std::string::npos);
}

TEST(StageProfilesTest, AProfileOverTheSizeLimitIsRefusedByName) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("sparkprof-limit-" + std::to_string(getpid()));
  const std::string batch = Batch("cpu", 1, 0, schema::Category::compute, 300 * kMs);
  std::ofstream(file, std::ios::binary) << batch;
  ProfileLoadOptions options;
  options.max_file_bytes = batch.size();  // at the limit: read
  EXPECT_TRUE(LoadApplicationProfile(file.string(), options).ok());
  options.max_file_bytes = batch.size() - 1;  // past it: refused, named
  Result<ApplicationProfile> refused = LoadApplicationProfile(file.string(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(file.string()), std::string::npos);
  EXPECT_NE(refused.status().message().find("limit"), std::string::npos);
  std::filesystem::remove(file);
}

TEST(StageProfilesTest, FindsTheDriversLayout) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("sparkprof-profile-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "app-20260101-0001");
  std::ofstream(dir / "app-20260101-0001" / "profile.sparkprof") << "x";
  EXPECT_EQ(FindProfileFor(dir.string(), "app-20260101-0001"),
            (dir / "app-20260101-0001" / "profile.sparkprof").string());
  EXPECT_EQ(FindProfileFor(dir.string(), "app-other"), "");
  std::ofstream(dir / "profile.sparkprof") << "x";
  EXPECT_EQ(FindProfileFor(dir.string(), "app-other"), (dir / "profile.sparkprof").string());
  EXPECT_EQ(FindProfileFor((dir / "profile.sparkprof").string(), "any"),
            (dir / "profile.sparkprof").string());
  EXPECT_EQ(ApplicationDirectoryName("a/b:c"), "a_b_c");
  std::filesystem::remove_all(dir);
}

// The compressed copy the driver stores beside the event log (EventLogDirOutputs): found from
// spark.eventLog.dir (the application's folder by Spark's log name) or from the folder itself.
TEST(StageProfilesTest, FindsTheCopyBesideTheEventLog) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("sparkprof-beside-log-test-" + std::to_string(getpid()));
  EXPECT_EQ(EventLogDirFolderName("app-20260101-0001"), "app-20260101-0001.sparkprof");
  EXPECT_EQ(EventLogDirFolderName("Local-1.2 x:y/z"), "local-1_2-x-y-z.sparkprof");
  const std::filesystem::path folder = dir / "app-20260101-0001.sparkprof";
  std::filesystem::create_directories(folder);
  std::ofstream(dir / "app-20260101-0001") << "{}";  // the event log beside it
  std::ofstream(folder / "profile.sparkprof.zstd") << "x";
  EXPECT_EQ(FindProfileFor(dir.string(), "app-20260101-0001"),
            (folder / "profile.sparkprof.zstd").string());
  EXPECT_EQ(FindProfileFor(folder.string(), "app-20260101-0001"),
            (folder / "profile.sparkprof.zstd").string());
  EXPECT_EQ(FindProfileFor(dir.string(), "app-other"), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sparkprof::profile
