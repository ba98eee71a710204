// The rules that read the agent's profile: each fires on a synthetic run whose profile holds the
// cause (the event log alone cannot show it) and stays silent without a profile, below its share,
// or with too few samples. The profile goes through the real path: a *.sparkprof file written
// here, read by `analyze --profile`'s code (report::Analyze with a profile path).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyzer/diagnosis/diagnosis_input.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/markdown_report.h"
#include "analyzer/report/text_report.h"
#include "analyzer/testing/analysis_test_util.h"
#include "analyzer/testing/profile_batch.h"
#include "analyzer/testing/synthetic_app.h"
#include "common/human_format.h"
#include "schema/profile_generated.h"

namespace sparkprof::diagnosis {
namespace {

using test_util::EvidenceValue;
using test_util::FindingsOf;
using test_util::RecommendedValue;
using test_util::RecommendsKey;

constexpr int64_t kIntervalNs = 10'000'000;

constexpr uint64_t kMs = 1'000'000;

struct Sample {
  int32_t stage;
  std::vector<std::string> frames;  // root first
  schema::Category category;
  int64_t ms;
};

// A task attempt's time in one category (Batch.task_times), stage attempt 0.
struct TaskRow {
  int32_t stage;
  int64_t task;
  schema::Category category;
  int64_t ms;
};

// One batch holding `samples` (and `task_rows`), size-prefixed as the driver saves them.
std::string ProfileBatch(const std::vector<Sample>& samples, const char* mode = "cpu+wall",
                         const std::vector<TaskRow>& task_rows = {}, const char* executor = "1",
                         int64_t start_ns = 0, int64_t end_ns = 1) {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<std::string> strings;
  auto index_of = [&](const std::string& frame) {
    for (size_t i = 0; i < strings.size(); ++i) {
      if (strings[i] == frame) return static_cast<uint32_t>(i);
    }
    strings.push_back(frame);
    return static_cast<uint32_t>(strings.size() - 1);
  };
  std::vector<flatbuffers::Offset<schema::Stack>> stacks;
  std::vector<flatbuffers::Offset<schema::StackSample>> rows;
  for (const Sample& sample : samples) {
    std::vector<uint32_t> frames;
    for (const std::string& frame : sample.frames) frames.push_back(index_of(frame));
    stacks.push_back(schema::CreateStackDirect(builder, &frames));
    const uint64_t ns = static_cast<uint64_t>(sample.ms) * 1'000'000;
    rows.push_back(schema::CreateStackSample(builder, static_cast<uint32_t>(stacks.size() - 1),
                                             sample.stage, 0, 1, 0, sample.category,
                                             ns / kIntervalNs, ns));
  }
  std::vector<flatbuffers::Offset<flatbuffers::String>> string_offsets;
  string_offsets.reserve(strings.size());
  for (const std::string& text : strings) string_offsets.push_back(builder.CreateString(text));
  std::vector<flatbuffers::Offset<schema::TaskCategoryTime>> times;
  for (const TaskRow& row : task_rows) {
    const uint64_t ns = static_cast<uint64_t>(row.ms) * 1'000'000;
    times.push_back(schema::CreateTaskCategoryTime(builder, row.stage, 0, row.task, row.category,
                                                   ns / kIntervalNs, ns));
  }
  auto batch =
      schema::CreateBatchDirect(builder, 1, executor, "host", 1, start_ns, end_ns, kIntervalNs,
                                mode, &string_offsets, &stacks, &rows, &times);
  schema::FinishSizePrefixedBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

// A two-stage run: stage 0 runs 8 tasks of 4 s on 8 slots (most of the wall time), stage 1 a
// short one.
testing::SyntheticApp TwoStages() {
  testing::SyntheticApp app;
  app.executors = 2;
  app.cores_per_executor = 4;
  app.executor_start_delay_ms = 1000;
  testing::SyntheticStage big;
  big.name = "map at Job.scala:10";
  big.tasks = 8;
  big.task_ms = 4000;
  big.jitter = 0.05;
  big.shuffle_write_bytes_per_task = 1 << 20;
  testing::SyntheticStage small;
  small.name = "collect at Job.scala:20";
  small.tasks = 8;
  small.task_ms = 300;
  small.parents = {0};
  small.shuffle_read_bytes_per_task = 1 << 20;
  app.stages = {big, small};
  return app;
}

class ProfileRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sparkprof-profile-rules-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  report::Analysis Analyze(const testing::SyntheticApp& app, const std::string& profile_bytes) {
    std::string profile_path;
    if (!profile_bytes.empty()) {
      profile_path = (dir_ / "profile.sparkprof").string();
      std::ofstream(profile_path, std::ios::binary) << profile_bytes;
    }
    return AnalyzeWithProfilePath(app, profile_path);
  }

  // The app's log written to a file and analysed as `analyze --profile profile_path` does.
  report::Analysis AnalyzeWithProfilePath(const testing::SyntheticApp& app,
                                          const std::string& profile_path) {
    const std::filesystem::path log_path = dir_ / "eventlog.json";
    std::ofstream(log_path) << testing::GenerateEventLog(app);
    source::ApplicationLog log;
    log.name = "synthetic";
    log.layout = "single";
    source::LogPart part;
    part.display_name = log_path.string();
    const std::string file = log_path.string();
    part.open = [file]() { return OpenFileInputStream(file); };
    log.parts.push_back(part);
    return report::Analyze(log, {}, {}, profile_path);
  }

  std::filesystem::path dir_;
};

const std::vector<std::string> kTask = {"java.lang.Thread.run",
                                        "org.apache.spark.executor.Executor$TaskRunner.run",
                                        "org.apache.spark.scheduler.ShuffleMapTask.runTask"};

std::vector<std::string> Under(std::vector<std::string> frames) {
  std::vector<std::string> stack = kTask;
  stack.insert(stack.end(), frames.begin(), frames.end());
  return stack;
}

// A Python worker's frames below the JVM frames `wait` (under the task's), as the agent hangs them.
std::vector<std::string> UnderPythonWorker(const std::vector<std::string>& wait,
                                           const std::vector<std::string>& python) {
  std::vector<std::string> frames = Under(wait);
  frames.push_back("[python worker]");
  frames.insert(frames.end(), python.begin(), python.end());
  return frames;
}

// Stage 0's 32 s of task time: `share` of it in `frames`/`category`, the rest computing.
std::string StageZeroProfile(double share, const std::vector<std::string>& frames,
                             schema::Category category, int64_t total_ms = 32000) {
  const int64_t cause_ms = static_cast<int64_t>(share * static_cast<double>(total_ms));
  return ProfileBatch({
      {0, Under(frames), category, cause_ms},
      {0, Under({"com.acme.Job.map"}), schema::Category::compute, total_ms - cause_ms},
      {1, Under({"com.acme.Job.reduce"}), schema::Category::compute, 2000},
  });
}

const std::vector<std::string> kJavaSerialization = {
    "org.apache.spark.shuffle.sort.SortShuffleWriter.write",
    "org.apache.spark.util.collection.ExternalSorter.writePartitionedMapOutput",
    "org.apache.spark.storage.DiskBlockObjectWriter.write",
    "org.apache.spark.serializer.JavaSerializationStream.writeObject",
    "java.io.ObjectOutputStream.writeObject",
    "java.io.ObjectOutputStream.writeObject0"};

TEST_F(ProfileRulesTest, SerializationBoundNamesTheStageFramesAndKryo) {
  report::Analysis a = Analyze(
      TwoStages(), StageZeroProfile(0.77, kJavaSerialization, schema::Category::serialization));
  ASSERT_NE(a.profile, nullptr) << a.profile_error;
  auto found = FindingsOf(a, "serialization-bound");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = *found[0];
  EXPECT_EQ(f.stage_ids, std::vector<int32_t>{0});
  EXPECT_TRUE(RecommendsKey(f, "spark.serializer"));
  EXPECT_NEAR(EvidenceValue(f, "top_stage_serialization_share"), 0.77, 0.01);
  EXPECT_NEAR(EvidenceValue(f, "java_serialization_ms"), 0.77 * 32000, 50);
  ASSERT_FALSE(f.frames.empty());
  EXPECT_EQ(f.frames[0].frame, "org.apache.spark.serializer.JavaSerializationStream.writeObject");
  EXPECT_EQ(f.frames[0].category, "serialization");
  EXPECT_NE(f.explanation.find("Stage 0"), std::string::npos) << f.explanation;
  // 77% of the stage that is most of the run, 50-90% of it saved: a large saving.
  EXPECT_GT(f.impact.time_saved_ms_low, 0);
  EXPECT_LE(f.impact.time_saved_ms_low, f.impact.time_saved_ms_high);
  EXPECT_LT(f.impact.time_saved_ms_high, a.phases.wall_ms);
  const double expected = static_cast<double>(f.expected_saving_ms()) / a.phases.wall_ms;
  EXPECT_EQ(f.severity, expected >= 0.25   ? Severity::kCritical
                        : expected >= 0.05 ? Severity::kWarning
                                           : Severity::kInfo);
  // The reports carry the profile and the frames.
  const std::string text = report::RenderText(a);
  EXPECT_NE(text.find("serialization-bound"), std::string::npos);
  EXPECT_NE(text.find("frame: stage 0 serialization"), std::string::npos);
  EXPECT_NE(text.find("Profile (the agent's stack samples"), std::string::npos);
  const std::string json = report::RenderJsonSection(a);
  EXPECT_NE(json.find("\"frames\""), std::string::npos);
  EXPECT_NE(json.find("\"categories_ms\""), std::string::npos);
  const std::string markdown = report::RenderMarkdown(a);
  EXPECT_NE(markdown.find("\n## Profile\n"), std::string::npos);
  EXPECT_NE(markdown.find("`org.apache.spark.serializer.JavaSerializationStream.writeObject`"),
            std::string::npos);
  const std::string html = report::RenderHtml(a);
  EXPECT_NE(html.find("<h2>Profile</h2>"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"frames\">"), std::string::npos);
}

TEST_F(ProfileRulesTest, SilentWithoutProfileBelowShareOrWithFewSamples) {
  EXPECT_TRUE(FindingsOf(Analyze(TwoStages(), ""), "serialization-bound").empty());
  EXPECT_TRUE(FindingsOf(Analyze(TwoStages(), StageZeroProfile(0.05, kJavaSerialization,
                                                               schema::Category::serialization)),
                         "serialization-bound")
                  .empty());
  // 90 samples of stage 0 (0.9 s): too few to judge, whatever their share.
  EXPECT_TRUE(
      FindingsOf(Analyze(TwoStages(), StageZeroProfile(0.9, kJavaSerialization,
                                                       schema::Category::serialization, 900)),
                 "serialization-bound")
          .empty());
}

TEST_F(ProfileRulesTest, KryoAlreadyConfiguredIsNotToldToUseKryo) {
  testing::SyntheticApp app = TwoStages();
  app.extra_properties.push_back(
      {"spark.serializer", "org.apache.spark.serializer.KryoSerializer"});
  report::Analysis a = Analyze(
      app, StageZeroProfile(0.6,
                            {"org.apache.spark.serializer.KryoSerializationStream.writeObject",
                             "com.esotericsoftware.kryo.Kryo.writeClassAndObject"},
                            schema::Category::serialization));
  auto found = FindingsOf(a, "serialization-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(RecommendsKey(*found[0], "spark.serializer"));
  EXPECT_TRUE(RecommendsKey(*found[0], "spark.kryo.registrationRequired"));
  EXPECT_GT(found[0]->impact.time_saved_ms_low, 0);  // registration saves something

  // The classes registered already: registration is not advised again, and serialising less
  // (all that remains) may save nothing.
  app.extra_properties.push_back({"spark.kryo.classesToRegister", "com.acme.Order"});
  report::Analysis registered = Analyze(
      app, StageZeroProfile(0.6,
                            {"org.apache.spark.serializer.KryoSerializationStream.writeObject",
                             "com.esotericsoftware.kryo.Kryo.writeClassAndObject"},
                            schema::Category::serialization));
  found = FindingsOf(registered, "serialization-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(RecommendsKey(*found[0], "spark.serializer"));
  EXPECT_FALSE(RecommendsKey(*found[0], "spark.kryo.registrationRequired"));
  EXPECT_NE(found[0]->explanation.find("Kryo already knows the record classes "
                                       "(spark.kryo.classesToRegister)"),
            std::string::npos)
      << found[0]->explanation;
  EXPECT_EQ(found[0]->impact.time_saved_ms_low, 0);
  EXPECT_GT(found[0]->impact.time_saved_ms_high, 0);
}

TEST_F(ProfileRulesTest, ClosureDeserialisationAdvisesABroadcast) {
  report::Analysis a =
      Analyze(TwoStages(),
              StageZeroProfile(0.5,
                               {"org.apache.spark.serializer.JavaSerializerInstance.deserialize",
                                "org.apache.spark.serializer.JavaDeserializationStream.readObject",
                                "java.io.ObjectInputStream.readObject"},
                               schema::Category::serialization));
  auto found = FindingsOf(a, "serialization-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0]->title.find("closure"), std::string::npos) << found[0]->title;
  EXPECT_NE(found[0]->recommendations[0].value.find("broadcast"), std::string::npos);
}

TEST_F(ProfileRulesTest, PythonBoundRowUdfAndArrow) {
  report::Analysis row = Analyze(
      TwoStages(),
      StageZeroProfile(0.8,
                       {"org.apache.spark.sql.execution.python.BatchEvalPythonExec.evaluate",
                        "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.hasNext",
                        "java.io.DataInputStream.readInt", "sun.nio.ch.NioSocketImpl.read"},
                       schema::Category::python_wait));
  auto found = FindingsOf(row, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0]->title.find("row-at-a-time"), std::string::npos) << found[0]->title;
  EXPECT_EQ(found[0]->frames[0].frame,
            "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.hasNext");
  report::Analysis arrow = Analyze(
      TwoStages(),
      StageZeroProfile(0.8,
                       {"org.apache.spark.sql.execution.python.ArrowPythonRunner$$anon$2.read",
                        "java.io.DataInputStream.readInt"},
                       schema::Category::python_wait));
  found = FindingsOf(arrow, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0]->title.find("vectorised"), std::string::npos) << found[0]->title;
  EXPECT_TRUE(RecommendsKey(*found[0], "spark.sql.execution.arrow.maxRecordsPerBatch"));
  // An RDD lambda: PythonRDD.compute is under PySpark's runner package too, but names the kind
  // (the most specific pattern entry wins; first-listed made it a row-at-a-time UDF).
  report::Analysis rdd = Analyze(
      TwoStages(), StageZeroProfile(0.8,
                                    {"org.apache.spark.api.python.PythonRDD.compute",
                                     "org.apache.spark.api.python.BasePythonRunner.compute",
                                     "org.apache.spark.api.python.BasePythonRunner$ReaderIterator."
                                     "hasNext",
                                     "java.io.DataInputStream.readInt"},
                                    schema::Category::python_wait));
  found = FindingsOf(rdd, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0]->title.find("Python RDD functions"), std::string::npos) << found[0]->title;
}

// Each task is shortened by its own part of the wait: in a stage whose one task computes (4 s,
// 10% of it on its worker) while the seven others wait on their workers (80% of their 4 s), the
// stage cannot end before the computing task -- built-ins save ~0.4 s of it, not the ~2.7 s one
// share for every task (71%) would promise.
TEST_F(ProfileRulesTest, PythonBoundShortensEachTaskByItsOwnWait) {
  const std::vector<std::string> wait = {
      "org.apache.spark.sql.execution.python.BatchEvalPythonExec.evaluate",
      "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.hasNext",
      "java.io.DataInputStream.readInt"};
  const std::vector<Sample> samples = {
      {0, Under(wait), schema::Category::python_wait, 400 + 7 * 3200},
      {0, Under({"com.acme.Job.map"}), schema::Category::compute, 3600 + 7 * 800},
      {1, Under({"com.acme.Job.reduce"}), schema::Category::compute, 2000}};
  std::vector<TaskRow> rows = {{0, 0, schema::Category::python_wait, 400},
                               {0, 0, schema::Category::compute, 3600}};
  for (int64_t task = 1; task < 8; ++task) {
    rows.push_back({0, task, schema::Category::python_wait, 3200});
    rows.push_back({0, task, schema::Category::compute, 800});
  }
  const report::Analysis per_task = Analyze(TwoStages(), ProfileBatch(samples, "cpu+wall", rows));
  const report::Analysis stage_only = Analyze(TwoStages(), ProfileBatch(samples, "cpu+wall"));
  auto found = FindingsOf(per_task, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  const Finding each = *found[0];
  found = FindingsOf(stage_only, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  const Finding alike = *found[0];
  EXPECT_NE(each.impact.method.find("each task by its own share"), std::string::npos)
      << each.impact.method;
  EXPECT_EQ(alike.impact.method.find("each task by its own share"), std::string::npos);
  EXPECT_GT(alike.impact.time_saved_ms_high, 2000) << alike.impact.method;
  EXPECT_LT(each.impact.time_saved_ms_high, 800) << each.impact.method;
  // Fewer samples of the cause are not fewer of the stage: the shares shown are the stage's.
  EXPECT_NEAR(EvidenceValue(each, "top_stage_python_wait_share"), 22.8 / 32.0, 1e-6);
}

// The task threads' run delay that their own Python workers' CPU explains goes with the Python
// work: python-bound claims min(run delay, the workers' CPU) of it beside the wait.
TEST_F(ProfileRulesTest, PythonBoundClaimsTheRunDelayItsWorkersCause) {
  const std::vector<std::string> wait = {
      "org.apache.spark.sql.execution.python.BatchEvalPythonExec.evaluate",
      "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.hasNext",
      "java.io.DataInputStream.readInt"};
  auto run = [&](schema::Category map_category, int64_t worker_ms) {
    return Analyze(
        TwoStages(),
        ProfileBatch({{0, Under(wait), schema::Category::python_wait, 16000},
                      {0, Under({"com.acme.Job.map"}), map_category, 6000},
                      {0, Under({"com.acme.Job.map"}), schema::Category::compute, 4000},
                      {1, Under({"com.acme.Job.reduce"}), schema::Category::compute, 2000},
                      {0, UnderPythonWorker(wait, {"udf (job.py:14)", "checksum (job.py:41)"}),
                       schema::Category::python, worker_ms}}));
  };
  const report::Analysis starved = run(schema::Category::cpu_starved, 10000);
  auto found = FindingsOf(starved, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  const Finding starving = *found[0];
  EXPECT_EQ(EvidenceValue(starving, "python_wait_ms"), 16000);
  EXPECT_EQ(EvidenceValue(starving, "python_cpu_starved_ms"), 6000);
  EXPECT_NEAR(EvidenceValue(starving, "top_stage_python_wait_share"), 22.0 / 26.0, 1e-6);
  EXPECT_NE(starving.explanation.find("on their Python workers and for the CPUs those workers "
                                      "held (16.0 s and 6.0 s of run delay)"),
            std::string::npos)
      << starving.explanation;
  // Workers that used less CPU than the run delay explain only their CPU-seconds.
  const report::Analysis little_python = run(schema::Category::cpu_starved, 3000);
  found = FindingsOf(little_python, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(EvidenceValue(*found[0], "python_cpu_starved_ms"), 3000);
  // The same time on CPU instead of waiting for one is not the workers' doing.
  const report::Analysis on_cpu = run(schema::Category::compute, 10000);
  found = FindingsOf(on_cpu, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(EvidenceValue(*found[0], "python_cpu_starved_ms"), -1);  // absent
  EXPECT_GT(starving.impact.time_saved_ms_high, found[0]->impact.time_saved_ms_high);
}

// The JVM's side of the exchange is the cause, not only its socket wait: unpickling results and
// pickling rows (sites under the Python operators and net.razorvine, a framework, never the
// application) go with the worker; starting the daemon (PythonWorkerFactory) is a fixed cost per
// worker, outside the cause's share -- but built-ins need no worker, so the row UDF's fix saves
// it too, and says so; and the operators feeding the UDF (their own site) are not the exchange.
TEST_F(ProfileRulesTest, PythonBoundCountsTheJvmSideOfTheExchangeAndBuiltinsSaveTheStart) {
  const std::vector<std::string> udf = {
      "org.apache.spark.sql.execution.python.BatchEvalPythonExec.evaluate",
      "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.hasNext"};
  auto under_udf = [&](std::vector<std::string> inner) {
    std::vector<std::string> frames = udf;
    frames.insert(frames.end(), inner.begin(), inner.end());
    return Under(frames);
  };
  const report::Analysis analysis =
      Analyze(TwoStages(),
              ProfileBatch({{0, under_udf({"java.io.DataInputStream.readInt"}),
                             schema::Category::python_wait, 12000},
                            {0, under_udf({"net.razorvine.pickle.Unpickler.load"}),
                             schema::Category::serialization, 3000},
                            {0,
                             Under({"org.apache.spark.api.python.PythonWorkerFactory.startDaemon",
                                    "java.io.FileInputStream.readBytes"}),
                             schema::Category::io_wait, 5000},
                            {0,
                             under_udf({"org.apache.spark.sql.catalyst.expressions.GeneratedClass$"
                                        "GeneratedIteratorForCodegenStage1.processNext"}),
                             schema::Category::compute, 4000},
                            {0, Under({"com.acme.Job.map"}), schema::Category::compute, 8000},
                            {1, Under({"com.acme.Job.reduce"}), schema::Category::compute, 2000}}));
  const auto found = FindingsOf(analysis, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(EvidenceValue(*found[0], "python_wait_ms"), 12000);
  EXPECT_EQ(EvidenceValue(*found[0], "python_exchange_ms"), 15000);
  EXPECT_NEAR(EvidenceValue(*found[0], "top_stage_python_wait_share"), 15.0 / 32.0, 1e-6);
  EXPECT_NE(found[0]->explanation.find("12.0 s waiting for them, 3.0 s more in the JVM's side of "
                                       "the exchange"),
            std::string::npos)
      << found[0]->explanation;
  EXPECT_EQ(EvidenceValue(*found[0], "python_worker_start_ms"), 5000);
  EXPECT_NE(found[0]->explanation.find(
                "the 5.0 s the task threads spent starting them (in "
                "`org.apache.spark.api.python.PythonWorkerFactory.startDaemon`) goes with the UDF"),
            std::string::npos)
      << found[0]->explanation;
  // The pickler is Spark's library, not the application's code.
  for (const auto& frame : analysis.profile->Combined(0).top_application) {
    EXPECT_FALSE(frame.frame.starts_with("net.razorvine.")) << frame.frame;
  }
}

// With the Python workers' own samples the finding names the function that held their time; a
// function that mostly waits on a socket gets batching advice, not vectorising.
TEST_F(ProfileRulesTest, PythonBoundNamesTheWorkersFunction) {
  const std::vector<std::string> wait = {
      "org.apache.spark.sql.execution.python.BatchEvalPythonExec.evaluate",
      "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.hasNext",
      "java.io.DataInputStream.readInt"};
  auto worker = [&](const std::vector<std::string>& python) {
    return UnderPythonWorker(wait, python);
  };
  auto run = [&](std::vector<Sample> python) {
    std::vector<Sample> samples = {
        {0, Under(wait), schema::Category::python_wait, 25600},
        {0, Under({"com.acme.Job.map"}), schema::Category::compute, 6400},
        {1, Under({"com.acme.Job.reduce"}), schema::Category::compute, 2000}};
    samples.insert(samples.end(), python.begin(), python.end());
    return Analyze(TwoStages(), ProfileBatch(samples));
  };
  report::Analysis computing =
      run({{0, worker({"main (<stdlib>/runpy.py:198)", "udf (job.py:14)", "checksum (job.py:41)"}),
            schema::Category::python, 15000},
           {0, worker({"main (<stdlib>/runpy.py:198)", "udf (job.py:14)", "checksum (job.py:40)"}),
            schema::Category::python, 5000},
           {0,
            worker({"main (<stdlib>/runpy.py:198)", "udf (job.py:14)", "checksum (job.py:41)",
                    "[runnable: waiting for a CPU]"}),
            schema::Category::python_off_cpu, 2000}});
  ASSERT_NE(computing.profile, nullptr);
  const profile::StageProfile* stage = computing.profile->Find(0, 0);
  ASSERT_NE(stage, nullptr);
  EXPECT_EQ(stage->task_ns, 32000 * kMs);  // the workers' time is kept apart
  EXPECT_EQ(stage->python_ns, 20000 * kMs);
  EXPECT_EQ(stage->python_off_cpu_ns, 2000 * kMs);
  ASSERT_FALSE(stage->top_python.empty());
  EXPECT_EQ(stage->top_python[0].function, "checksum (job.py)");
  EXPECT_EQ(stage->top_python[0].frame, "checksum (job.py:41)");  // its hottest line
  EXPECT_EQ(stage->top_python[0].ns, 22000 * kMs);
  EXPECT_EQ(stage->top_python[0].on_cpu_ns, 20000 * kMs);
  EXPECT_EQ(stage->top_python[0].runnable_ns, 2000 * kMs);
  EXPECT_EQ(stage->top_python[0].waited_in, "");
  auto found = FindingsOf(computing, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0]->title.find("row-at-a-time"), std::string::npos) << found[0]->title;
  EXPECT_NE(found[0]->explanation.find("`checksum (job.py)` held 100%"), std::string::npos)
      << found[0]->explanation;
  EXPECT_NE(found[0]->explanation.find("2.0 s runnable with no CPU free"), std::string::npos)
      << found[0]->explanation;
  bool named = false;
  for (const auto& frame : found[0]->frames) {
    named |= frame.frame == "checksum (job.py:41)" && frame.category == "python";
  }
  EXPECT_TRUE(named);

  report::Analysis calling = run(
      {{0,
        worker({"udf (job.py:20)", "lookup (job.py:31)", "urlopen (<stdlib>/urllib/request.py:215)",
                "SocketIO.readinto (<stdlib>/socket.py:706)"}),
        schema::Category::python_off_cpu, 18000},
       {0, worker({"udf (job.py:20)", "lookup (job.py:30)"}), schema::Category::python, 1000}});
  found = FindingsOf(calling, "python-bound");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->title, "Tasks wait on Python code that waits on the network");
  EXPECT_NE(found[0]->explanation.find("most in `SocketIO.readinto (<stdlib>/socket.py:706)`"),
            std::string::npos)
      << found[0]->explanation;
  EXPECT_NE(found[0]->recommendations[0].value.find("once per batch"), std::string::npos);
}

// Workers that spend most of their time setting each task up (imports, pyspark's loop) rather
// than in the application's code: per-task-overhead, judged by that share, not by task counts.
TEST_F(ProfileRulesTest, PerTaskOverheadWhenTheWorkersMostlySetUp) {
  const std::vector<std::string> wait = {"org.apache.spark.api.python.PythonRDD.compute",
                                         "org.apache.spark.api.python.PythonRunner$$anon$3.read",
                                         "java.io.DataInputStream.readInt"};
  auto worker = [&](const std::vector<std::string>& python) {
    return UnderPythonWorker(wait, python);
  };
  auto run = [&](int64_t setup_ms, int64_t application_ms) {
    return Analyze(
        TwoStages(),
        ProfileBatch(
            {{0, Under(wait), schema::Category::python_wait, 25600},
             {0, Under({"com.acme.Job.map"}), schema::Category::compute, 6400},
             {1, Under({"com.acme.Job.reduce"}), schema::Category::compute, 2000},
             {0,
              worker({"main (pyspark/worker.py:1200)", "_read_directory (<frozen zipimport>:492)"}),
              schema::Category::python, setup_ms},
             {0, worker({"main (pyspark/worker.py:1300)", "<lambda> (job.py:7)"}),
              schema::Category::python, application_ms}}));
  };
  report::Analysis setting_up = run(9000, 1000);
  auto found = FindingsOf(setting_up, "per-task-overhead");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->stage_ids, std::vector<int32_t>{0});
  EXPECT_NE(found[0]->explanation.find("90% of their 10.0 s"), std::string::npos)
      << found[0]->explanation;
  EXPECT_NE(found[0]->explanation.find("`_read_directory (<frozen zipimport>)`"), std::string::npos)
      << found[0]->explanation;
  ASSERT_FALSE(found[0]->frames.empty());
  EXPECT_EQ(found[0]->frames[0].frame, "_read_directory (<frozen zipimport>:492)");
  // 8 tasks, no more than 2x the task slots: nothing to re-split, so its tasks are shortened.
  EXPECT_EQ(found[0]->impact.method.find("re-split into"), std::string::npos)
      << found[0]->impact.method;
  // The application's code holding most of the workers' time: no per-task overhead.
  EXPECT_TRUE(FindingsOf(run(3000, 7000), "per-task-overhead").empty());
  // No worker samples (the JVM's profile only): nothing to judge by.
  EXPECT_TRUE(FindingsOf(run(0, 0), "per-task-overhead").empty());
}

// A batch with no samples, only the JVM's CPU use over [start_ms, end_ms] (schema CpuUse), in
// average CPUs: the host's busy CPUs, this JVM's, and (cgroup v2) the quota's throttled time.
std::string CpuUseBatch(int64_t start_ms, int64_t end_ms, uint32_t host_cpus, double busy_cpus,
                        double process_cpus, double throttled_s = 0, uint32_t quota_millicpus = 0,
                        uint64_t agent_cpu_ns = 0) {
  flatbuffers::FlatBufferBuilder builder;
  const double wall_ns = static_cast<double>(end_ms - start_ms) * 1e6;
  auto cpu = schema::CreateCpuUse(
      builder, host_cpus, static_cast<uint64_t>(busy_cpus * wall_ns), 0,
      static_cast<uint64_t>(host_cpus * wall_ns), static_cast<uint64_t>(process_cpus * wall_ns),
      quota_millicpus > 0 ? 2 : 0, quota_millicpus, 1000, throttled_s > 0 ? 500 : 0,
      static_cast<uint64_t>(throttled_s * 1e9), agent_cpu_ns);
  auto batch = schema::CreateBatchDirect(builder, 1, "1", "host", 7, start_ms * 1'000'000,
                                         end_ms * 1'000'000, kIntervalNs, "cpu+wall", nullptr,
                                         nullptr, nullptr, nullptr, nullptr, 0, nullptr, cpu);
  schema::FinishSizePrefixedBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

// What profiling cost, from the agents' own CPU in their CpuUse: report.json's profile.agent_cpu
// and the profile line of every report (a 100 s window of 2 CPUs: 200 s of JVM CPU, 0.5 s agent).
TEST_F(ProfileRulesTest, TheAgentsOwnCpuIsReported) {
  const testing::SyntheticApp app = TwoStages();
  report::Analysis a = Analyze(
      app, StageZeroProfile(0.5, {"com.acme.Job.score"}, schema::Category::compute) +
               CpuUseBatch(app.start_ms, app.start_ms + 100'000, 4, 2.5, 2.0, 0, 0, 500'000'000));
  const std::string json = report::RenderJsonSection(a);
  EXPECT_NE(json.find("\"agent_cpu\": {\n"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ms\": 500,\n"), std::string::npos);
  EXPECT_NE(json.find("\"jvm_cpu_ms\": 200000,\n"), std::string::npos);
  EXPECT_NE(json.find("\"share\": 0.0025\n"), std::string::npos);
  EXPECT_NE(report::RenderText(a).find("the agents' own CPU 500 ms (0.25% of their JVMs' 3m 20s)"),
            std::string::npos)
      << report::RenderText(a);
  // Without the figure (older agents) the key is absent.
  report::Analysis old =
      Analyze(app, StageZeroProfile(0.5, {"com.acme.Job.score"}, schema::Category::compute) +
                       CpuUseBatch(app.start_ms, app.start_ms + 100'000, 4, 2.5, 2.0));
  EXPECT_EQ(report::RenderJsonSection(old).find("\"agent_cpu\""), std::string::npos);
}

// With the agents' CPU use the run delay is told apart: other processes' CPU, the quota's
// throttling, or the application's own threads -- each with its own words, figures and saving.
TEST_F(ProfileRulesTest, RunDelayToldApartByTheJvmsCpuUse) {
  const testing::SyntheticApp app = TwoStages();
  const int64_t from = app.start_ms - 10'000, to = app.start_ms + 600'000;
  const std::string starved =
      StageZeroProfile(0.5, {"com.acme.Job.score"}, schema::Category::cpu_starved);
  auto finding = [&](const std::string& cpu) {
    report::Analysis a = Analyze(app, starved + cpu);
    auto found = FindingsOf(a, "cpu-oversubscription");
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? Finding{} : *found[0];
  };
  const Finding unknown = finding("");
  EXPECT_EQ(EvidenceValue(unknown, "host_cpus"), -1);  // absent

  // Others: the 8-CPU host busy 7.9, this JVM 3.0: 4.9 CPUs of other processes.
  const Finding others = finding(CpuUseBatch(from, to, 8, 7.9, 3.0));
  EXPECT_EQ(EvidenceValue(others, "host_cpus"), 8);
  EXPECT_NEAR(EvidenceValue(others, "other_processes_cpus"), 4.9, 0.01);
  EXPECT_NEAR(EvidenceValue(others, "application_cpus"), 3.0, 0.01);
  EXPECT_NE(others.explanation.find("were busy 7.90 on average: this application's JVMs used "
                                    "3.00, other processes 4.90"),
            std::string::npos)
      << others.explanation;
  EXPECT_NE(others.explanation.find("other processes held CPUs"), std::string::npos);
  EXPECT_GT(others.impact.time_saved_ms_high, unknown.impact.time_saved_ms_high);
  EXPECT_GT(others.impact.time_saved_ms_low, 0);
  // The CPUs given back: its threads wanted 3.0 + 16 s of run delay over the stage's span; the
  // others' 4.9 cover all of it, so it would run at what it wanted. Its 32 s runnable time
  // (16 s on CPU) then shrinks by 3.0 / wanted, which takes 77% of the run delay with 6.72 CPUs
  // (32 x (1 - 3 / 6.72) = 17.7 s, capped at the 16 s there is); half the CPUs gained, 4.86.
  const double span_s = EvidenceValue(others, "top_stage_span_ms") / 1000;
  const double wanted = 3.0 + 16.0 / span_s;
  EXPECT_NEAR(EvidenceValue(others, "application_cpus_wanted"), wanted, 0.01);
  EXPECT_NEAR(EvidenceValue(others, "application_cpus_given_back"), std::min(7.9, wanted), 0.01);
  EXPECT_NE(others.impact.method.find(
                "x " + Fixed(100 * std::min(1.0, 32 * (1 - 3 / (3 + (wanted - 3) / 2)) / 16), 0) +
                "-100%"),
            std::string::npos)
      << others.impact.method;

  // Its own threads: the host busy only with this JVM: nothing claimed, more cores suggested.
  const Finding own = finding(CpuUseBatch(from, to, 8, 3.0, 3.0));
  EXPECT_NEAR(EvidenceValue(own, "other_processes_cpus"), 0.0, 0.01);
  EXPECT_NE(own.explanation.find("own threads queueing"), std::string::npos) << own.explanation;
  EXPECT_EQ(own.impact.time_saved_ms_high, 0);
  EXPECT_NEAR(EvidenceValue(own, "application_cpus_given_back"), 3.0, 0.01);
  EXPECT_NE(own.impact.method.find("nothing to give back"), std::string::npos) << own.impact.method;
  EXPECT_EQ(own.severity, Severity::kInfo);
  EXPECT_FALSE(RecommendsKey(own, "spark.executor.cores"));
  // Others holding 0.003 CPUs (a daemon's tick, 0.00 at the precision shown) give nothing back
  // either: no "3.00 + the 0.00 freed" saving.
  const Finding tick = finding(CpuUseBatch(from, to, 8, 3.003, 3.0));
  EXPECT_NE(tick.impact.method.find("nothing to give back"), std::string::npos)
      << tick.impact.method;
  EXPECT_EQ(tick.impact.method.find("the 0.00 freed"), std::string::npos) << tick.impact.method;
  EXPECT_EQ(tick.impact.time_saved_ms_high, 0);

  // The quota: throttled for most of the stage's run delay.
  const Finding quota = finding(CpuUseBatch(from, to, 8, 3.0, 3.0, 3000.0, 1500));
  EXPECT_NEAR(EvidenceValue(quota, "cgroup_quota_cpus"), 1.5, 1e-9);
  EXPECT_GT(EvidenceValue(quota, "run_delay_quota_share"), 0.9);
  EXPECT_NE(quota.explanation.find("the quota's"), std::string::npos) << quota.explanation;
  EXPECT_NE(quota.explanation.find("throttled 1 of 1 JVMs"), std::string::npos)
      << quota.explanation;
  EXPECT_GT(quota.impact.time_saved_ms_low, 0);
  if (std::getenv("SPARKPROF_PRINT_FINDINGS") != nullptr) {
    for (const Finding* f : {&unknown, &others, &own, &quota}) {
      std::printf("%s\n  %s\n", f->explanation.c_str(), f->impact.method.c_str());
    }
  }
}

// The driver JVM's CpuUse over [start_ms, end_ms] on `host_cpus` CPUs busy `busy_cpus`, using no
// CPU itself, with its threads' run delay polled every 250 ms (`polled`): each step they waited
// `waiting` of it together, the longest-waiting thread `busiest` of it.
std::string DriverRunDelayBatch(int64_t start_ms, int64_t end_ms, uint32_t host_cpus,
                                double busy_cpus, bool polled, double waiting, double busiest) {
  flatbuffers::FlatBufferBuilder builder;
  const double wall_ns = static_cast<double>(end_ms - start_ms) * 1e6;
  std::vector<schema::RunDelayStep> steps;
  uint64_t total = 0;
  for (int64_t at = start_ms; polled && at + 250 <= end_ms; at += 250) {
    steps.emplace_back(at, at + 250, static_cast<uint64_t>(waiting * 250e6),
                       static_cast<uint64_t>(busiest * 250e6));
    total += steps.back().total_ns();
  }
  auto step_vector = builder.CreateVectorOfStructs(steps);
  auto cpu = schema::CreateCpuUse(builder, host_cpus, static_cast<uint64_t>(busy_cpus * wall_ns), 0,
                                  static_cast<uint64_t>(host_cpus * wall_ns), 0, 0, 0, 0, 0, 0, 0,
                                  polled ? static_cast<uint32_t>(steps.size()) : 0, total,
                                  polled ? step_vector : 0);
  auto batch = schema::CreateBatchDirect(builder, 1, "driver", "host", 3, start_ms * 1'000'000,
                                         end_ms * 1'000'000, kIntervalNs, "cpu", nullptr, nullptr,
                                         nullptr, nullptr, nullptr, 0, nullptr, cpu);
  schema::FinishSizePrefixedBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

// The driver's wait for CPUs while no task ran is the same fix's saving too: its threads' run
// delay in the driver-only spans (not in the stages'), the part other processes on its host
// explain, added to the stages' replayed saving -- at most the summed wait, at least half the
// longest-waiting thread's.
TEST_F(ProfileRulesTest, TheDriversWaitForCpusBetweenJobsIsClaimedToo) {
  testing::SyntheticApp app = TwoStages();
  app.driver_gap_ms = 20'000;  // the driver alone between the two jobs
  const int64_t from = app.start_ms - 10'000, to = app.start_ms + 600'000;
  const std::string starved =
      StageZeroProfile(0.5, {"com.acme.Job.score"}, schema::Category::cpu_starved);
  auto finding = [&](const std::string& driver, double host_busy_cpus = 7.9) {
    report::Analysis a =
        Analyze(app, starved + CpuUseBatch(from, to, 8, host_busy_cpus, 3.0) + driver);
    auto found = FindingsOf(a, "cpu-oversubscription");
    EXPECT_EQ(found.size(), 1u);
    return std::make_pair(found.empty() ? Finding{} : *found[0], a.phases);
  };
  // Not polled (agents before it): the stages' saving alone.
  const auto [unpolled, phases] = finding(DriverRunDelayBatch(from, to, 8, 7.9, false, 0, 0));
  EXPECT_EQ(EvidenceValue(unpolled, "driver_only_run_delay_ms"), -1);
  ASSERT_GT(phases.driver_only_ms, 20'000);
  int64_t in_spans = 0;
  for (const auto& [start, end] : phases.driver_only_spans) in_spans += end - start;
  EXPECT_EQ(in_spans, phases.driver_only_ms);

  // Polled: 0.8 of every moment waiting (0.6 the busiest thread), the host's others 4.9 CPUs.
  const auto [waited, same_phases] = finding(DriverRunDelayBatch(from, to, 8, 7.9, true, 0.8, 0.6));
  const double gaps_ms = static_cast<double>(phases.driver_only_ms);
  EXPECT_NEAR(EvidenceValue(waited, "driver_only_run_delay_ms"), 0.8 * gaps_ms, 1);
  EXPECT_NEAR(EvidenceValue(waited, "driver_only_busiest_thread_run_delay_ms"), 0.6 * gaps_ms, 1);
  EXPECT_NEAR(EvidenceValue(waited, "driver_only_other_processes_cpus"), 4.9, 0.01);
  EXPECT_NEAR(EvidenceValue(waited, "driver_only_run_delay_external_share"), 1.0, 1e-9);
  EXPECT_NEAR(
      static_cast<double>(waited.impact.time_saved_ms_high - unpolled.impact.time_saved_ms_high),
      0.8 * gaps_ms, 2);
  EXPECT_NEAR(
      static_cast<double>(waited.impact.time_saved_ms_low - unpolled.impact.time_saved_ms_low),
      0.3 * gaps_ms, 2);
  EXPECT_NE(waited.impact.method.find("outside the tasks (the driver's threads' wait"),
            std::string::npos)
      << waited.impact.method;
  EXPECT_NE(waited.explanation.find("While no task ran"), std::string::npos) << waited.explanation;

  // The host busy with nothing but the application: the driver queued for its own CPUs.
  const auto [own, own_phases] =
      finding(DriverRunDelayBatch(from, to, 8, 3.0, true, 0.8, 0.6), 3.0);
  EXPECT_NEAR(EvidenceValue(own, "driver_only_run_delay_external_share"), 0.0, 1e-9);
  EXPECT_EQ(own.impact.method.find("outside the tasks"), std::string::npos) << own.impact.method;
}

// driver-bound says how long the driver's threads waited for a CPU in its gaps, and recommends
// CPUs for it when the longest-waiting thread's wait holds 10% of the driver-only time.
TEST_F(ProfileRulesTest, DriverBoundSaysTheDriverWaitedForCpus) {
  testing::SyntheticApp app = TwoStages();
  app.driver_gap_ms = 90'000;
  const int64_t from = app.start_ms - 10'000, to = app.start_ms + 600'000;
  auto finding = [&](double busiest) {
    report::Analysis a =
        Analyze(app, CpuUseBatch(from, to, 8, 7.9, 3.0) +
                         DriverRunDelayBatch(from, to, 8, 7.9, true, 2 * busiest, busiest));
    auto found = FindingsOf(a, "driver-bound");
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? Finding{} : *found[0];
  };
  const Finding waited = finding(0.4);
  const double gaps_ms = EvidenceValue(waited, "driver_only_ms");
  EXPECT_NEAR(EvidenceValue(waited, "driver_only_busiest_thread_run_delay_ms"), 0.4 * gaps_ms, 1);
  EXPECT_NEAR(EvidenceValue(waited, "driver_only_run_delay_ms"), 0.8 * gaps_ms, 1);
  EXPECT_NE(waited.explanation.find("The driver was short of CPUs too"), std::string::npos)
      << waited.explanation;
  bool recommended = false;
  for (const auto& r : waited.recommendations) {
    recommended = recommended || r.value.find("spark.driver.cores") != std::string::npos;
  }
  EXPECT_TRUE(recommended);
  // A wait of 5% of the gaps: measured and shown, not a cause.
  const Finding little = finding(0.05);
  EXPECT_NEAR(EvidenceValue(little, "driver_only_busiest_thread_run_delay_ms"), 0.05 * gaps_ms, 1);
  EXPECT_EQ(little.explanation.find("short of CPUs"), std::string::npos);
}

// One memory reading of executor 1 (cgroup v1), 30 s into the app, as the agent sends it.
struct Reading {
  uint64_t rss, rss_peak, container_usage, container_limit, container_anon, container_file;
  uint32_t python_processes;
  uint64_t python_rss;
  // The JVM's own accounts (0: an agent that does not send them).
  uint64_t heap_used = 0, heap_committed = 0, metaspace = 0, direct = 0, spark_execution = 0;
};
std::string MemoryBatch(const testing::SyntheticApp& app, const Reading& r) {
  flatbuffers::FlatBufferBuilder builder;
  auto memory = schema::CreateMemoryUse(
      builder, r.rss, r.rss_peak, 60, 1, r.container_usage, r.container_limit, r.container_limit,
      r.container_anon, r.container_file, r.python_processes, r.python_rss, r.heap_used,
      r.heap_committed, r.heap_committed, r.heap_used, 0, 0, 0, r.metaspace, r.metaspace, 0, 0, 0,
      r.direct, 0, 0, 0, 0, r.spark_execution);
  auto batch = schema::CreateBatchDirect(
      builder, 1, "1", "host", 7, 0, (app.start_ms + 30'000) * 1'000'000, kIntervalNs, "cpu+wall",
      nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr, 0, memory);
  schema::FinishSizePrefixedBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

// One executor's memory cgroup reading at `at_ms`: its limit, usage and OOM-kill count (v2).
std::string OomCountBatch(const std::string& executor, int64_t at_ms, uint64_t kills,
                          bool counted = true) {
  flatbuffers::FlatBufferBuilder builder;
  schema::MemoryUseBuilder memory(builder);
  memory.add_rss_bytes(uint64_t{1} << 30);
  memory.add_cgroup_version(2);
  memory.add_cgroup_usage_bytes(uint64_t{3} << 30);
  memory.add_cgroup_limit_bytes(uint64_t{4} << 30);
  memory.add_python_processes(2);
  memory.add_python_rss_bytes(uint64_t{2} << 30);
  memory.add_cgroup_oom_kills(kills);
  memory.add_cgroup_oom_kills_counted(counted);
  auto memory_offset = memory.Finish();
  auto batch = schema::CreateBatchDirect(
      builder, 1, executor.c_str(), "host", 7, 0, at_ms * 1'000'000, kIntervalNs, "cpu+wall",
      nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr, 0, memory_offset);
  schema::FinishSizePrefixedBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

// "Python worker exited unexpectedly (crashed)" is memory by Spark's words; the executor's
// memory cgroup's OOM-kill count shows it (a worker killed at the container's limit leaves the
// JVM alive to count it), or shows that no OOM killer ended the worker.
TEST_F(ProfileRulesTest, APythonWorkerCrashIsToldByTheCgroupsOomKillCount) {
  testing::SyntheticApp app = TwoStages();
  app.stages[0].skewed_tasks = 1;  // the last task fails once and is retried
  app.stages[0].failed_attempts = 1;
  app.stages[0].failure_class = "org.apache.spark.SparkException";
  app.stages[0].failure_message = "Python worker exited unexpectedly (crashed)";
  app.master = "spark://127.0.0.1:7077";  // a standalone Worker in a cgroup: not Spark's container
  app.app_id = "app-20231114221320-0000";
  auto batches = [&](uint64_t later_kills, bool counted) {
    std::string bytes;
    for (const char* executor : {"1", "2"}) {
      // One reading before the stage, one long after it: the count 1 before (a kill of earlier
      // days is not this run's), `later_kills` after.
      bytes += OomCountBatch(executor, app.start_ms + 500, 1, counted);
      bytes += OomCountBatch(executor, app.start_ms + 600'000, later_kills, counted);
    }
    return bytes;
  };
  const report::Analysis killed = Analyze(app, batches(3, true));
  auto found = FindingsOf(killed, "task-failures");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found[0]->title.rfind("Python worker memory exhausted", 0) == 0) << found[0]->title;
  EXPECT_NE(found[0]->explanation.find("The kernel's OOM killer ended 2 process(es) in executor "),
            std::string::npos)
      << found[0]->explanation;
  EXPECT_NE(found[0]->explanation.find("'s memory cgroup while it ran (its oom_kill count, the "
                                       "first between "),
            std::string::npos)
      << found[0]->explanation;
  EXPECT_NE(found[0]->explanation.find("whose limit is 4.0 GiB"), std::string::npos);
  EXPECT_EQ(EvidenceValue(*found[0], "container_oom_kills"), 2);
  // Standalone, the cgroup is not Spark's: it must hold the JVM and the workers, 25% above the
  // 4 GiB limit their 1 + 2 GiB came to at the kill.
  bool container_grows = false;
  for (const Recommendation& r : found[0]->recommendations) {
    container_grows |= r.value.find(
                           "raise the memory limit of the container the executor runs "
                           "in (now 4.0 GiB) to at least 5.0 GiB") != std::string::npos;
  }
  EXPECT_TRUE(container_grows);
  if (std::getenv("SPARKPROF_PRINT_FINDINGS") != nullptr)
    std::printf("%s\n", found[0]->explanation.c_str());

  // Counted, and none while the executor ran, up to a report after the failure.
  const report::Analysis crashed = Analyze(app, batches(1, true));
  found = FindingsOf(crashed, "task-failures");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0]->explanation.find("memory cgroup counted no OOM kill up to its report at "),
            std::string::npos)
      << found[0]->explanation;
  EXPECT_EQ(EvidenceValue(*found[0], "container_oom_kills"), 0);

  // A kernel that keeps no count: nothing said either way.
  const report::Analysis uncounted = Analyze(app, batches(0, false));
  found = FindingsOf(uncounted, "task-failures");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->explanation.find("OOM kill"), std::string::npos) << found[0]->explanation;
  EXPECT_EQ(EvidenceValue(*found[0], "container_oom_kills"), -1);
}

// With the agents' memory readings, executor-loss says what the lost executor last reported: its
// container against its limit, its resident set, its Python workers (issue 29).
TEST_F(ProfileRulesTest, ExecutorLossShowsTheLostExecutorsLastMemoryReport) {
  testing::SyntheticApp app = TwoStages();
  app.removed_executors = 1;  // executor 1, "Container killed by YARN for exceeding ..."
  app.extra_properties = {{"spark.executor.memory", "8g"}};
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  const std::string memory_batch = MemoryBatch(
      app, {3 * kGiB, 7 * kGiB / 2, 9 * kGiB - kGiB / 8, 9 * kGiB, 0, kGiB / 4, 4, 5 * kGiB});
  report::Analysis a =
      Analyze(app, StageZeroProfile(0.05, {"com.acme.Job.score"}, schema::Category::compute) +
                       memory_batch);
  auto loss = FindingsOf(a, "executor-loss");
  ASSERT_EQ(loss.size(), 1u);
  // The cause first, with the readings that show it (issue 29 goal 2).
  EXPECT_EQ(loss[0]->title.rfind("Container memory limit exceeded", 0), 0u) << loss[0]->title;
  EXPECT_EQ(loss[0]->explanation.rfind("Container memory limit exceeded: executor 1 was killed", 0),
            0u)
      << loss[0]->explanation;
  EXPECT_NE(loss[0]->explanation.find("in a container with a 9.0 GiB memory limit; its last "
                                      "report"),
            std::string::npos)
      << loss[0]->explanation;
  EXPECT_NE(loss[0]->explanation.find("had 8.9 GiB of it in use (98.6%): the JVM 3.0 GiB "
                                      "resident with at most 8.0 GiB of heap, its Python workers "
                                      "5.0 GiB"),
            std::string::npos)
      << loss[0]->explanation;
  EXPECT_NEAR(EvidenceValue(*loss[0], "lost_executor_container_usage_share_max"), 0.986, 0.001);
  EXPECT_EQ(EvidenceValue(*loss[0], "container_limit_bytes"), 9.0 * kGiB);
  // YARN's container: heap + overhead. The Python workers held most of what grew outside the
  // heap (5 GiB): their own budget, 25% above it; the overhead 25% above the 819 MiB the kill
  // proves too small (the 512 MiB measured outside the heap is less).
  EXPECT_EQ(RecommendedValue(*loss[0], "spark.executor.pyspark.memory"), "6400m");
  EXPECT_EQ(RecommendedValue(*loss[0], "spark.executor.memoryOverhead"), "1024m");
  // Without readings the finding is as before.
  report::Analysis plain =
      Analyze(app, StageZeroProfile(0.05, {"com.acme.Job.score"}, schema::Category::compute));
  auto before = FindingsOf(plain, "executor-loss");
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0]->explanation.find("memory report"), std::string::npos);
  EXPECT_EQ(EvidenceValue(*before[0], "lost_executors_with_memory_reports"), -1);
}

// A standalone Worker in a memory cgroup (a container no cluster manager sized): exit code 137
// alone says only SIGKILL; the agent's reading of the cgroup's limit makes it the limit, and the
// fix fits the settings into it: heap 512 MiB + off-heap 1 GiB + Spark's 384 MiB native
// allowance + the 140 MiB the Worker held > 1 GiB.
TEST_F(ProfileRulesTest, SigkillUnderAMeasuredCgroupLimitIsTheContainerLimit) {
  testing::SyntheticApp app = TwoStages();
  app.master = "spark://127.0.0.1:7077";
  app.removed_executors = 1;
  app.removed_reason = "Command exited with code 137";
  app.extra_properties = {{"spark.executor.memory", "512m"},
                          {"spark.memory.offHeap.enabled", "true"},
                          {"spark.memory.offHeap.size", "1g"}};
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  const std::string memory_batch =
      MemoryBatch(app, {850 * kMiB, 850 * kMiB, 1000 * kMiB, 1024 * kMiB, 980 * kMiB, 10 * kMiB, 0,
                        0, 200 * kMiB, 512 * kMiB, 60 * kMiB, 8 * kMiB, 300 * kMiB});
  const std::string profile =
      StageZeroProfile(0.05, {"com.acme.Job.score"}, schema::Category::compute);
  report::Analysis a = Analyze(app, profile + memory_batch);
  auto loss = FindingsOf(a, "executor-loss");
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_EQ(loss[0]->title.rfind("Container memory limit exceeded", 0), 0u) << loss[0]->title;
  EXPECT_EQ(EvidenceValue(*loss[0], "lost_to_memory"), 1);
  EXPECT_EQ(EvidenceValue(*loss[0], "other_processes_bytes"), 140.0 * kMiB);
  EXPECT_NE(loss[0]->explanation.find("other processes 140.0 MiB"), std::string::npos)
      << loss[0]->explanation;
  // The JVM's own accounts split its resident set.
  EXPECT_NE(loss[0]->explanation.find(
                "the JVM 850.0 MiB resident with at most 512.0 MiB of heap (heap 200.0 MiB in use "
                "of 512.0 MiB committed, Spark's execution memory 300.0 MiB off the heap, direct "
                "buffers 8.0 MiB, metaspace 60.0 MiB)"),
            std::string::npos)
      << loss[0]->explanation;
  EXPECT_FALSE(RecommendsKey(*loss[0], "spark.executor.memoryOverhead"));  // not Spark's container
  EXPECT_EQ(RecommendedValue(*loss[0], "spark.memory.offHeap.enabled"), "false");
  bool limit_advised = false;
  for (const Recommendation& r : loss[0]->recommendations) {
    // 25% above 512 MiB heap + 1 GiB off-heap + 384 MiB + 140 MiB = 2060 MiB, in 64 MiB steps.
    if (r.value.find("a container memory limit of at least 2.6 GiB") == 0) limit_advised = true;
  }
  EXPECT_TRUE(limit_advised);
  // The same log without readings: a SIGKILL after the last task, with no task lost, is the
  // shutdown; only the cgroup's limit made it a sign of memory.
  report::Analysis plain = Analyze(app, profile);
  EXPECT_TRUE(FindingsOf(plain, "executor-loss").empty());
}

TEST_F(ProfileRulesTest, WaitsLocksAndStarvation) {
  struct Case {
    const char* rule;
    std::vector<std::string> frames;
    schema::Category category;
  };
  const Case cases[] = {
      {"lock-contention",
       {"com.acme.SharedCache.get", "jdk.internal.misc.Unsafe.park"},
       schema::Category::lock_wait},
      {"io-wait-bound",
       {"org.apache.hadoop.fs.s3a.S3AInputStream.read", "sun.nio.ch.NioSocketImpl.read"},
       schema::Category::io_wait},
      {"cpu-oversubscription", {"com.acme.Job.score"}, schema::Category::cpu_starved},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.rule);
    report::Analysis a = Analyze(TwoStages(), StageZeroProfile(0.5, c.frames, c.category));
    auto found = FindingsOf(a, c.rule);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0]->stage_ids, std::vector<int32_t>{0});
    EXPECT_FALSE(found[0]->explanation.empty());
    // Each is reported only by its own rule.
    for (const Case& other : cases) {
      if (std::string(other.rule) != c.rule) {
        EXPECT_TRUE(FindingsOf(a, other.rule).empty());
      }
    }
  }
  // Blocked entering a monitor from compiled code, walked from the caller past the VM's stub:
  // the explanation names the compiled frame and says its inlined code is not known.
  report::Analysis stub = Analyze(
      TwoStages(),
      StageZeroProfile(0.5, {"scala.collection.Iterator$$anon$10.next", "[not_walkable_not_Java]"},
                       schema::Category::lock_wait));
  auto stub_found = FindingsOf(stub, "lock-contention");
  ASSERT_EQ(stub_found.size(), 1u);
  EXPECT_NE(stub_found[0]->explanation.find(
                "`scala.collection.Iterator$$anon$10.next` (16.0 s; sampled in a VM stub it "
                "called: the code it inlined is not known)"),
            std::string::npos)
      << stub_found[0]->explanation;
  // Off-CPU causes need off-CPU samples: a CPU-only profile holds none, and says so.
  report::Analysis cpu_only = Analyze(
      TwoStages(),
      ProfileBatch({{0, Under({"com.acme.Job.map"}), schema::Category::compute, 32000}}, "cpu"));
  ASSERT_NE(cpu_only.profile, nullptr);
  EXPECT_FALSE(cpu_only.profile->has_off_cpu());
  EXPECT_NE(report::RenderText(cpu_only).find("CPU samples only"), std::string::npos);
}

// Stage 0's contention on a com.acme.SharedScorer monitor as a loaded host samples it: 5% of the
// task time lock_wait, 35% cpu_starved (the woken waiters queue for a CPU); the JVM timed the
// waits exactly: 1600 of them, 12.8 s (40%). The owner was seen in SharedScorer.score at 9 of 11
// looks.
// `map_starved_ms` moves that much of com.acme.Job.map's compute to cpu_starved (the same
// stage's run delay outside the lock).
std::string SharedScorerContention(const char* mode = "cpu+wall", int64_t map_starved_ms = 0) {
  const std::vector<std::string> waiter = Under({"com.acme.Job.lockedWork"});
  std::vector<Sample> rows = {
      {0, Under({"com.acme.Job.lockedWork", "java.lang.Object.wait"}), schema::Category::lock_wait,
       1600},
      {0, waiter, schema::Category::cpu_starved, 11200},
      {0, Under({"com.acme.Job.map"}), schema::Category::compute, 19200 - map_starved_ms},
      {1, Under({"com.acme.Job.reduce"}), schema::Category::compute, 2000},
  };
  if (map_starved_ms > 0) {
    rows.push_back({0, Under({"com.acme.Job.map"}), schema::Category::cpu_starved, map_starved_ms});
  }
  const std::string samples = ProfileBatch(rows, mode);
  const char* worker = "Executor task launch worker";
  test_util::ProfileBatchBuilder monitors(mode);
  monitors
      .MonitorWait({0, 0, "com.acme.SharedScorer", waiter,
                    Under({"com.acme.SharedScorer.score", "java.lang.Math.exp"}), true, worker, 9,
                    72})
      .MonitorWait({0, 0, "com.acme.SharedScorer", waiter, waiter, true, "", 2, 16})
      .MonitorWait({0, 0, "com.acme.SharedScorer", waiter, {}, false, "", 1589, 12712});
  return samples + monitors.Bytes();
}

TEST_F(ProfileRulesTest, LockContentionNamesTheMonitorItsExactWaitAndItsHolders) {
  report::Analysis a = Analyze(TwoStages(), SharedScorerContention());
  auto found = FindingsOf(a, "lock-contention");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = *found[0];
  EXPECT_EQ(f.stage_ids, std::vector<int32_t>{0});
  EXPECT_EQ(f.title, "Tasks contend on a monitor of class com.acme.SharedScorer");
  // The share is the exact wait's: the samples' 5% of lock_wait alone would not be named.
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "top_stage_lock_wait_share"), 0.4);
  EXPECT_EQ(EvidenceValue(f, "lock_wait_ms"), 12800);
  EXPECT_EQ(EvidenceValue(f, "sampled_lock_wait_ms"), 1600);
  EXPECT_EQ(EvidenceValue(f, "monitor_wait_ms"), 12800);
  EXPECT_EQ(EvidenceValue(f, "monitor_waits"), 1600);
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "mean_monitor_wait_ms"), 8.0);
  EXPECT_EQ(EvidenceValue(f, "holder_looks"), 11);
  EXPECT_EQ(EvidenceValue(f, "top_stage_sampled_lock_wait_ms"), 1600);
  EXPECT_EQ(EvidenceValue(f, "top_stage_monitor_wait_ms"), 12800);
  EXPECT_EQ(f.confidence.level, ConfidenceLevel::kHigh);
  EXPECT_EQ(f.confidence.reason,
            "the JVM timed each of the stage's 1600 monitor waits exactly (the agent's "
            "contended-entry events), and the stage's sampled task time they are a share of holds "
            "~3200 samples");
  EXPECT_NE(f.explanation.find("Stage 0's task threads were blocked 12.8 s (40% of stage 0's "
                               "32.0 s of sampled task time) waiting for locks, in "
                               "`com.acme.Job.lockedWork` (1.6 s)"),
            std::string::npos)
      << f.explanation;
  EXPECT_NE(f.explanation.find(
                "The JVM timed the monitor waits exactly: 1600 waits to enter a monitor of class "
                "com.acme.SharedScorer, 12.8 s in all (8.00 ms each), most in "
                "`com.acme.Job.lockedWork` (12.8 s, 1600 waits); its owner was in "
                "`com.acme.SharedScorer.score` at 9 of 11 looks, by thread Executor task launch "
                "worker. The samples filed only 1.6 s of it as lock_wait"),
            std::string::npos)
      << f.explanation;
  EXPECT_NE(f.recommendations.back().value.find("(the com.acme.SharedScorer the tasks lock)"),
            std::string::npos);
  // Frames: the sampled lock_wait site, then the monitor's waiters by wait and holders by looks.
  ASSERT_EQ(f.frames.size(), 4u);
  EXPECT_EQ(f.frames[0].category, "lock_wait");
  EXPECT_EQ(f.frames[1].category, "monitor_wait");
  EXPECT_EQ(f.frames[1].frame, "com.acme.Job.lockedWork");
  EXPECT_DOUBLE_EQ(f.frames[1].ms, 12800);
  EXPECT_EQ(f.frames[1].looks, -1);
  EXPECT_EQ(f.frames[2].category, "monitor_holder");
  EXPECT_EQ(f.frames[2].frame, "com.acme.SharedScorer.score");
  EXPECT_EQ(f.frames[2].looks, 9);
  EXPECT_EQ(f.frames[3].frame, "com.acme.Job.lockedWork");
  EXPECT_EQ(f.frames[3].looks, 2);

  // Every report prints the stage's monitor line; JSON holds the monitors and the looks.
  const std::string line =
      "com.acme.SharedScorer: 1600 waits, 12.8 s waiting (8.00 ms each), in "
      "com.acme.Job.lockedWork; held in com.acme.SharedScorer.score (9 of 11 looks), by Executor "
      "task launch worker (9 of 11 looks)";
  EXPECT_NE(report::RenderText(a).find("    monitor " + line + "\n"), std::string::npos)
      << report::RenderText(a);
  EXPECT_NE(report::RenderMarkdown(a).find("- stage 0.0: " + line), std::string::npos);
  EXPECT_NE(report::RenderHtml(a).find("<li>stage 0.0: " + line + "</li>"), std::string::npos);
  EXPECT_NE(report::RenderText(a).find("monitor_holder 9 looks in com.acme.SharedScorer.score"),
            std::string::npos);
  std::string json;  // without the indentation, "key":value
  const std::string pretty = report::RenderJsonSection(a);
  for (size_t i = 0; i < pretty.size(); ++i) {
    if (pretty[i] == '\n') {
      while (i + 1 < pretty.size() && pretty[i + 1] == ' ') ++i;
    } else if (pretty.compare(i, 3, "\": ") == 0) {
      json += "\":";
      i += 2;
    } else {
      json += pretty[i];
    }
  }
  for (const char* expected :
       {"\"schema_minor\":17", "\"monitor_waits\":1600",
        "\"monitors\":[{\"class\":"
        "\"com.acme.SharedScorer\",\"waits\":1600,\"wait_ms\":12800,\"mean_wait_ms\":8,"
        "\"holder_looks\":11,\"waiters\":[{\"frame\":\"com.acme.Job.lockedWork\"",
        "\"holders\":[{\"frame\":\"com.acme.SharedScorer.score\",\"application_frame\":"
        "\"com.acme.SharedScorer.score\",\"looks\":9}",
        "\"category\":\"monitor_holder\",\"ms\":0,\"looks\":9}", "\"monitor_rows_left_out\":0"}) {
    EXPECT_NE(json.find(expected), std::string::npos) << expected;
  }
}

// A woken monitor waiter queueing for a CPU is both run delay in the samples and part of the
// JVM's exact wait: lock-contention claims it (the exact wait beyond the sampled lock_wait), and
// cpu-oversubscription leaves it out -- silent when that is all the run delay, and judging only
// the rest when the stage also queued elsewhere.
TEST_F(ProfileRulesTest, RunDelayInsideMonitorWaitsIsClaimedOnce) {
  report::Analysis a = Analyze(TwoStages(), SharedScorerContention());
  ASSERT_EQ(FindingsOf(a, "lock-contention").size(), 1u);
  EXPECT_TRUE(FindingsOf(a, "cpu-oversubscription").empty());

  // 6.4 s more run delay in com.acme.Job.map, outside the lock: cpu_starved 17.6 s, of which the
  // exact wait's 12.8 s - 1.6 s sampled lock_wait = 11.2 s is the lock's; 6.4 s (20%) is left.
  report::Analysis both = Analyze(TwoStages(), SharedScorerContention("cpu+wall", 6400));
  ASSERT_EQ(FindingsOf(both, "lock-contention").size(), 1u);
  auto found = FindingsOf(both, "cpu-oversubscription");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = *found[0];
  EXPECT_EQ(EvidenceValue(f, "cpu_starved_ms"), 6400);
  EXPECT_DOUBLE_EQ(EvidenceValue(f, "top_stage_cpu_starved_share"), 0.2);
  EXPECT_EQ(EvidenceValue(f, "top_stage_run_delay_in_monitor_waits_ms"), 11200);
  EXPECT_NE(f.explanation.find("Another 11.2 s of its run delay is left to lock-contention"),
            std::string::npos)
      << f.explanation;
}

// The exact wait is a share of task threads' wall time: CPU samples hold none, so with them the
// rule reads the samples alone (no lock_wait: silent), as before the monitor waits.
TEST_F(ProfileRulesTest, LockContentionNeedsWallTimeForTheMonitorWaitsShare) {
  report::Analysis a = Analyze(TwoStages(), SharedScorerContention("cpu"));
  EXPECT_TRUE(FindingsOf(a, "lock-contention").empty());
  ASSERT_NE(a.profile, nullptr);
  EXPECT_EQ(a.profile->Find(0, 0)->monitors.waits, 1600u);  // still in the profile
}

TEST_F(ProfileRulesTest, HotUserCodeNamesRegexCompiledPerRecord) {
  report::Analysis a =
      Analyze(TwoStages(),
              StageZeroProfile(0.4,
                               {"com.acme.Parser.parse", "java.lang.String.split",
                                "java.util.regex.Pattern.compile", "java.util.regex.Pattern.expr"},
                               schema::Category::compute));
  auto found = FindingsOf(a, "hot-user-code");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0]->title.find("regular expressions"), std::string::npos) << found[0]->title;
  EXPECT_NE(found[0]->title.find("com.acme.Parser.parse"), std::string::npos);
  EXPECT_GT(found[0]->impact.time_saved_ms_high, 0);
}

TEST_F(ProfileRulesTest, HotUserCodeNamesTheFrameHoldingMostOfTheCpu) {
  // Half of stage 0 off CPU (sleeping), the other half computing in com.acme.Scorer.dot (called
  // by score: the tie goes to the innermost frame, which holds the self time): the frame holds
  // all of the stage's CPU, though only half of its task time.
  report::Analysis a = Analyze(
      TwoStages(), ProfileBatch({
                       {0, Under({"com.acme.Scorer.score", "com.acme.Scorer.dot"}),
                        schema::Category::compute, 16000},
                       {0, Under({"org.apache.spark.util.Utils$.sleep", "java.lang.Thread.sleep"}),
                        schema::Category::sleep, 16000},
                       // dot also waited 8 s for a CPU: its self time, not its time on CPU
                       {0, Under({"com.acme.Scorer.score", "com.acme.Scorer.dot"}),
                        schema::Category::cpu_starved, 8000},
                   }));
  auto found = FindingsOf(a, "hot-user-code");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0]->title.find("com.acme.Scorer.dot"), std::string::npos) << found[0]->title;
  // Its own time on CPU, beside its inclusive time on CPU: never more (the 8 s of run delay is
  // in neither).
  EXPECT_EQ(EvidenceValue(*found[0], "application_frame_on_cpu_ms"), 16000);
  EXPECT_EQ(EvidenceValue(*found[0], "self_on_cpu_ms"), 16000);
  EXPECT_EQ(found[0]->severity, Severity::kInfo);  // no saving claimed
  EXPECT_EQ(found[0]->impact.time_saved_ms_high, 0);
}

