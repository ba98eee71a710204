#include "driver-aggregator/driver_aggregator.h"
#include "analyzer/profile/stage_profiles.h"
#include "common/atomic_file.h"
#include "driver-aggregator/profile_file_writer.h"
#include "driver-aggregator/stage_diff.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "flamegraph/profile_file_reader.h"
#include "flatbuffers/flatbuffers.h"
#include "schema/profile_generated.h"

namespace sparkprof::driver {
namespace {

namespace fb = sparkprof::schema;

struct SampleSpec {
  std::vector<std::string> frames;  // root first
  int32_t stage_id;
  fb::Category category;
  uint64_t weight_ns;
  int64_t task_attempt_id = 7;  // -1: no task (the JVM's own threads)
};

// A batch as the agent's encoder writes it (not size-prefixed, identifier "SPPF").
std::vector<uint8_t> MakeBatch(const std::string& executor, const std::vector<SampleSpec>& specs,
                               uint64_t samples_taken = 100, uint32_t schema_version = 1,
                               std::vector<int64_t> gc_pause_ns = {}) {
  std::vector<std::string> strings;
  auto intern = [&](const std::string& s) {
    for (size_t i = 0; i < strings.size(); ++i) {
      if (strings[i] == s) return static_cast<uint32_t>(i);
    }
    strings.push_back(s);
    return static_cast<uint32_t>(strings.size() - 1);
  };
  // Intern every name first: the strings vector is written before the tables that use it.
  for (const auto& spec : specs) {
    for (const auto& f : spec.frames) intern(f);
  }
  intern("Executor task launch worker-N");
  flatbuffers::FlatBufferBuilder final_builder;
  std::vector<flatbuffers::Offset<flatbuffers::String>> s2;
  for (const auto& s : strings) s2.push_back(final_builder.CreateString(s));
  auto strings_vector = final_builder.CreateVector(s2);
  std::vector<flatbuffers::Offset<fb::Stack>> stacks2;
  std::vector<flatbuffers::Offset<fb::StackSample>> samples2;
  std::vector<flatbuffers::Offset<fb::TaskCategoryTime>> times2;
  for (size_t i = 0; i < specs.size(); ++i) {
    std::vector<uint32_t> frames;
    for (const auto& f : specs[i].frames) frames.push_back(intern(f));
    stacks2.push_back(fb::CreateStackDirect(final_builder, &frames));
    uint32_t thread = intern("Executor task launch worker-N");
    samples2.push_back(fb::CreateStackSample(final_builder, static_cast<uint32_t>(i),
                                             specs[i].stage_id, 0, specs[i].task_attempt_id, thread,
                                             specs[i].category, 1, specs[i].weight_ns));
    times2.push_back(fb::CreateTaskCategoryTime(final_builder, specs[i].stage_id, 0,
                                                specs[i].task_attempt_id, specs[i].category, 1,
                                                specs[i].weight_ns));
  }
  std::vector<flatbuffers::Offset<fb::GcPause>> pauses2;
  for (int64_t ns : gc_pause_ns) pauses2.push_back(fb::CreateGcPause(final_builder, 0, ns));
  auto health2 = fb::CreateAgentHealth(final_builder, samples_taken, 2, 1, 0, 0, 1, 4096);
  auto executor_string = final_builder.CreateString(executor);
  auto host = final_builder.CreateString("host");
  auto mode = final_builder.CreateString("cpu");
  auto batch2 = fb::CreateBatch(
      final_builder, schema_version, executor_string, host, 42, 0, 0, 10000000, mode,
      strings_vector, final_builder.CreateVector(stacks2), final_builder.CreateVector(samples2),
      final_builder.CreateVector(times2), final_builder.CreateVector(pauses2), health2);
  fb::FinishBatchBuffer(final_builder, batch2);
  return {final_builder.GetBufferPointer(),
          final_builder.GetBufferPointer() + final_builder.GetSize()};
}

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("sparkprof_aggregator_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

std::unique_ptr<DriverAggregator> StartOrDie(AggregatorOptions options) {
  auto started = DriverAggregator::Start(std::move(options));
  EXPECT_TRUE(started.ok()) << started.status().ToString();
  return std::move(started).value();
}

const std::vector<std::string> kSerializationStack = {
    "java.lang.Thread.run", "org.apache.spark.executor.Executor$TaskRunner.run",
    "java.io.ObjectOutputStream.writeObject"};

TEST(DriverAggregatorTest, MergesStagesAndExportsCategoryTime) {
  auto aggregator = StartOrDie({});
  auto batch = MakeBatch("1",
                         {{kSerializationStack, 3, fb::Category::serialization, 2'000'000'000},
                          {{"Main.compute"}, 3, fb::Category::compute, 500'000'000},
                          {{"Main.other"}, 4, fb::Category::compute, 1'000'000'000}},
                         100, 1, {30'000'000});
  EXPECT_EQ(aggregator->Ingest(batch), IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->Ingest(MakeBatch(
                "2", {{kSerializationStack, 3, fb::Category::serialization, 1'000'000'000}})),
            IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->StageWeightNs({3, 0}), 3'500'000'000u);
  EXPECT_EQ(aggregator->StageWeightNs({4, 0}), 1'000'000'000u);
  std::string text = aggregator->registry().Render();
  EXPECT_NE(text.find("spark_task_time_seconds_total{category=\"serialization\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("spark_task_time_seconds_total{category=\"compute\"} 1.5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("spark_gc_pause_seconds_count 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("spark_agent_samples_total 200\n"), std::string::npos) << text;
  EXPECT_NE(text.find("spark_agent_reporting_executors 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("sparkprof_driver_batches_total{outcome=\"accepted\"} 2\n"),
            std::string::npos)
      << text;
}

TEST(DriverAggregatorTest, JvmThreadCpuIsExecutorCpuNotTaskTime) {
  auto aggregator = StartOrDie({});
  auto batch =
      MakeBatch("1", {{{"[jvm gc]", "[G1 Conc#N]"}, -1, fb::Category::gc, 2'000'000'000, -1},
                      {{"[jvm jit]", "[C2 CompilerThre]"}, -1, fb::Category::jit, 500'000'000, -1},
                      {{"[jvm vm]", "[VM Thread]"}, -1, fb::Category::vm, 250'000'000, -1},
                      {{"Main.compute"}, 3, fb::Category::compute, 1'000'000'000}});
  EXPECT_EQ(aggregator->Ingest(batch), IngestOutcome::kAccepted);
  std::string text = aggregator->registry().Render();
  EXPECT_NE(text.find("spark_jvm_thread_cpu_seconds_total{category=\"gc\"} 2\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("spark_jvm_thread_cpu_seconds_total{category=\"jit\"} 0.5\n"),
            std::string::npos);
  EXPECT_NE(text.find("spark_jvm_thread_cpu_seconds_total{category=\"vm\"} 0.25\n"),
            std::string::npos);
  // Task time holds the task's sample only; no series for categories that are never JVM CPU.
  EXPECT_NE(text.find("spark_task_time_seconds_total{category=\"compute\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("spark_task_time_seconds_total{category=\"gc\"} 0\n"), std::string::npos);
  EXPECT_EQ(text.find("spark_jvm_thread_cpu_seconds_total{category=\"compute\"}"),
            std::string::npos);
}

// The agents' CpuUse: process CPU for every JVM that sends it, throttling only from those with a
// cgroup cpu controller.
TEST(DriverAggregatorTest, CpuUseAddsProcessCpuAndThrottling) {
  auto aggregator = StartOrDie({});
  auto with_cpu = [](const char* executor, uint8_t cgroup_version) {
    flatbuffers::FlatBufferBuilder builder;
    auto cpu = fb::CreateCpuUse(builder, 2, 0, 0, 0, 1'500'000'000, cgroup_version, 500, 100, 40,
                                2'000'000'000, /*agent_cpu_ns=*/250'000'000);
    auto batch =
        fb::CreateBatchDirect(builder, 1, executor, "h", 1, 0, 1, 10'000'000, "cpu+wall", nullptr,
                              nullptr, nullptr, nullptr, nullptr, 0, nullptr, cpu);
    fb::FinishBatchBuffer(builder, batch);
    return std::vector<uint8_t>(builder.GetBufferPointer(),
                                builder.GetBufferPointer() + builder.GetSize());
  };
  EXPECT_EQ(aggregator->Ingest(with_cpu("1", 2)), IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->Ingest(with_cpu("2", 0)), IngestOutcome::kAccepted);
  std::string text = aggregator->registry().Render();
  EXPECT_NE(text.find("spark_jvm_process_cpu_seconds_total 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("spark_agent_cpu_seconds_total 0.5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("spark_cgroup_cpu_throttled_seconds_total 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("spark_cgroup_cpu_periods_total{state=\"all\"} 100\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("spark_cgroup_cpu_periods_total{state=\"throttled\"} 40\n"),
            std::string::npos)
      << text;
}

// The agents' MemoryUse: one gauge per executor and kind, the last report's; zeros (unreadable)
// are no series.
TEST(DriverAggregatorTest, MemoryUseGaugesPerExecutor) {
  auto aggregator = StartOrDie({});
  auto with_memory = [](const char* executor, uint64_t rss, uint64_t limit) {
    flatbuffers::FlatBufferBuilder builder;
    auto health = fb::CreateAgentHealth(builder);
    auto memory =
        fb::CreateMemoryUse(builder, rss, rss * 2, 40, 1, rss + 1, limit, 0, 0, 0, 2, 1000,
                            /*heap_used=*/rss * 3, /*heap_committed=*/0, /*heap_max=*/8192);
    auto batch =
        fb::CreateBatchDirect(builder, 1, executor, "h", 1, 0, 1, 10'000'000, "cpu+wall", nullptr,
                              nullptr, nullptr, nullptr, nullptr, health, nullptr, 0, memory);
    fb::FinishBatchBuffer(builder, batch);
    return std::vector<uint8_t>(builder.GetBufferPointer(),
                                builder.GetBufferPointer() + builder.GetSize());
  };
  EXPECT_EQ(aggregator->Ingest(with_memory("1", 100, 0)), IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->Ingest(with_memory("1", 300, 0)), IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->Ingest(with_memory("driver", 50, 4096)), IngestOutcome::kAccepted);
  std::string text = aggregator->registry().Render();
  EXPECT_NE(text.find("spark_jvm_memory_bytes{executor_id=\"1\",kind=\"rss\"} 300\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("spark_jvm_memory_bytes{executor_id=\"1\",kind=\"python_rss\"} 1000\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("spark_jvm_memory_bytes{executor_id=\"driver\",kind=\"container_limit\"} 4096\n"),
      std::string::npos);
  EXPECT_EQ(text.find("spark_jvm_memory_bytes{executor_id=\"1\",kind=\"container_limit\"}"),
            std::string::npos);
  EXPECT_EQ(text.find("kind=\"container_peak\""), std::string::npos);
  EXPECT_NE(text.find("spark_jvm_memory_bytes{executor_id=\"1\",kind=\"heap_used\"} 900\n"),
            std::string::npos);
  EXPECT_NE(text.find("spark_jvm_memory_bytes{executor_id=\"1\",kind=\"heap_max\"} 8192\n"),
            std::string::npos);
  EXPECT_EQ(text.find("kind=\"heap_committed\""), std::string::npos);
}

// A batch the real agent drained from a JVM whose tagged thread (stage 3, TID 17) serialized
// objects (driver-aggregator/fuzz/corpus/driver_ingest/agent_batch.bin, also a fuzz seed).
TEST(DriverAggregatorTest, IngestsARealAgentBatch) {
  std::ifstream in(std::string(SPARKPROF_SOURCE_DIR) +
                       "/driver-aggregator/fuzz/corpus/driver_ingest/agent_batch.bin",
                   std::ios::binary);
  std::vector<uint8_t> batch((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  ASSERT_FALSE(batch.empty());
  AggregatorOptions options;
  options.output_dir = TempDir("real");
  auto aggregator = StartOrDie(options);
  ASSERT_EQ(aggregator->Ingest(batch), IngestOutcome::kAccepted);
  EXPECT_GT(aggregator->StageWeightNs({3, 0}), 0u);
  std::string text = aggregator->registry().Render();
  EXPECT_EQ(text.find("spark_task_time_seconds_total{category=\"serialization\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("spark_agent_reporting_executors 1\n"), std::string::npos);
  auto path = aggregator->WriteStageFlameGraph(3, 0);
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  std::ifstream html_in(*path);
  std::string html((std::istreambuf_iterator<char>(html_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("ObjectOutputStream"), std::string::npos);
  std::filesystem::remove_all(options.output_dir);
}

TEST(DriverAggregatorTest, HealthCountersAddOnlyGrowth) {
  auto aggregator = StartOrDie({});
  ASSERT_EQ(aggregator->Ingest(MakeBatch("1", {}, 100)), IngestOutcome::kAccepted);
  ASSERT_EQ(aggregator->Ingest(MakeBatch("1", {}, 150)), IngestOutcome::kAccepted);
  ASSERT_EQ(aggregator->Ingest(MakeBatch("1", {}, 20)), IngestOutcome::kAccepted);  // restarted
  EXPECT_NE(aggregator->registry().Render().find("spark_agent_samples_total 170\n"),
            std::string::npos);
}

TEST(DriverAggregatorTest, BadBatchesAreCountedAndDropped) {
  auto aggregator = StartOrDie({});
  std::vector<uint8_t> garbage(64, 0xAB);
  EXPECT_EQ(aggregator->Ingest(garbage), IngestOutcome::kInvalid);
  EXPECT_EQ(aggregator->Ingest(std::span<const uint8_t>()), IngestOutcome::kInvalid);

  auto good = MakeBatch("1", {{kSerializationStack, 1, fb::Category::serialization, 1000}});
  // Right identifier, broken offsets: every truncation must be refused by the verifier.
  for (size_t cut = 0; cut < good.size(); cut += 7) {
    std::vector<uint8_t> truncated(good.begin(), good.begin() + cut);
    EXPECT_NE(aggregator->Ingest(truncated), IngestOutcome::kAccepted) << "cut at " << cut;
  }
  std::vector<uint8_t> corrupt = good;
  corrupt[0] = 0xFF;  // root offset far outside the buffer
  corrupt[1] = 0xFF;
  EXPECT_EQ(aggregator->Ingest(corrupt), IngestOutcome::kInvalid);
  EXPECT_EQ(aggregator->Ingest(MakeBatch("1", {}, 1, 99)), IngestOutcome::kUnsupportedVersion);
  EXPECT_EQ(aggregator->StageWeightNs({1, 0}), 0u);
  EXPECT_EQ(aggregator->outcome_count(IngestOutcome::kAccepted), 0u);
  EXPECT_NE(aggregator->registry().Render().find(
                "sparkprof_driver_batches_total{outcome=\"unsupported_version\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(aggregator->Ingest(good), IngestOutcome::kAccepted);  // still works afterwards
}

TEST(DriverAggregatorTest, OversizedBatchIsDroppedBeforeParsing) {
  AggregatorOptions options;
  options.max_batch_bytes = 1024;
  auto aggregator = StartOrDie(options);
  std::vector<SampleSpec> many;
  for (int i = 0; i < 100; ++i) {
    many.push_back({{"frame" + std::to_string(i)}, 1, fb::Category::compute, 1});
  }
  auto big = MakeBatch("1", many);
  ASSERT_GT(big.size(), 1024u);
  EXPECT_EQ(aggregator->Ingest(big), IngestOutcome::kTooLarge);
  EXPECT_EQ(aggregator->outcome_count(IngestOutcome::kTooLarge), 1u);
  EXPECT_EQ(aggregator->StageWeightNs({1, 0}), 0u);
}

TEST(DriverAggregatorTest, RateLimitDropsBatchesBeyondThePerSecondCap) {
  AggregatorOptions options;
  options.max_batches_per_second = 2;
  auto aggregator = StartOrDie(options);
  auto batch = MakeBatch("1", {});
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(aggregator->IngestAt(batch, t0), IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->IngestAt(batch, t0), IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->IngestAt(batch, t0), IngestOutcome::kRateLimited);
  EXPECT_EQ(aggregator->IngestAt(batch, t0 + std::chrono::seconds(1)), IngestOutcome::kAccepted);
}

TEST(DriverAggregatorTest, NodeCapFoldsIntoOverflowAndStageCapEvictsOldest) {
  AggregatorOptions options;
  options.max_nodes_per_stage = 20;
  options.max_stages = 2;
  auto aggregator = StartOrDie(options);
  std::vector<SampleSpec> wide;
  for (int i = 0; i < 50; ++i) {
    wide.push_back({{"a" + std::to_string(i), "b"}, 1, fb::Category::compute, 10});
  }
  ASSERT_EQ(aggregator->Ingest(MakeBatch("1", wide)), IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->StageWeightNs({1, 0}), 500u);  // nothing lost, only folded
  EXPECT_NE(aggregator->registry().Render().find("sparkprof_driver_stacks_folded_total"),
            std::string::npos);
  ASSERT_EQ(aggregator->Ingest(MakeBatch("1", {{{"x"}, 2, fb::Category::compute, 1}})),
            IngestOutcome::kAccepted);
  ASSERT_EQ(aggregator->Ingest(MakeBatch("1", {{{"x"}, 3, fb::Category::compute, 1}})),
            IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->StageWeightNs({1, 0}), 0u);  // evicted: least recently fed
  EXPECT_EQ(aggregator->StageWeightNs({3, 0}), 1u);
}

TEST(DriverAggregatorTest, FullStageTreeStillTakesStacksItAlreadyHolds) {
  AggregatorOptions options;
  options.max_nodes_per_stage = 20;
  auto aggregator = StartOrDie(options);
  std::vector<SampleSpec> wide;
  for (int i = 0; i < 50; ++i) {
    wide.push_back({{"a" + std::to_string(i), "b"}, 1, fb::Category::compute, 10});
  }
  ASSERT_EQ(aggregator->Ingest(MakeBatch("1", wide)), IngestOutcome::kAccepted);
  auto folded_line = [&] {
    std::string text = aggregator->registry().Render();
    size_t at = text.find("\nsparkprof_driver_stacks_folded_total");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at + 1) - at);
  };
  std::string folded_before = folded_line();
  ASSERT_FALSE(folded_before.empty());
  // a0;b went in before the tree filled up: more of it lands on its node, not in [overflow].
  ASSERT_EQ(aggregator->Ingest(MakeBatch("2", {{{"a0", "b"}, 1, fb::Category::compute, 7},
                                               {{"a0", "b"}, 1, fb::Category::gc, 3}})),
            IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->StageWeightNs({1, 0}), 510u);
  EXPECT_EQ(folded_line(), folded_before);
  // A new stack still folds.
  ASSERT_EQ(aggregator->Ingest(MakeBatch("2", {{{"new", "b"}, 1, fb::Category::compute, 1}})),
            IngestOutcome::kAccepted);
  EXPECT_NE(folded_line(), folded_before);
}

TEST(DriverAggregatorTest, NodeBudgetOverAllStagesEvictsTheLeastRecentlyFed) {
  AggregatorOptions options;
  options.max_total_nodes = 12;
  auto aggregator = StartOrDie(options);
  auto stage_batch = [](int32_t stage) {
    return MakeBatch(
        "1", {{{"s" + std::to_string(stage), "x", "y", "z"}, stage, fb::Category::compute, 5}});
  };
  // Each stage tree: root + 4 frames (+ nothing else) = 5 nodes; three of them exceed 12.
  ASSERT_EQ(aggregator->Ingest(stage_batch(1)), IngestOutcome::kAccepted);
  ASSERT_EQ(aggregator->Ingest(stage_batch(2)), IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->StageWeightNs({1, 0}), 5u);
  ASSERT_EQ(aggregator->Ingest(stage_batch(3)), IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->StageWeightNs({1, 0}), 0u);  // evicted
  EXPECT_EQ(aggregator->StageWeightNs({2, 0}), 5u);
  EXPECT_EQ(aggregator->StageWeightNs({3, 0}), 5u);  // the stage being fed is never evicted
}

TEST(DriverAggregatorTest, WritesStageFlameGraph) {
  AggregatorOptions options;
  options.output_dir = TempDir("flame") + "/nested";
  auto aggregator = StartOrDie(options);
  ASSERT_EQ(aggregator->Ingest(
                MakeBatch("1", {{kSerializationStack, 5, fb::Category::serialization, 1'000'000}})),
            IngestOutcome::kAccepted);
  auto path = aggregator->WriteStageFlameGraph(5, 0);
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_EQ(std::filesystem::path(*path).filename(), "stage-5-attempt-0.html");
  std::ifstream in(*path);
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("java.io.ObjectOutputStream.writeObject"), std::string::npos);
  EXPECT_NE(html.str().find("serialization"), std::string::npos);
  EXPECT_EQ(aggregator->WriteStageFlameGraph(6, 0).status().code(), StatusCode::kNotFound);
  std::filesystem::remove_all(std::filesystem::path(options.output_dir).parent_path());
}

// The UI tab's flame graph: the same page from memory, no file written, no file budget spent.
TEST(DriverAggregatorTest, StageFlameGraphHtmlForTheUiTab) {
  AggregatorOptions options;
  options.output_dir = TempDir("flame_ui");
  options.max_flamegraph_files = 1;
  auto aggregator = StartOrDie(options);
  ASSERT_EQ(aggregator->Ingest(
                MakeBatch("1", {{kSerializationStack, 5, fb::Category::serialization, 1'000'000}})),
            IngestOutcome::kAccepted);
  auto html = aggregator->StageFlameGraphHtml({5, 0});
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  EXPECT_NE(html->find("java.io.ObjectOutputStream.writeObject"), std::string::npos);
  EXPECT_NE(html->find("sparkprof: stage 5 (attempt 0)"), std::string::npos);
  EXPECT_EQ(aggregator->StageFlameGraphHtml({6, 0}).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(options.output_dir) /
                                       "stage-5-attempt-0.html"));
  auto path = aggregator->WriteStageFlameGraph(5, 0);  // the one file still allowed
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  std::ifstream in(*path);
  std::stringstream written;
  written << in.rdbuf();
  EXPECT_EQ(written.str(), *html);

  const std::string json = aggregator->LiveUiJson();
  EXPECT_NE(json.find("\"schema\":\"sparkprof.ui/v1\""), std::string::npos) << json;
  EXPECT_NE(json.find("{\"stage_id\":5,\"attempt\":0,\"sampled_ms\":1}"), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"executor_id\":\"1\""), std::string::npos) << json;
  std::filesystem::remove_all(options.output_dir);
}

// Past max_flamegraph_files a stage's graph is not written (counted); a graph written already is
// rewritten (the same file), and the samples still reach the metrics.
TEST(DriverAggregatorTest, StageFlameGraphFilesAreCapped) {
  AggregatorOptions options;
  options.output_dir = TempDir("flame_cap");
  options.max_flamegraph_files = 2;
  auto aggregator = StartOrDie(options);
  for (int32_t stage = 0; stage < 3; ++stage) {
    ASSERT_EQ(aggregator->Ingest(MakeBatch(
                  "1", {{kSerializationStack, stage, fb::Category::serialization, 1'000'000}})),
              IngestOutcome::kAccepted);
  }
  EXPECT_TRUE(aggregator->WriteStageFlameGraph(0, 0).ok());
  EXPECT_TRUE(aggregator->WriteStageFlameGraph(1, 0).ok());
  auto third = aggregator->WriteStageFlameGraph(2, 0);
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), StatusCode::kNotFound);
  EXPECT_NE(third.status().message().find("--stage 2"), std::string::npos)
      << third.status().ToString();
  EXPECT_TRUE(aggregator->WriteStageFlameGraph(1, 0).ok());  // rewritten, not a new file
  EXPECT_FALSE(std::filesystem::exists(options.output_dir + "/stage-2-attempt-0.html"));
  EXPECT_NE(
      aggregator->registry().Render().find("sparkprof_driver_flamegraphs_over_limit_total 1\n"),
      std::string::npos);
  EXPECT_EQ(aggregator->StageWeightNs({2, 0}), 1'000'000u);
  std::filesystem::remove_all(options.output_dir);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(DriverAggregatorTest, SavesEveryAcceptedBatchAsAProfileFileTheFlameGraphReaderReads) {
  AggregatorOptions options;
  options.output_dir = TempDir("profile");
  auto aggregator = StartOrDie(options);
  ASSERT_TRUE(aggregator->SetApplication("app-2026/11 22:01", "nightly \"etl\"").ok());
  EXPECT_NE(aggregator->registry().Render().find(
                "spark_application_info{application_id=\"app-2026/11 22:01\","
                "application_name=\"nightly \\\"etl\\\"\"} 1\n"),
            std::string::npos)
      << aggregator->registry().Render();
  EXPECT_EQ(aggregator->OutputDirectory(), options.output_dir + "/app-2026_11_22_01");
  ASSERT_EQ(
      aggregator->Ingest(MakeBatch(
          "1", {{kSerializationStack, 5, fb::Category::serialization, 3000}}, 100, 1, {1000})),
      IngestOutcome::kAccepted);
  ASSERT_EQ(aggregator->Ingest(std::vector<uint8_t>(40, 0x11)), IngestOutcome::kInvalid);
  ASSERT_EQ(aggregator->Ingest(MakeBatch("2", {{{"Main.run"}, 6, fb::Category::compute, 500}})),
            IngestOutcome::kAccepted);
  ASSERT_TRUE(aggregator->WriteStageFlameGraph(5, 0).ok());  // flushes the profile file
  EXPECT_TRUE(std::filesystem::exists(aggregator->OutputDirectory() + "/stage-5-attempt-0.html"));

  std::string bytes = ReadAll(aggregator->OutputDirectory() + "/profile.sparkprof");
  ASSERT_TRUE(flamegraph::LooksLikeProfileFile(bytes));
  flamegraph::ProfileModel model(flamegraph::WeightUnit::kNanoseconds);
  flamegraph::ReadReport report;
  flamegraph::ProfileFileSummary summary;
  flamegraph::ProfileFileReadOptions read_options;
  read_options.weight = flamegraph::WeightUnit::kNanoseconds;
  ASSERT_TRUE(flamegraph::ReadProfileFile(bytes, read_options, model, report, &summary).ok());
  EXPECT_EQ(summary.batches_read, 2u);  // the invalid batch was not saved
  EXPECT_EQ(summary.batches_skipped, 0u);
  EXPECT_EQ(model.total_weight(), 3500u);
  EXPECT_TRUE(report.messages.empty());
  EXPECT_NE(aggregator->StatusJson().find("\"profile_file_bytes\":" + std::to_string(bytes.size())),
            std::string::npos);
  std::filesystem::remove_all(options.output_dir);
}

TEST(DriverAggregatorTest, ProfileFileStopsAtItsCap) {
  AggregatorOptions options;
  options.output_dir = TempDir("profile_cap");
  auto batch = MakeBatch("1", {{{"Main.run"}, 1, fb::Category::compute, 1}});
  options.max_profile_file_bytes = batch.size() + 8;  // room for one framed batch only
  auto aggregator = StartOrDie(options);
  EXPECT_EQ(aggregator->Ingest(batch), IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->Ingest(batch), IngestOutcome::kAccepted);  // merged, not saved
  EXPECT_EQ(aggregator->StageWeightNs({1, 0}), 2u);
  EXPECT_NE(aggregator->StatusJson().find("\"profile_file_batches_skipped\":1"), std::string::npos)
      << aggregator->StatusJson();
  std::filesystem::remove_all(options.output_dir);
}

TEST(DriverAggregatorTest, UnalignedBatchIsAccepted) {
  auto aggregator = StartOrDie({});
  auto batch = MakeBatch("1", {{kSerializationStack, 1, fb::Category::serialization, 8}});
  std::vector<uint8_t> shifted(batch.size() + 1);
  std::copy(batch.begin(), batch.end(), shifted.begin() + 1);
  EXPECT_EQ(aggregator->Ingest(std::span<const uint8_t>(shifted).subspan(1)),
            IngestOutcome::kAccepted);
  EXPECT_EQ(aggregator->StageWeightNs({1, 0}), 8u);
}

// Spark delivers batches on its dispatcher thread while the listener thread asks for flame graphs
// and Prometheus scrapes: all at once must be safe (run under ASan/TSan builds too).
TEST(DriverAggregatorTest, ConcurrentIngestFlameGraphsAndScrapes) {
  AggregatorOptions options;
  options.output_dir = TempDir("concurrent");
  auto aggregator = StartOrDie(options);
  std::vector<std::vector<uint8_t>> batches;
  for (int stage = 0; stage < 4; ++stage) {
    batches.push_back(MakeBatch(
        std::to_string(stage),
        {{kSerializationStack, stage, fb::Category::serialization, 10},
         {{"Main.compute", "f" + std::to_string(stage)}, stage, fb::Category::compute, 5}}));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) aggregator->Ingest(batches[(i + t) % batches.size()]);
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 20; ++i) (void)aggregator->WriteStageFlameGraph(i % 4, 0);
  });
  threads.emplace_back([&] {
    for (int i = 0; i < 50; ++i) aggregator->registry().Render();
  });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(aggregator->outcome_count(IngestOutcome::kAccepted), 400u);
  uint64_t total = 0;
  for (int stage = 0; stage < 4; ++stage) total += aggregator->StageWeightNs({stage, 0});
  EXPECT_EQ(total, 400u * 15);
  std::filesystem::remove_all(options.output_dir);
}

// The output directory may be shared (/tmp/sparkprof): a symlink planted at the saved profile's
// name is refused, its target untouched. (Flame graphs and reports go through
// WriteFileAtomically, tested in native-agent/profile_writers_test.cc.)
TEST(DriverAggregatorTest, OutputFilesNeverFollowAPlantedSymlink) {
  std::string directory =
      ::testing::TempDir() + "/sparkprof_driver_symlink." + std::to_string(::getpid());
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  std::string victim = directory + "/victim";
  std::ofstream(victim) << "precious\n";
  std::string path = directory + "/profile.sparkprof";
  std::filesystem::create_symlink(victim, path);
  ProfileFileWriter writer(1 << 20);
  Status opened = writer.Open(path);
  EXPECT_FALSE(opened.ok());
  EXPECT_NE(opened.message().find("symbolic link"), std::string::npos) << opened.message();
  std::ifstream in(victim);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_EQ(contents.str(), "precious\n");
  std::filesystem::remove_all(directory);
}

// The output directory itself planted as a symlink by another user (in a shared /tmp), pointing at
// a directory that passes the owner check (root's): refused, nothing written there. One this
// user made is followed. Needs root (lchown) to plant as another user.
TEST(DriverAggregatorTest, OutputDirectorySymlinkPlantedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "planting a symlink as another user needs root";
  std::string directory =
      ::testing::TempDir() + "/sparkprof_driver_outlink." + std::to_string(::getpid());
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory + "/target");
  const std::string link = directory + "/sparkprof-root";
  std::filesystem::create_symlink(directory + "/target", link);
  Status own = UsableOutputDirectory(link);
  EXPECT_TRUE(own.ok()) << own.message();  // made by this user: followed
  ASSERT_EQ(::lchown(link.c_str(), 4321, 4321), 0);
  Status planted = UsableOutputDirectory(link + "/");
  ASSERT_FALSE(planted.ok());
  EXPECT_NE(planted.message().find("symbolic link made by another user (uid 4321)"),
            std::string::npos)
      << planted.message();
  AggregatorOptions options;
  options.output_dir = link;
  auto aggregator = DriverAggregator::Start(options);
  EXPECT_FALSE(aggregator.ok());
  EXPECT_TRUE(std::filesystem::is_empty(directory + "/target"));
  std::filesystem::remove_all(directory);
}

// The application's directory under a shared output directory: one planted before the
// application starts (a symlink, a file, another user's directory) is refused with the reason;
// an output directory every user may write to without the sticky bit is refused as a whole.
TEST(DriverAggregatorTest, ApplicationDirectoryPlantedByAnotherUserIsRefused) {
  std::string directory =
      ::testing::TempDir() + "/sparkprof_driver_planted." + std::to_string(::getpid());
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory + "/elsewhere");
  std::filesystem::create_symlink(directory + "/elsewhere", directory + "/app-link");
  std::ofstream(directory + "/app-file") << "x";
  AggregatorOptions options;
  options.output_dir = directory;
  auto aggregator = StartOrDie(options);
  Status linked = aggregator->SetApplication("app-link", "demo");
  EXPECT_NE(linked.message().find("app-link is a symbolic link"), std::string::npos)
      << linked.message();
  Status file = aggregator->SetApplication("app-file", "demo");
  EXPECT_NE(file.message().find("is not a directory"), std::string::npos) << file.message();
  EXPECT_TRUE(aggregator->SetApplication("app-own", "demo").ok());
  EXPECT_TRUE(std::filesystem::is_directory(directory + "/app-own"));
  if (::geteuid() == 0) {  // only root can make a directory look like another user's
    std::filesystem::create_directories(directory + "/app-theirs");
    ASSERT_EQ(::chown((directory + "/app-theirs").c_str(), 54321, 54321), 0);
    Status theirs = aggregator->SetApplication("app-theirs", "demo");
    EXPECT_NE(theirs.message().find("belongs to another user (uid 54321)"), std::string::npos)
        << theirs.message();
  }
  std::filesystem::permissions(directory, std::filesystem::perms::all);  // 0777, no sticky bit
  Status open_to_all = aggregator->SetApplication("app-new", "demo");
  EXPECT_NE(open_to_all.message().find("writable by every user without the sticky bit"),
            std::string::npos)
      << open_to_all.message();
  EXPECT_FALSE(std::filesystem::exists(directory + "/app-new"));
  auto refused = DriverAggregator::Start(options);  // such a directory is refused from the start
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("(set spark.sparkprof.outputDir)"), std::string::npos)
      << refused.status().message();
  std::filesystem::permissions(directory, std::filesystem::perms::sticky_bit,
                               std::filesystem::perm_options::add);  // like /tmp
  EXPECT_TRUE(aggregator->SetApplication("app-new", "demo").ok());
  EXPECT_TRUE(DriverAggregator::Start(options).ok());
  std::filesystem::remove_all(directory);
}

// A second driver on the host finds the port taken: it runs on without /metrics and says why.
TEST(DriverAggregatorTest, ServesMetricsOverHttpAndRunsOnWithoutAFreePort) {
  AggregatorOptions options;
  options.prometheus_bind_address = "127.0.0.1:0";
  auto aggregator = StartOrDie(options);
  EXPECT_GT(aggregator->port(), 0);
  EXPECT_EQ(aggregator->metrics_error(), "");
  EXPECT_NE(aggregator->StatusJson().find("\"port\":"), std::string::npos);
  options.prometheus_bind_address = "127.0.0.1:" + std::to_string(aggregator->port());
  auto second = StartOrDie(options);
  EXPECT_EQ(second->port(), -1);
  EXPECT_NE(second->metrics_error().find("cannot listen on"), std::string::npos);
  EXPECT_NE(second->StatusJson().find("\"metrics_error\":\"cannot listen"), std::string::npos)
      << second->StatusJson();
}

// The plugin's stop() destroys the aggregator: a client dripping its request (one byte every
// 200 ms, for 8 s) once held it, and the JVM's exit, until it stopped dripping.
TEST(DriverAggregatorTest, StopsPromptlyWhileAMetricsClientDrips) {
  AggregatorOptions options;
  options.prometheus_bind_address = "127.0.0.1:0";
  auto aggregator = StartOrDie(options);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(aggregator->port()));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  std::thread dripper([fd] {
    for (char c : std::string("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")) {
      if (send(fd, &c, 1, MSG_NOSIGNAL) != 1) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  auto start = std::chrono::steady_clock::now();
  aggregator.reset();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);  // generous: it closes the socket at once
  dripper.join();
  close(fd);
}

// Spark's dispatcher thread only queues (Enqueue); the ingest thread folds, and a drain at
// shutdown sees every batch queued before it.
IngestOutcome EnqueueCopy(DriverAggregator& aggregator, const std::vector<uint8_t>& batch) {
  return aggregator.Enqueue(batch.size(), [&](uint8_t* destination) {
    std::memcpy(destination, batch.data(), batch.size());
    return true;
  });
}

TEST(DriverAggregatorTest, EnqueuedBatchesAreFoldedOnTheIngestThreadAndDrained) {
  auto aggregator = StartOrDie({});
  auto batch = MakeBatch("1", {{kSerializationStack, 3, fb::Category::serialization, 1000},
                               {{"Main.compute"}, 3, fb::Category::compute, 500}});
  int queued = 0;
  for (int i = 0; i < 300; ++i) {
    IngestOutcome outcome = EnqueueCopy(*aggregator, batch);
    if (outcome == IngestOutcome::kAccepted) ++queued;
    ASSERT_TRUE(outcome == IngestOutcome::kAccepted || outcome == IngestOutcome::kQueueFull);
  }
  ASSERT_TRUE(aggregator->DrainIngestQueue(std::chrono::seconds(60)));
  EXPECT_EQ(aggregator->StageWeightNs({3, 0}), 1500u * static_cast<uint64_t>(queued));
  EXPECT_EQ(aggregator->outcome_count(IngestOutcome::kAccepted), static_cast<uint64_t>(queued));
  EXPECT_EQ(aggregator->outcome_count(IngestOutcome::kQueueFull),
            static_cast<uint64_t>(300 - queued));
  // A bad batch is queued like any other and counted when the ingest thread looks at it.
  EXPECT_EQ(EnqueueCopy(*aggregator, std::vector<uint8_t>(64, 0x5a)), IngestOutcome::kAccepted);
  ASSERT_TRUE(aggregator->DrainIngestQueue(std::chrono::seconds(60)));
  EXPECT_EQ(aggregator->outcome_count(IngestOutcome::kInvalid), 1u);
}

// 200 distinct stacks of stage 7, 5 us each: 1 ms of the stage's time.
std::vector<uint8_t> MillisecondOfStageSeven() {
  std::vector<SampleSpec> samples;
  for (int i = 0; i < 200; ++i) {
    samples.push_back({{"Main.run", "f" + std::to_string(i)}, 7, fb::Category::compute, 5000});
  }
  return MakeBatch("1", samples);
}

// The end-of-application report reads the saved profile back (as `analyze --profile` does): the
// profile rules see the executors' samples; batches arriving after it are counted, not appended,
// so the file stays what the report read.
TEST(DriverAggregatorTest, TheReportReadsTheProfileAndTheFileIsSealedAfterIt) {
  AggregatorOptions options;
  options.output_dir = TempDir("profile_report");
  options.live_extend_to_now = false;
  auto aggregator = StartOrDie(options);
  ASSERT_TRUE(aggregator->SetApplication("app-1", "profiled").ok());
  // 2 s of stage 5 in Java serialization (200 samples at 10 ms): enough to judge.
  ASSERT_EQ(aggregator->Ingest(MakeBatch(
                "1", {{kSerializationStack, 5, fb::Category::serialization, 2'000'000'000}})),
            IngestOutcome::kAccepted);
  auto paths = aggregator->FinishApplication();
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  const std::string profile_path = aggregator->OutputDirectory() + "/profile.sparkprof";
  const std::string saved = ReadAll(profile_path);
  const std::string report = ReadAll(aggregator->OutputDirectory() + "/report.json");
  EXPECT_NE(report.find("\"serialization-bound\""), std::string::npos) << report;
  EXPECT_NE(report.find("\"off_cpu_sampled\": false"), std::string::npos);
  EXPECT_NE(report.find(profile_path), std::string::npos);  // profile.source
  ASSERT_EQ(aggregator->Ingest(MakeBatch("2", {{{"Main.run"}, 5, fb::Category::compute, 500}})),
            IngestOutcome::kAccepted);
  EXPECT_EQ(ReadAll(profile_path), saved);
  EXPECT_NE(aggregator->StatusJson().find("\"profile_file_batches_after_report\":1"),
            std::string::npos)
      << aggregator->StatusJson();
  std::filesystem::remove_all(options.output_dir);
}

// Issue 33: while the driver writes the profile, profile.sparkprof.inprogress says so (a driver
// killed mid-run leaves it, and readers name it); the report's end removes it. Batches that came
// before the application's id was known are moved into its profile, not left in the top of the
// output directory as a stray half-profile.
TEST(DriverAggregatorTest, ProfileInProgressMarkerAndEarlyBatchesJoinTheApplication) {
  AggregatorOptions options;
  options.output_dir = TempDir("profile_marker");
  options.live_extend_to_now = false;
  auto aggregator = StartOrDie(options);
  const std::string top = options.output_dir + "/profile.sparkprof";
  ASSERT_EQ(aggregator->Ingest(MakeBatch(
                "1", {{kSerializationStack, 5, fb::Category::serialization, 1'000'000'000}})),
            IngestOutcome::kAccepted);
  EXPECT_TRUE(std::filesystem::exists(top));
  EXPECT_TRUE(std::filesystem::exists(top + ".inprogress"));
  ASSERT_TRUE(aggregator->SetApplication("app-1", "early").ok());
  const std::string own = aggregator->OutputDirectory() + "/profile.sparkprof";
  EXPECT_FALSE(std::filesystem::exists(top));
  EXPECT_FALSE(std::filesystem::exists(top + ".inprogress"));
  EXPECT_TRUE(std::filesystem::exists(own + ".inprogress"));
  ASSERT_EQ(aggregator->Ingest(MakeBatch(
                "1", {{kSerializationStack, 5, fb::Category::serialization, 1'000'000'000}})),
            IngestOutcome::kAccepted);
  ASSERT_TRUE(aggregator->WriteStageFlameGraph(5, 0).ok());  // flushes the file
  Result<profile::ApplicationProfile> running = profile::LoadApplicationProfile(own);
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_EQ(running->batches_read, 2u);  // the batch from before the id, and the one after
  ASSERT_FALSE(running->problems.empty());
  EXPECT_NE(running->problems[0].find("the driver had not finished this profile"),
            std::string::npos)
      << running->problems[0];
  ASSERT_TRUE(aggregator->FinishApplication().ok());
  EXPECT_FALSE(std::filesystem::exists(own + ".inprogress"));
  const std::string report = ReadAll(aggregator->OutputDirectory() + "/report.json");
  EXPECT_EQ(report.find("had not finished"), std::string::npos);
  Result<profile::ApplicationProfile> finished = profile::LoadApplicationProfile(own);
  ASSERT_TRUE(finished.ok());
  EXPECT_TRUE(finished->problems.empty());
  std::filesystem::remove_all(options.output_dir);
}

// A stage's flame graph, asked for right after its batches were queued, holds all of them: the
// queue is drained first (400 batches cannot all be folded by the time the call starts).
TEST(DriverAggregatorTest, StageFlameGraphHoldsTheBatchesQueuedBeforeIt) {
  AggregatorOptions options;
  options.output_dir = TempDir("drain_flame");
  options.max_profile_file_bytes = 0;
  auto aggregator = StartOrDie(options);
  const std::vector<uint8_t> batch = MillisecondOfStageSeven();
  constexpr int kBatches = 400;
  for (int i = 0; i < kBatches; ++i) {
    ASSERT_EQ(EnqueueCopy(*aggregator, batch), IngestOutcome::kAccepted);
  }
  auto path = aggregator->WriteStageFlameGraph(7, 0);
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_NE(ReadAll(*path).find("0.400 s sampled task time"), std::string::npos);
  EXPECT_EQ(aggregator->StageWeightNs({7, 0}), 1'000'000u * kBatches);
  std::filesystem::remove_all(options.output_dir);
}

// The drain before a stage's flame graph is bounded (flamegraph_drain_timeout_ms, here 0: no
// wait): with a full queue still to fold, the graph is written at once from what was folded, and
// the batches left are folded afterwards, none lost.
TEST(DriverAggregatorTest, StageFlameGraphWaitsNoLongerThanTheDrainTimeout) {
  AggregatorOptions options;
  options.output_dir = TempDir("drain_timeout");
  options.max_profile_file_bytes = 0;
  options.flamegraph_drain_timeout_ms = 0;
  auto aggregator = StartOrDie(options);
  const std::vector<uint8_t> batch = MillisecondOfStageSeven();
  ASSERT_EQ(EnqueueCopy(*aggregator, batch), IngestOutcome::kAccepted);
  ASSERT_TRUE(aggregator->DrainIngestQueue(std::chrono::seconds(60)));  // the stage is known
  constexpr int kBatches = 1000;
  for (int i = 0; i < kBatches; ++i) {
    ASSERT_EQ(EnqueueCopy(*aggregator, batch), IngestOutcome::kAccepted);
  }
  auto path = aggregator->WriteStageFlameGraph(7, 0);
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  const std::string html = ReadAll(*path);
  const size_t at = html.find(" s sampled task time");
  ASSERT_NE(at, std::string::npos);
  size_t number = at;
  while (number > 0 &&
         (std::isdigit(static_cast<unsigned char>(html[number - 1])) || html[number - 1] == '.')) {
    --number;
  }
  // Batches (1 ms each) in the graph.
  const long written = std::lround(1000 * std::stod(html.substr(number, at - number)));
  EXPECT_GE(written, 1);
  // 1,000 batches take the ingest thread far longer to fold than the call takes to return.
  EXPECT_LT(written, kBatches + 1);
  ASSERT_TRUE(aggregator->DrainIngestQueue(std::chrono::seconds(60)));
  EXPECT_EQ(aggregator->StageWeightNs({7, 0}), 1'000'000u * (kBatches + 1));
  std::filesystem::remove_all(options.output_dir);
}

TEST(DriverAggregatorTest, IngestQueueBytesLimitAtAndPastItIsCountedAsQueueFull) {
  auto batch = MakeBatch("1", {{kSerializationStack, 3, fb::Category::serialization, 1000}});
  AggregatorOptions options;
  options.ingest_queue.max_bytes = batch.size();  // exactly one batch
  auto aggregator = StartOrDie(options);
  EXPECT_EQ(EnqueueCopy(*aggregator, batch), IngestOutcome::kAccepted);  // at the limit
  ASSERT_TRUE(aggregator->DrainIngestQueue(std::chrono::seconds(60)));
  std::vector<uint8_t> larger = batch;
  larger.push_back(0);  // one byte past it
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(EnqueueCopy(*aggregator, larger), IngestOutcome::kQueueFull);
  ASSERT_TRUE(aggregator->DrainIngestQueue(std::chrono::seconds(60)));
  EXPECT_EQ(aggregator->StageWeightNs({3, 0}), 1000u);
  std::string text = aggregator->registry().Render();
  EXPECT_NE(text.find("sparkprof_driver_batches_total{outcome=\"queue_full\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(aggregator->StatusJson().find("\"dropped_full\":3"), std::string::npos)
      << aggregator->StatusJson();
}

// As at JVM exit: the plugin's stop() lets go of the aggregator while the dispatcher floods it
// (the JNI side holds it through a shared_ptr per call). Nothing may hang.
TEST(DriverAggregatorTest, StopMidFloodNeitherDeadlocksNorLosesTheProcess) {
  auto finished = std::async(std::launch::async, [] {
    auto batch = MakeBatch("1", {{kSerializationStack, 3, fb::Category::serialization, 1000}});
    AggregatorOptions options;
    options.ingest_queue.max_batches = 16;
    std::mutex lifecycle;
    std::shared_ptr<DriverAggregator> current(StartOrDie(options));
    auto get = [&] {
      std::lock_guard<std::mutex> lock(lifecycle);
      return current;
    };
    std::atomic<uint64_t> queued{0};
    std::vector<std::thread> producers;
    for (int p = 0; p < 3; ++p) {
      producers.emplace_back([&] {
        while (std::shared_ptr<DriverAggregator> aggregator = get()) {
          if (EnqueueCopy(*aggregator, batch) == IngestOutcome::kAccepted) ++queued;
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    {
      std::lock_guard<std::mutex> lock(lifecycle);
      current.reset();  // the last producer call destroys it: stops the ingest thread
    }
    for (auto& producer : producers) producer.join();
    return queued.load();
  });
  ASSERT_EQ(finished.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "deadlock at stop";
  EXPECT_GT(finished.get(), 0u);
}

}  // namespace
}  // namespace sparkprof::driver

namespace sparkprof::driver {
namespace {

// The diff page's data: the viewer's JSON block holds the after attempt's frames and, under
// "diff", the before attempt's totals per node.
bool HasFrame(const std::string& html, const std::string& frame) {
  return html.find("\"" + frame + "\"") != std::string::npos;
}

TEST(DriverAggregatorTest, StageDiffLiveAndFromTheSavedProfileAreTheSamePage) {
  AggregatorOptions options;
  options.output_dir = TempDir("diff");
  auto aggregator = StartOrDie(options);
  ASSERT_TRUE(aggregator->SetApplication("app-diff", "diff").ok());
  // Stage 5: mostly serialization; stage 6: mostly a compute frame that stage 5 lacks.
  ASSERT_EQ(aggregator->Ingest(MakeBatch(
                "1", {{kSerializationStack, 5, fb::Category::serialization, 3'000'000},
                      {{"Main.run", "Main.parse"}, 5, fb::Category::compute, 1'000'000},
                      {{"Main.run", "Main.grow"}, 6, fb::Category::compute, 9'000'000},
                      {{"Main.run", "Main.parse"}, 6, fb::Category::compute, 1'000'000}})),
            IngestOutcome::kAccepted);
  ASSERT_TRUE(aggregator->DrainIngestQueue(std::chrono::seconds(10)));
  Result<std::string> live = aggregator->StageDiffHtml({5, 0}, {6, 0});
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  EXPECT_NE(live->find("sparkprof diff: stage 5 (attempt 0) → stage 6 (attempt 0)"),
            std::string::npos);
  EXPECT_NE(live->find("\"diff\":"), std::string::npos);  // the viewer colours by change
  EXPECT_TRUE(HasFrame(*live, "Main.grow"));              // the after attempt's tree is drawn
  EXPECT_EQ(aggregator->StageDiffHtml({5, 0}, {7, 0}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(aggregator->StageDiffHtml({8, 1}, {6, 0}).status().code(), StatusCode::kNotFound);

  ASSERT_TRUE(aggregator->WriteStageFlameGraph(5, 0).ok());  // flushes the profile file
  const std::string bytes = ReadAll(aggregator->OutputDirectory() + "/profile.sparkprof");
  Result<std::string> saved =
      RenderStageDiffFromProfile(bytes, "profile.sparkprof", {5, 0}, {6, 0});
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(*saved, *live);  // the History Server's page is the live one
  Result<std::string> reversed =
      RenderStageDiffFromProfile(bytes, "profile.sparkprof", {6, 0}, {5, 0});
  ASSERT_TRUE(reversed.ok());
  EXPECT_FALSE(HasFrame(*reversed, "Main.grow"));  // stage 5's tree now, which lacks it
  EXPECT_FALSE(RenderStageDiffFromProfile(bytes, "p", {5, 0}, {9, 0}).ok());
  EXPECT_FALSE(RenderStageDiffFromProfile("not a profile", "p", {5, 0}, {6, 0}).ok());
  std::filesystem::remove_all(options.output_dir);
}

}  // namespace
}  // namespace sparkprof::driver
