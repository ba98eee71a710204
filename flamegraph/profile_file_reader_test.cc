#include "flamegraph/profile_file_reader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "flamegraph/profile_loader.h"
#include "schema/profile_generated.h"

namespace sparkprof::flamegraph {
namespace {

struct SampleSpec {
  uint32_t stack;
  int32_t stage;
  schema::Category category;
  uint64_t samples;
};

// A monitor-wait row by raw indices (a test may name ones the batch does not hold).
struct MonitorSpec {
  int32_t stage;
  uint32_t monitor_class;
  int32_t waiter_stack;
  int32_t holder_stack;
  int32_t holder_thread;
  uint64_t waits;
  uint64_t wait_ms;
};

// One size-prefixed Batch, as the agent writes them.
std::string MakeBatch(const std::vector<std::string>& strings,
                      const std::vector<std::vector<uint32_t>>& stacks,
                      const std::vector<SampleSpec>& samples,
                      const std::vector<MonitorSpec>& monitor_waits = {}) {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<flatbuffers::Offset<schema::Stack>> stack_offsets;
  for (const auto& frames : stacks) {
    stack_offsets.push_back(schema::CreateStackDirect(builder, &frames));
  }
  std::vector<flatbuffers::Offset<schema::StackSample>> sample_offsets;
  for (const SampleSpec& s : samples) {
    sample_offsets.push_back(schema::CreateStackSample(
        builder, s.stack, s.stage, 0, 42, 0, s.category, s.samples, s.samples * 10'000'000));
  }
  std::vector<flatbuffers::Offset<schema::MonitorWait>> monitor_offsets;
  for (const MonitorSpec& row : monitor_waits) {
    monitor_offsets.push_back(schema::CreateMonitorWait(
        builder, row.stage, 0, row.monitor_class, row.waiter_stack, row.holder_stack,
        row.holder_thread, row.waits, row.wait_ms * 1'000'000));
  }
  std::vector<flatbuffers::Offset<flatbuffers::String>> string_offsets;
  for (const std::string& text : strings) string_offsets.push_back(builder.CreateString(text));
  auto batch = schema::CreateBatchDirect(builder, 1, "exec-1", "host", 123, 0, 1, 10'000'000, "cpu",
                                         &string_offsets, &stack_offsets, &sample_offsets, nullptr,
                                         nullptr, 0, nullptr, 0, 0,
                                         monitor_waits.empty() ? nullptr : &monitor_offsets);
  schema::FinishSizePrefixedBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

std::string TwoBatchFile() {
  return MakeBatch({"java/lang/Thread.run", "com/esotericsoftware/kryo/Kryo.writeObject",
                    "org/apache/hadoop/fs/s3a/S3ABlockOutputStream.write"},
                   {{0, 1}, {0, 2}},
                   {{0, 3, schema::Category::serialization, 40},
                    {1, 3, schema::Category::s3a_write, 60},
                    {1, 5, schema::Category::s3a_write, 7}}) +
         MakeBatch({"java/lang/Thread.run", "other"}, {{0, 1}},
                   {{0, 3, schema::Category::compute, 10}});
}

struct Loaded {
  Status status;
  ProfileModel model;
  ReadReport report;
  ProfileFileSummary summary;
};

Loaded Read(const std::string& bytes, ProfileFileReadOptions options = {}) {
  Loaded loaded{Status::Ok(), ProfileModel(options.weight), {}, {}};
  options.source_name = "test.sparkprof";
  loaded.status = ReadProfileFile(bytes, options, loaded.model, loaded.report, &loaded.summary);
  return loaded;
}

TEST(ProfileFileReaderTest, ReadsEveryBatch) {
  std::string file = TwoBatchFile();
  EXPECT_TRUE(LooksLikeProfileFile(file));
  EXPECT_EQ(DetectProfileFormat(file), ProfileFormat::kProfileFile);
  Loaded loaded = Read(file);
  ASSERT_TRUE(loaded.status.ok()) << loaded.status.ToString();
  EXPECT_EQ(loaded.report.problem_count, 0u);
  EXPECT_EQ(loaded.summary.batches_read, 2u);
  EXPECT_EQ(loaded.model.total_weight(), 117u);
  EXPECT_EQ(loaded.model.category_totals()[CategoryIndex(Category::kS3aWrite)], 67u);
  EXPECT_EQ(loaded.summary.stage_ids, (std::set<int32_t>{3, 5}));
}

TEST(ProfileFileReaderTest, FiltersByStageAndCategoryAndWeighsByTime) {
  ProfileFileReadOptions options;
  options.stage_id = 3;
  options.category = Category::kS3aWrite;
  Loaded loaded = Read(TwoBatchFile(), options);
  ASSERT_TRUE(loaded.status.ok());
  EXPECT_EQ(loaded.model.total_weight(), 60u);
  EXPECT_EQ(loaded.summary.samples_filtered, 3u);

  ProfileFileReadOptions by_time;
  by_time.weight = WeightUnit::kNanoseconds;
  Loaded timed = Read(TwoBatchFile(), by_time);
  EXPECT_EQ(timed.model.total_weight(), 117u * 10'000'000);
  EXPECT_EQ(timed.model.unit(), WeightUnit::kNanoseconds);
}

TEST(ProfileFileReaderTest, CorruptBatchIsSkippedAndNamedByOffset) {
  std::string first = MakeBatch({"a"}, {{0}}, {{0, 1, schema::Category::compute, 5}});
  std::string second = MakeBatch({"b"}, {{0}}, {{0, 1, schema::Category::compute, 7}});
  std::string corrupt = second;
  // Point the root table offset far outside the buffer.
  corrupt[4] = '\xff';
  corrupt[5] = '\xff';
  Loaded loaded = Read(first + corrupt + second);
  ASSERT_TRUE(loaded.status.ok());
  EXPECT_EQ(loaded.summary.batches_read, 2u);
  EXPECT_EQ(loaded.summary.batches_skipped, 1u);
  EXPECT_EQ(loaded.model.total_weight(), 12u);
  ASSERT_EQ(loaded.report.messages.size(), 1u);
  EXPECT_NE(loaded.report.messages[0].find("test.sparkprof: byte " + std::to_string(first.size())),
            std::string::npos)
      << loaded.report.messages[0];
  EXPECT_NE(loaded.report.messages[0].find("verification"), std::string::npos);
}

TEST(ProfileFileReaderTest, TruncatedFileKeepsWhatCameBefore) {
  std::string file = TwoBatchFile();
  Loaded loaded = Read(file.substr(0, file.size() - 9));
  ASSERT_TRUE(loaded.status.ok());
  EXPECT_EQ(loaded.summary.batches_read, 1u);
  EXPECT_EQ(loaded.model.total_weight(), 107u);
  ASSERT_EQ(loaded.report.messages.size(), 1u);
  EXPECT_NE(loaded.report.messages[0].find("truncated"), std::string::npos);

  Loaded stub = Read(file.substr(0, 2));
  EXPECT_FALSE(stub.status.ok());
  EXPECT_NE(stub.status.message().find("byte 0"), std::string::npos) << stub.status.message();
}

TEST(ProfileFileReaderTest, OversizedBatchIsRefusedBeforeVerification) {
  std::string batch = MakeBatch({"a"}, {{0}}, {{0, 1, schema::Category::compute, 5}});
  ProfileFileReadOptions options;
  options.max_batch_bytes = 16;
  Loaded loaded = Read(batch, options);
  EXPECT_FALSE(loaded.status.ok());
  EXPECT_NE(loaded.status.message().find("more than the limit"), std::string::npos);

  // A size prefix claiming 4 GiB in a tiny file.
  std::string huge = batch;
  huge[0] = huge[1] = huge[2] = huge[3] = '\xff';
  Loaded claimed = Read(huge);
  EXPECT_FALSE(claimed.status.ok());
  EXPECT_NE(claimed.status.message().find("declares 4294967295 bytes"), std::string::npos);
}

// ProfileFileReadOptions limits (docs/limits.md), each at the limit and one past it.
TEST(ProfileFileReaderTest, BatchAndStackDepthLimitsAtAndPastTheLimit) {
  std::string batch =
      MakeBatch({"a", "b", "c"}, {{0, 1, 2}}, {{0, 1, schema::Category::compute, 5}});
  const uint32_t declared = static_cast<uint32_t>(batch.size()) - 4;  // after the size prefix
  ProfileFileReadOptions options;
  options.max_batch_bytes = declared;
  options.max_frames_per_stack = 3;
  Loaded at = Read(batch, options);
  ASSERT_TRUE(at.status.ok()) << at.status.ToString();
  EXPECT_EQ(at.model.total_weight(), 5u);
  EXPECT_EQ(at.report.problem_count, 0u);
  options.max_batch_bytes = declared - 1;
  Loaded batch_past = Read(batch, options);
  EXPECT_FALSE(batch_past.status.ok());
  EXPECT_NE(batch_past.status.message().find("more than the limit"), std::string::npos);
  options.max_batch_bytes = declared;
  options.max_frames_per_stack = 2;
  Loaded deep =
      Read(batch + MakeBatch({"x"}, {{0}}, {{0, 1, schema::Category::compute, 1}}), options);
  ASSERT_TRUE(deep.status.ok()) << deep.status.ToString();
  EXPECT_EQ(deep.model.total_weight(), 1u);  // the 3-frame stack skipped, the 1-frame one read
  EXPECT_EQ(deep.report.problem_count, 1u);
}

TEST(ProfileFileReaderTest, BadIndicesAndCategoriesAreCountedNotTrusted) {
  std::string batch = MakeBatch({"a"}, {{0, 7}, {0}},
                                {{9, 1, schema::Category::compute, 1},  // no stack 9
                                 {0, 1, schema::Category::compute, 2},  // string 7 missing
                                 {1, 1, static_cast<schema::Category>(200), 4}});
  Loaded loaded = Read(batch);
  ASSERT_TRUE(loaded.status.ok());
  EXPECT_EQ(loaded.model.total_weight(), 4u);
  EXPECT_EQ(loaded.model.category_totals()[CategoryIndex(Category::kOther)], 4u);
  EXPECT_EQ(loaded.report.problem_count, 2u);
}

// What a receiver saw of the rows, copied out of the views (which live only for the call).
struct SeenMonitorWait {
  int32_t stage;
  std::string monitor_class;
  std::vector<std::string> waiter;
  bool holder_looked;
  std::vector<std::string> holder;
  std::string thread;
  uint64_t waits;
  uint64_t wait_ns;
};

void KeepMonitorWait(void* context, const MonitorWaitRow& row) {
  auto* seen = static_cast<std::vector<SeenMonitorWait>*>(context);
  seen->push_back({row.stage_id, std::string(row.monitor_class),
                   std::vector<std::string>(row.waiter_frames.begin(), row.waiter_frames.end()),
                   row.holder_looked,
                   std::vector<std::string>(row.holder_frames.begin(), row.holder_frames.end()),
                   std::string(row.holder_thread), row.waits, row.wait_ns});
}

const std::vector<std::string> kMonitorStrings = {
    "java.lang.Thread.run", "com.acme.Job.lockedWork", "com.acme.SharedScorer.score",
    "com.acme.SharedScorer", "Executor task launch worker"};

// Batches with monitor-wait rows only.
std::string MonitorBatch(const std::vector<std::string>& strings,
                         const std::vector<std::vector<uint32_t>>& stacks,
                         const std::vector<MonitorSpec>& rows) {
  return MakeBatch(strings, stacks, {}, rows);
}

std::string MonitorFile() {
  return MonitorBatch(kMonitorStrings, {{0, 1}, {0, 1, 2}},
                      {{3, 3, 0, 1, 4, 40, 300},     // waiter and holder, owner's thread known
                       {3, 3, 0, -1, -1, 12, 90},    // the owner not looked at
                       {5, 3, -1, -1, -1, 1, 2}}) +  // no stack taken at all
         MonitorBatch(kMonitorStrings, {{0, 1}}, {{3, 3, 0, -1, 4, 8, 60}});
}

TEST(ProfileFileReaderTest, MonitorWaitRowsAreResolvedAndFilteredByStage) {
  std::vector<SeenMonitorWait> seen;
  ProfileFileReadOptions options;
  options.monitor_waits = &KeepMonitorWait;
  options.monitor_waits_context = &seen;
  Loaded loaded = Read(MonitorFile(), options);
  ASSERT_TRUE(loaded.status.ok()) << loaded.status.ToString();
  EXPECT_EQ(loaded.report.problem_count, 0u);
  EXPECT_EQ(loaded.summary.monitor_wait_rows_read, 4u);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].stage, 3);
  EXPECT_EQ(seen[0].monitor_class, "com.acme.SharedScorer");
  EXPECT_EQ(seen[0].waiter,
            (std::vector<std::string>{"java.lang.Thread.run", "com.acme.Job.lockedWork"}));
  EXPECT_TRUE(seen[0].holder_looked);
  EXPECT_EQ(seen[0].holder.back(), "com.acme.SharedScorer.score");
  EXPECT_EQ(seen[0].thread, "Executor task launch worker");
  EXPECT_EQ(seen[0].waits, 40u);
  EXPECT_EQ(seen[0].wait_ns, 300'000'000u);
  EXPECT_FALSE(seen[1].holder_looked);
  EXPECT_TRUE(seen[1].holder.empty());
  EXPECT_EQ(seen[1].thread, "");
  EXPECT_TRUE(seen[2].waiter.empty());
  EXPECT_EQ(seen[3].wait_ns, 60'000'000u);
  // Samples alone: none here, and the rows go to the receiver only.
  EXPECT_EQ(loaded.model.total_weight(), 0u);

