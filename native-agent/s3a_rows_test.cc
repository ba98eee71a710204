#include "native-agent/s3a_rows.h"

#include <gtest/gtest.h>

#include <vector>

#include "native-agent/batch_encoder.h"
#include "schema/profile_generated.h"

namespace sparkprof::agent {
namespace {

std::vector<int64_t> Row(int64_t stage, int64_t attempt, int64_t tasks, int64_t first_field) {
  std::vector<int64_t> row(kS3aRowLongs, 0);
  row[0] = stage;
  row[1] = attempt;
  row[2] = tasks;
  row[3] = 1;
  for (size_t i = 0; i < kS3aFieldCount; ++i) row[4 + i] = first_field + static_cast<int64_t>(i);
  return row;
}

TEST(S3aRowsTest, KeepsRowsInOrderAndEmptiesOnTake) {
  S3aRows rows;
  std::vector<int64_t> flat = Row(3, 0, 2, 100);
  std::vector<int64_t> executor = Row(-1, -1, 0, 1000);
  flat.insert(flat.end(), executor.begin(), executor.end());
  ASSERT_TRUE(rows.Append(flat, kS3aRowLongs));
  std::vector<S3aRow> taken = rows.Take();
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0].stage_id, 3);
  EXPECT_EQ(taken[0].tasks, 2u);
  EXPECT_TRUE(taken[0].request_counts);
  EXPECT_EQ(taken[0].fields[0], 100u);
  EXPECT_EQ(taken[0].fields[kS3aFieldCount - 1], 100u + kS3aFieldCount - 1);
  EXPECT_EQ(taken[1].stage_id, -1);
  EXPECT_TRUE(rows.Take().empty());
}

TEST(S3aRowsTest, RefusesAnotherLayoutAndClampsHostileValues) {
  S3aRows rows;
  EXPECT_FALSE(rows.Append(std::vector<int64_t>(kS3aRowLongs + 1), kS3aRowLongs + 1));
  EXPECT_FALSE(rows.Append(std::vector<int64_t>(kS3aRowLongs + 1), kS3aRowLongs));
  std::vector<int64_t> hostile = Row(int64_t{1} << 40, -7, -5, -9);
  ASSERT_TRUE(rows.Append(hostile, kS3aRowLongs));
  std::vector<S3aRow> taken = rows.Take();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].stage_id, INT32_MAX);
  EXPECT_EQ(taken[0].stage_attempt, -1);
  EXPECT_EQ(taken[0].tasks, 0u);
  EXPECT_EQ(taken[0].fields[0], 0u);  // -9 -> 0
}

TEST(S3aRowsTest, DropsAndCountsRowsPastTheBound) {
  S3aRows rows(2);
  std::vector<int64_t> flat;
  for (int stage = 0; stage < 5; ++stage) {
    std::vector<int64_t> row = Row(stage, 0, 1, 0);
    flat.insert(flat.end(), row.begin(), row.end());
  }
  ASSERT_TRUE(rows.Append(flat, kS3aRowLongs));
  EXPECT_EQ(rows.Take().size(), 2u);
  EXPECT_EQ(rows.dropped(), 3u);
}

TEST(S3aRowsTest, BatchCarriesTheRowsField_ByField) {
  S3aRows rows;
  ASSERT_TRUE(rows.Append(Row(7, 1, 4, 10), kS3aRowLongs));
  Profile empty(16, 0);
  StringTable strings;
  BatchHeader header{"exec-2", "host", 1, 0, 1, 10'000'000, "cpu"};
  std::vector<uint8_t> bytes = EncodeBatch(header, empty, strings, {}, {}, rows.Take());
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  ASSERT_TRUE(schema::VerifyBatchBuffer(verifier));
  const schema::Batch* batch = schema::GetBatch(bytes.data());
  ASSERT_NE(batch->s3a(), nullptr);
  ASSERT_EQ(batch->s3a()->size(), 1u);
  const schema::S3aStatistics* s3a = batch->s3a()->Get(0);
  EXPECT_EQ(s3a->stage_id(), 7);
  EXPECT_EQ(s3a->stage_attempt(), 1);
  EXPECT_EQ(s3a->tasks(), 4u);
  EXPECT_EQ(s3a->bytes_written(), 10u);
  EXPECT_EQ(s3a->read_operations(), 13u);
  EXPECT_EQ(s3a->multipart_initiated(), 15u);
  EXPECT_EQ(s3a->multipart_parts(), 17u);
  EXPECT_EQ(s3a->throttled(), 24u);
  EXPECT_EQ(s3a->list_ms(), 29u);

  std::vector<uint8_t> none = EncodeBatch(header, empty, strings, {}, {});
  EXPECT_EQ(schema::GetBatch(none.data())->s3a(), nullptr);
}

}  // namespace
}  // namespace sparkprof::agent
