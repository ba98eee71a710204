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

// One size-prefixed Batch, as the agent writes them.
std::string MakeBatch(const std::vector<std::string>& strings,
                      const std::vector<std::vector<uint32_t>>& stacks,
                      const std::vector<SampleSpec>& samples) {
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
  std::vector<flatbuffers::Offset<flatbuffers::String>> string_offsets;
  for (const std::string& text : strings) string_offsets.push_back(builder.CreateString(text));
  auto batch = schema::CreateBatchDirect(builder, 1, "exec-1", "host", 123, 0, 1, 10'000'000, "cpu",
                                         &string_offsets, &stack_offsets, &sample_offsets);
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
  }
  std::ifstream seed(std::string(SPARKPROF_SOURCE_DIR) +
                         "/flamegraph/fuzz/corpus/profile_file_reader/two_batches.sparkprof",
                     std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(seed)), std::istreambuf_iterator<char>());
  Loaded loaded = Read(bytes);
  EXPECT_TRUE(loaded.status.ok()) << loaded.status.ToString();
  EXPECT_EQ(loaded.model.total_weight(), 117u);
}

}  // namespace
}  // namespace sparkprof::flamegraph