TEST_F(ProfileRulesTest, AMissingProfileIsSaidNotFatal) {
  report::Analysis a = AnalyzeWithProfilePath(TwoStages(), (dir_ / "no-such-dir").string());
  EXPECT_EQ(a.profile, nullptr);
  EXPECT_NE(a.profile_error.find("no profile.sparkprof"), std::string::npos) << a.profile_error;
  EXPECT_NE(report::RenderJsonSection(a).find("\"available\": false"), std::string::npos);
}

// A straggler: stage 0's last task runs 12x the others with the same data. The profile's rows for
// that task (in two batches) and for the others say where its extra time went: the finding's
// explanation and every report name the task, the median task and the category.
TEST_F(ProfileRulesTest, TheSlowestTaskIsComparedWithTheMedianByCategory) {
  testing::SyntheticApp app = TwoStages();
  app.stages[0].tasks = 10;
  app.stages[0].task_ms = 1000;
  app.stages[0].skewed_tasks = 1;  // partition 9 = task id 9 (stage 0's ids are 0..9)
  app.stages[0].skew_factor = 12;
  const report::Analysis without = Analyze(app, "");
  ASSERT_EQ(FindingsOf(without, "straggler").size(), 1u);
  EXPECT_EQ(FindingsOf(without, "straggler")[0]->explanation.find("agent's samples"),
            std::string::npos);
  EXPECT_TRUE(without.task_decompositions.empty());
  EXPECT_EQ(report::RenderText(without).find("slowest task:"), std::string::npos);

  std::vector<TaskRow> first, second;
  for (int64_t task = 0; task < 10; ++task) {
    first.push_back({0, task, schema::Category::compute, 800});
  }
  first.push_back({0, 9, schema::Category::serialization, 6000});
  second.push_back({0, 9, schema::Category::serialization, 3000});  // summed with the first
  second.push_back({0, 9, schema::Category::gc, 500});
  const std::string profile =
      ProfileBatch({{0, Under({"com.acme.Job.map"}), schema::Category::compute, 8000}}, "cpu+wall",
                   first) +
      ProfileBatch({{0, Under({"java.io.ObjectOutputStream.writeObject"}),
                     schema::Category::serialization, 9000}},
                   "cpu+wall", second);
  const report::Analysis a = Analyze(app, profile);
  ASSERT_NE(a.profile, nullptr);
  const StageTaskDecomposition* tasks = FindTaskDecomposition(a.task_decompositions, 0, 0);
  ASSERT_NE(tasks, nullptr);
  EXPECT_EQ(tasks->successful_tasks, 10);
  ASSERT_EQ(tasks->slowest.size(), kSlowestTasksShown);
  EXPECT_EQ(tasks->slowest[0].task_id, 9);
  EXPECT_GE(tasks->slowest[1].duration_ms, tasks->slowest[2].duration_ms);
  EXPECT_GE(tasks->slowest[0].duration_ms, tasks->slowest[1].duration_ms);
  EXPECT_TRUE(tasks->slowest[0].sampled);
  const int serialization = CategoryIndex(::sparkprof::Category::kSerialization);
  EXPECT_EQ(tasks->slowest[0].time.category_ns[serialization], 9000 * kMs);
  const std::vector<const Finding*> straggler = FindingsOf(a, "straggler");
  ASSERT_EQ(straggler.size(), 1u);  // the same finding, with one sentence more
  EXPECT_EQ(tasks->slowest[0].duration_ms, EvidenceValue(*straggler[0], "max_task_ms"));
  EXPECT_EQ(tasks->median.duration_ms, EvidenceValue(*straggler[0], "median_task_ms"));
  EXPECT_NE(tasks->median.task_id, 9);
  EXPECT_EQ(tasks->median.time.task_ns(), 800 * kMs);
  const std::string words = SlowestVsMedianText(*tasks);
  const std::string expected_start =
      "task 9 (executor " + tasks->slowest[0].executor + ") ran " +
      HumanDurationMs(tasks->slowest[0].duration_ms) + " against a median of " +
      HumanDurationMs(tasks->median.duration_ms) + " (task " +
      std::to_string(tasks->median.task_id) + "): 9.0 s more of it in serialization";
  EXPECT_EQ(words.rfind(expected_start, 0), 0u) << words;
  EXPECT_EQ(words.find("gc"), std::string::npos) << words;  // 500 ms: under a quarter of 9 s
  EXPECT_NE(straggler[0]->explanation.find(" The agent's samples: " + words + "."),
            std::string::npos)
      << straggler[0]->explanation;
  EXPECT_EQ(straggler[0]->explanation.substr(0, straggler[0]->explanation.find(" The agent's")),
            FindingsOf(without, "straggler")[0]->explanation);

  EXPECT_NE(report::RenderText(a).find("    slowest task: " + words + "\n"), std::string::npos);
  EXPECT_NE(report::RenderMarkdown(a).find("- stage 0.0: " + words), std::string::npos);
  EXPECT_NE(report::RenderHtml(a).find("<ul class=\"slowest-tasks\">\n<li>stage 0.0: "),
            std::string::npos);
  const std::string json = report::RenderJsonSection(a);
  EXPECT_NE(json.find("\"slowest_vs_median\": \"" + words + "\""), std::string::npos);
  EXPECT_NE(json.find("\"task_rows_left_out\": 0"), std::string::npos);
}