  seen.clear();
  options.stage_id = 5;
  Loaded stage_five = Read(MonitorFile(), options);
  ASSERT_TRUE(stage_five.status.ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].stage, 5);

  // Without a receiver the rows are not read.
  Loaded unread = Read(MonitorFile());
  EXPECT_EQ(unread.summary.monitor_wait_rows_read, 0u);
}

// Every index a row holds is checked against its batch: a row naming a class, stack, frame or
// thread the batch does not hold is skipped and counted (one warning per batch, at its offset);
// a stack past max_frames_per_stack is skipped with a warning at its offset; the rest is read.
TEST(ProfileFileReaderTest, MonitorWaitRowsWithBadIndicesOrDeepStacksAreSkippedAndNamed) {
  const std::string good = MonitorBatch(kMonitorStrings, {{0, 1}}, {{3, 3, 0, -1, -1, 1, 10}});
  const std::string hostile = MonitorBatch(kMonitorStrings, {{0, 1}, {0, 99}, {0, 1, 2}},
                                           {{3, 99, 0, -1, -1, 1, 1},  // no string 99
                                            {3, 3, 7, -1, -1, 1, 1},   // no stack 7
                                            {3, 3, -2, -1, -1, 1, 1},  // -2 is no "not taken"
                                            {3, 3, 0, 1, -1, 1, 1},    // frame string 99
                                            {3, 3, 0, -1, 5, 1, 1},    // no thread string 5
                                            {3, 3, 0, -1, -7, 1, 1},   // nor -7
                                            {3, 3, 2, -1, -1, 1, 1},   // 3 frames: too deep
                                            {3, 3, 0, 0, 4, 2, 20}});  // good
  std::vector<SeenMonitorWait> seen;
  ProfileFileReadOptions options;
  options.monitor_waits = &KeepMonitorWait;
  options.monitor_waits_context = &seen;
  options.max_frames_per_stack = 2;
  Loaded loaded = Read(good + hostile, options);
  ASSERT_TRUE(loaded.status.ok()) << loaded.status.ToString();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].waits, 2u);
  EXPECT_EQ(seen[1].holder, seen[1].waiter);
  ASSERT_EQ(loaded.report.messages.size(), 2u);
  const std::string at = "test.sparkprof: byte " + std::to_string(good.size()) + ": ";
  EXPECT_EQ(loaded.report.messages[0],
            at + "a stack of 3 frames is deeper than the limit of 2; its monitor-wait row is "
                 "skipped");
  EXPECT_EQ(loaded.report.messages[1], at + "6 monitor-wait row(s) refer to a stack or string "
                                            "index outside the batch; skipped");
}

