// The executors' S3A rows through the driver: DriverAggregator::Ingest of real flatbuffers batches,
// the spark_s3a_* series, the per-stage totals and the model the report is built from.
#include "driver-aggregator/s3a_io.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver-aggregator/driver_aggregator.h"
#include "flatbuffers/flatbuffers.h"
#include "schema/profile_generated.h"

namespace sparkprof::driver {
namespace {

namespace fb = sparkprof::schema;

struct Row {
  int32_t stage_id;
  int32_t attempt;
  uint64_t tasks;
  bool request_counts;
  uint64_t bytes_written;
  uint64_t multipart_initiated;
  uint64_t parts;
  uint64_t put_ms;
  uint64_t throttled;
};

std::vector<uint8_t> BatchWith(const std::vector<Row>& rows) {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<flatbuffers::Offset<fb::S3aStatistics>> offsets;
  for (const Row& r : rows) {
    fb::S3aStatisticsBuilder row(builder);
    row.add_stage_id(r.stage_id);
    row.add_stage_attempt(r.attempt);
    row.add_tasks(r.tasks);
    row.add_request_counts(r.request_counts);
    row.add_bytes_written(r.bytes_written);
    row.add_multipart_initiated(r.multipart_initiated);
    row.add_multipart_parts(r.parts);
    row.add_put_requests(1);
    row.add_put_ms(r.put_ms);
    row.add_throttled(r.throttled);
    offsets.push_back(row.Finish());
  }
  auto vector = builder.CreateVector(offsets);
  auto executor = builder.CreateString("1");
  fb::BatchBuilder batch(builder);
  batch.add_executor_id(executor);
  batch.add_s3a(vector);
  fb::FinishBatchBuffer(builder, batch.Finish());
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(S3aIoTest, ExecutorRowsMakeTheMetricsAndStageRowsTheStageTotals) {
  auto started = DriverAggregator::Start({});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  DriverAggregator& aggregator = **started;
  std::string before = aggregator.registry().Render();
  EXPECT_TRUE(Has(before, "spark_s3a_bytes_total{direction=\"write\"} 0")) << before;
  EXPECT_TRUE(Has(before, "spark_s3a_requests_total{request=\"multipart_initiate\"} 0"));

  // Two tasks of stage 4 on one executor, one of stage 5; then the executors' JVM totals (which
  // include work outside tasks: the stage rows are never added to the application's).
  ASSERT_EQ(aggregator.Ingest(BatchWith({{4, 0, 2, true, 10 << 20, 2, 6, 900, 0},
                                         {5, 1, 1, true, 1 << 20, 0, 1, 40, 1},
                                         {-1, -1, 0, true, 12 << 20, 2, 7, 1000, 1}})),
            IngestOutcome::kAccepted);
  ASSERT_EQ(aggregator.Ingest(BatchWith({{4, 0, 1, true, 3 << 20, 1, 1, 100, 0},
                                         {-1, -1, 0, true, 3 << 20, 1, 1, 500, 0},
                                         {-1, -1, 7, true, 5, 5, 5, 5, 5}})),  // overflow row
            IngestOutcome::kAccepted);

  std::string text = aggregator.registry().Render();
  EXPECT_TRUE(Has(text, "spark_s3a_bytes_total{direction=\"write\"} " + std::to_string(15 << 20)))
      << text;
  EXPECT_TRUE(Has(text, "spark_s3a_requests_total{request=\"multipart_initiate\"} 3")) << text;
  EXPECT_TRUE(Has(text, "spark_s3a_requests_total{request=\"put\"} 2")) << text;
  EXPECT_TRUE(Has(text, "spark_s3a_block_uploads_total 8")) << text;
  EXPECT_TRUE(Has(text, "spark_s3a_request_duration_seconds_total{request=\"put\"} 1.5")) << text;
  EXPECT_TRUE(Has(text, "spark_s3a_throttled_total 1")) << text;

  model::S3aIo stage4 = aggregator.s3a().stage(4, 0);
  EXPECT_TRUE(stage4.measured);
  EXPECT_EQ(stage4.tasks, 3);
  EXPECT_EQ(stage4.bytes_written, 13 << 20);
  EXPECT_EQ(stage4.multipart_initiated, 3);
  EXPECT_EQ(stage4.multipart_parts, 7);
  EXPECT_FALSE(aggregator.s3a().stage(6, 0).measured);

  model::ApplicationModel model;
  model.stages[{4, 0}].stage_id = 4;
  model.stages[{5, 0}].stage_id = 5;  // attempt 0 was not measured (the row was attempt 1)
  aggregator.s3a().ApplyTo(model);
  EXPECT_EQ(model.stages.at({4, 0}).s3a.bytes_written, 13 << 20);
  EXPECT_FALSE(model.stages.at({5, 0}).s3a.measured);
  EXPECT_EQ(model.s3a.bytes_written, 15 << 20);
  EXPECT_EQ(model.s3a.put_ms, 1500);
}

TEST(S3aIoTest, HostileValuesSaturateAndStagesAreBounded) {
  S3aIoTotals totals(2);
  std::vector<uint8_t> bytes = BatchWith({{1, 0, 1, false, UINT64_MAX, 0, 0, 0, 0},
                                          {1, 0, 1, false, UINT64_MAX, 0, 0, 0, 0},
                                          {2, 0, 1, false, 1, 0, 0, 0, 0},
                                          {3, 0, 1, false, 1, 0, 0, 0, 0}});
  totals.Add(*fb::GetBatch(bytes.data()));
  EXPECT_EQ(totals.stage(1, 0).bytes_written, INT64_MAX);  // 2^62 per row, saturated sum
  EXPECT_FALSE(totals.stage(1, 0).request_counts);
  EXPECT_TRUE(totals.stage(2, 0).measured);
  EXPECT_FALSE(totals.stage(3, 0).measured);  // past the bound of 2 stage attempts
  std::vector<uint8_t> none = BatchWith({});
  totals.Add(*fb::GetBatch(none.data()));
  EXPECT_FALSE(totals.application().measured);
}

}  // namespace
}  // namespace sparkprof::driver