// The driver's own samples over a long no-task stretch: driver-bound names the application's
// frame the driver was in, and its expected impact is that code spread over the slots.
TEST_F(ProfileRulesTest, DriverBoundNamesTheDriversFrameAndMovesItOntoTheSlots) {
  testing::SyntheticApp app = TwoStages();
  app.driver_gap_ms = 60'000;
  const int64_t start_ns = app.start_ms * 1'000'000;
  // One driver window of 200 s over the whole run: 150 s in the application's loop, 15 s in
  // Spark's planner (under the application's main), 10 s of GC; the executors' batch holds the
  // stages.
  const std::string profile =
      ProfileBatch({{0, {"Executor.run", "com.acme.Job.map"}, schema::Category::compute, 30'000}}) +
      ProfileBatch({{-1,
                     {"org.apache.spark.deploy.SparkSubmit.main", "com.acme.Job.main",
                      "com.acme.Job.scoreOnDriver", "java.lang.Math.floorMod"},
                     schema::Category::compute,
                     150'000},
                    {-1,
                     {"com.acme.Job.main", "org.apache.spark.sql.Dataset.collect",
                      "org.apache.spark.sql.catalyst.rules.RuleExecutor.execute",
                      "scala.collection.Map.get"},
                     schema::Category::compute,
                     15'000},
                    {-1, {"[GC]"}, schema::Category::gc, 10'000}},
                   "cpu", {}, "driver", start_ns, start_ns + int64_t{200'000} * 1'000'000);
  report::Analysis analysis = Analyze(app, profile);
  std::vector<const Finding*> found = FindingsOf(analysis, "driver-bound");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = *found[0];
  ASSERT_NE(analysis.profile, nullptr);
  ASSERT_EQ(analysis.profile->driver.windows.size(), 1u);
  ASSERT_FALSE(f.frames.empty()) << f.explanation;
  EXPECT_EQ(f.frames[0].stage_id, -1);
  EXPECT_EQ(f.frames[0].frame, "com.acme.Job.scoreOnDriver");
  EXPECT_EQ(f.frames[0].application_frame, "com.acme.Job.scoreOnDriver");
  EXPECT_EQ(f.frames[0].category, "driver_cpu");
  // The planner under main holds 15 of the 165 s (9%): under the 10% a frame needs to be named.
  EXPECT_EQ(f.frames.size(), 1u);
  const double cpu_ms = EvidenceValue(f, "driver_threads_cpu_ms");
  EXPECT_GT(cpu_ms, 0);
  EXPECT_NEAR(EvidenceValue(f, "driver_jvm_threads_ms"), cpu_ms * 10 / 165, 2);
  // The window covers every gap: all of it was sampled.
  EXPECT_NEAR(EvidenceValue(f, "driver_sampled_gap_ms"), EvidenceValue(f, "driver_only_ms"),
              EvidenceValue(f, "driver_only_ms") * 0.1);
  EXPECT_EQ(f.confidence.level, ConfidenceLevel::kHigh);
  // Application code: scoreOnDriver's 150 s and main's 15 s (the planner sits under main), at
  // least half the driver-only time; 8 slots.
  const double application_ms = cpu_ms;
  EXPECT_NEAR(static_cast<double>(f.impact.time_saved_ms_high), application_ms * 7 / 8, 3);
  EXPECT_EQ(f.impact.time_saved_ms_low, f.impact.time_saved_ms_high / 2);
  EXPECT_NE(f.impact.method.find("8 task slots"), std::string::npos) << f.impact.method;
  EXPECT_NE(f.explanation.find("in com.acme.Job.scoreOnDriver (thread "), std::string::npos)
      << f.explanation;
  ASSERT_FALSE(f.recommendations.empty());
  EXPECT_NE(f.recommendations[0].value.find("look at com.acme.Job.scoreOnDriver"),
            std::string::npos);
}

}  // namespace
}  // namespace sparkprof::diagnosis