TEST(ProfileFileReaderTest, NotAProfileAtAll) {
  Loaded loaded = Read(std::string(64, 'x'));
  EXPECT_FALSE(loaded.status.ok());
  EXPECT_FALSE(LooksLikeProfileFile("frame;frame 1\n"));
  Loaded empty = Read("");
  EXPECT_FALSE(empty.status.ok());
}

TEST(ProfileLoaderTest, StageNotInFileListsTheStagesThatAre) {
  LoadOptions options;
  options.stage_id = 99;
  auto loaded = LoadProfileFromBytes(TwoBatchFile(), "p.sparkprof", options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("stages in this file: 3 5"), std::string::npos)
      << loaded.status().message();
  // Collapsed text has no stages.
  auto collapsed = LoadProfileFromBytes("a;b 1\n", "p.txt", options);
  ASSERT_FALSE(collapsed.ok());
  EXPECT_EQ(collapsed.status().code(), StatusCode::kInvalidArgument);
}

// Regenerates the fuzzer's seed corpus (flamegraph/fuzz/corpus/profile_file_reader/) when
// SPARKPROF_WRITE_SEED_CORPUS names that directory; otherwise checks the seeds still load.
TEST(ProfileFileReaderTest, SeedCorpus) {
  std::string two_batches = TwoBatchFile();
  std::string bad_refs = MakeBatch({"a"}, {{0, 7}}, {{3, 1, schema::Category::gc, 1}});
  if (const char* directory = std::getenv("SPARKPROF_WRITE_SEED_CORPUS")) {
    std::ofstream(std::string(directory) + "/two_batches.sparkprof", std::ios::binary)
        << two_batches;
    std::ofstream(std::string(directory) + "/bad_references.sparkprof", std::ios::binary)
        << bad_refs;
    std::ofstream(std::string(directory) + "/truncated.sparkprof", std::ios::binary)
        << two_batches.substr(0, two_batches.size() - 5);
    std::ofstream(std::string(directory) + "/monitor_waits.sparkprof", std::ios::binary)
        << two_batches + MonitorFile();
  }
  std::ifstream seed(std::string(SPARKPROF_SOURCE_DIR) +
                         "/flamegraph/fuzz/corpus/profile_file_reader/two_batches.sparkprof",
                     std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(seed)), std::istreambuf_iterator<char>());
  Loaded loaded = Read(bytes);
  EXPECT_TRUE(loaded.status.ok()) << loaded.status.ToString();
  EXPECT_EQ(loaded.model.total_weight(), 117u);
  // The monitor-wait seed (also the stage-profile fuzzer's): its rows are read.
  std::ifstream monitor_seed(
      std::string(SPARKPROF_SOURCE_DIR) +
          "/flamegraph/fuzz/corpus/profile_file_reader/monitor_waits.sparkprof",
      std::ios::binary);
  std::string monitor_bytes((std::istreambuf_iterator<char>(monitor_seed)),
                            std::istreambuf_iterator<char>());
  std::vector<SeenMonitorWait> seen;
  ProfileFileReadOptions options;
  options.monitor_waits = &KeepMonitorWait;
  options.monitor_waits_context = &seen;
  Loaded monitors = Read(monitor_bytes, options);
  EXPECT_TRUE(monitors.status.ok()) << monitors.status.ToString();
  EXPECT_EQ(seen.size(), 4u);
}

}  // namespace
}  // namespace sparkprof::flamegraph
