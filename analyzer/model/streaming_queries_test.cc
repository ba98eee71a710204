// Streaming runs in the model: batches recorded and joined to their jobs, the trigger read from
// the schedule, a week of batches kept bounded with exact sums, and a stop's cancelled jobs.
#include "analyzer/model/streaming_queries.h"

#include <gtest/gtest.h>

#include <string>

#include "analyzer/eventlog/event_parser.h"
#include "analyzer/model/failure_causes.h"
#include "analyzer/model/model_builder.h"

namespace sparkprof::model {
namespace {

using eventlog::StreamingQueryProgressEvent;

StreamingQueryProgressEvent Batch(int64_t id, int64_t start_ms, int64_t duration_ms, int64_t rows) {
  StreamingQueryProgressEvent e;
  e.query_id = "q";
  e.run_id = "r";
  e.batch_id = id;
  e.timestamp_ms = start_ms;
  e.trigger_execution_ms = duration_ms;
  e.add_batch_ms = duration_ms / 2;
  e.query_planning_ms = duration_ms / 4;
  eventlog::StreamingSourceProgress source;
  source.num_input_rows = rows;
  e.sources.push_back(source);
  eventlog::StreamingStateOperator op;
  op.num_rows_total = id * 10;
  op.num_shuffle_partitions = 200;
  e.state_operators.push_back(op);
  return e;
}

TEST(StreamingQueries, AWeekOfBatchesStaysBoundedWithExactSums) {
  StreamingModel model;
  constexpr int64_t kBatches = 604800;  // a week of 1 s batches
  for (int64_t i = 0; i < kBatches; ++i) {
    RecordQueryProgress(model, Batch(i, 1'700'000'000'000 + i * 1000, 100 + i % 7, 3));
  }
  ASSERT_EQ(model.runs.size(), 1u);
  const StreamingQueryRun& run = model.runs[0];
  EXPECT_LE(run.batches.size(), kMaxBatchRecords);
  EXPECT_EQ(run.batches_total, kBatches);
  int64_t rows = 0, batches = 0, duration = 0, expected_duration = 0;
  for (const StreamingBatch& b : run.batches) {
    rows += b.input_rows;
    batches += b.batches;
    duration += b.trigger_execution_ms;
  }
  for (int64_t i = 0; i < kBatches; ++i) expected_duration += 100 + i % 7;
  EXPECT_EQ(rows, 3 * kBatches);
  EXPECT_EQ(batches, kBatches);
  EXPECT_EQ(duration, expected_duration);
  // Records are in batch order and each starts where the one before ended.
  for (size_t i = 1; i < run.batches.size(); ++i) {
    EXPECT_EQ(run.batches[i].first_batch_id,
              run.batches[i - 1].first_batch_id + run.batches[i - 1].batches);
  }
  EXPECT_EQ(run.batches.back().state_rows_total, (kBatches - 1) * 10);  // a level: the last
  ASSERT_EQ(run.worst_batches.size(), kWorstBatches);
  EXPECT_EQ(run.worst_batches[0].trigger_execution_ms, 106);
  EXPECT_EQ(run.state_shuffle_partitions, 200);
  // The latest batch stays whole while the records merge: the live metrics read it.
  EXPECT_GT(run.batches.back().batches, 1);
  EXPECT_EQ(run.latest.batches, 1);
  EXPECT_EQ(run.latest.first_batch_id, kBatches - 1);
  EXPECT_EQ(run.latest.input_rows, 3);
  EXPECT_EQ(run.latest.trigger_execution_ms, 100 + (kBatches - 1) % 7);
  EXPECT_EQ(run.latest.query_planning_ms, (100 + (kBatches - 1) % 7) / 4);
  EXPECT_EQ(run.latest_input_span_ms, 1000);
}

TEST(StreamingQueries, TriggerIntervalFromTheBatchesThatWaitedForIt) {
  StreamingModel model;
  // A 1 s trigger: batch 0 at the start (not aligned), then every second, a few ms late.
  RecordQueryProgress(model, Batch(0, 1'700'000'000'437, 300, 0));
  for (int64_t i = 1; i <= 6; ++i) {
    RecordQueryProgress(model, Batch(i, 1'700'000'000'000 + i * 1000 + i % 3, 200, 5));
  }
  EXPECT_EQ(InferTriggerInterval(model.runs[0]), 1000);

  // A 3 s trigger whose first batch overran it: the second started 108 ms after the first
  // ended (the stream thread's own work on a busy driver, Spark 4.2.0; no wait, off the
  // schedule), the third right after the second, which overran too; the next ones quick and on
  // the schedule. The late starts show nothing about the schedule, so they do not hide it.
  StreamingModel overran;
  const int64_t tick = 1'700'000'001'000;  // a multiple of 3 s
  RecordQueryProgress(overran, Batch(0, tick - 4300, 4600, 0));
  RecordQueryProgress(overran, Batch(1, tick + 408, 2734, 100));
  RecordQueryProgress(overran, Batch(2, tick + 3144, 618, 150));
  for (int64_t i = 3; i <= 6; ++i) {
    RecordQueryProgress(overran, Batch(i, tick + (i - 1) * 3000 + i % 2, 700, 150));
  }
  EXPECT_EQ(InferTriggerInterval(overran.runs[0]), 3000);

  // Back to back (no trigger, or batches longer than it): nothing waited, nothing inferred.
  StreamingModel busy;
  int64_t t = 1'700'000'000'123;
  for (int64_t i = 0; i < 10; ++i) {
    RecordQueryProgress(busy, Batch(i, t, 700 + 13 * i, 5));
    t += 700 + 13 * i + 1;
  }
  EXPECT_EQ(InferTriggerInterval(busy.runs[0]), -1);

  // Data arriving at its own pace (gaps, but not on a multiple of any interval since the epoch).
  StreamingModel irregular;
  t = 1'700'000'000'123;
  for (int64_t i = 0; i < 10; ++i) {
    RecordQueryProgress(irregular, Batch(i, t, 100, 5));
    t += 1000 + 137 * (i % 4) + 41;
  }
  EXPECT_EQ(InferTriggerInterval(irregular.runs[0]), -1);
}

// Lines through the parser into the model builder, as `sparkprof analyze` reads them.
ApplicationModel Build(const std::vector<std::string>& lines) {
  ModelBuilder builder;
  eventlog::EventParser parser(builder);
  for (const std::string& line : lines) {
    std::string padded = line;
    padded.resize(line.size() + eventlog::EventParser::kRequiredPadding, '\0');
    EXPECT_TRUE(parser.ParseLine(padded.data(), line.size(), padded.size()).ok()) << line;
  }
  return builder.Finish();
}

const std::string kListener = "org.apache.spark.sql.streaming.StreamingQueryListener$";

std::string ProgressLine(int batch_id, const std::string& time) {
  return R"({"Event":")" + kListener +
         R"(QueryProgressEvent","progress":{"id":"q1","runId":"run1",)" +
         R"("name":"n","timestamp":")" + time + R"(","batchId":)" + std::to_string(batch_id) +
         R"(,"durationMs":{"triggerExecution":500,"addBatch":400},"sources":[{"numInputRows":10}]}})";
}

std::string JobStart(int job_id, int batch_id, int stage_id) {
  return R"({"Event":"SparkListenerJobStart","Job ID":)" + std::to_string(job_id) +
         R"(,"Submission Time":1796007918100,"Stage Infos":[{"Stage ID":)" +
         std::to_string(stage_id) +
         R"(,"Stage Attempt ID":0,"Stage Name":"s","Number of Tasks":2}],"Stage IDs":[)" +
         std::to_string(stage_id) +
         R"(],"Properties":{"spark.jobGroup.id":"run1","sql.streaming.queryId":"q1",)"
         R"("streaming.sql.batchId":")" +
         std::to_string(batch_id) + R"("}})";
}

std::string TaskEnd(int stage_id, int task_id, int run_ms) {
  return R"({"Event":"SparkListenerTaskEnd","Stage ID":)" + std::to_string(stage_id) +
         R"(,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":{"Reason":"Success"},)"
         R"("Task Info":{"Task ID":)" +
         std::to_string(task_id) +
         R"(,"Index":0,"Attempt":0,"Launch Time":1796007918100,"Executor ID":"1","Host":"h",)"
         R"("Finish Time":1796007918300},"Task Metrics":{"Executor Run Time":)" +
         std::to_string(run_ms) + "}}";
}

TEST(StreamingQueries, BatchesJoinTheirJobsAndTheStopsCancellationIsNoFailure) {
  const ApplicationModel m = Build({
      R"({"Event":")" + kListener +
          R"(QueryStartedEvent","id":"q1","runId":"run1","name":"n","timestamp":"2026-11-30T03:05:17.000Z"})",
      JobStart(0, 0, 0),
      TaskEnd(0, 0, 120),
      TaskEnd(0, 1, 80),
      R"({"Event":"SparkListenerJobEnd","Job ID":0,"Completion Time":1796007918400,"Job Result":{"Result":"JobSucceeded"}})",
      ProgressLine(0, "2026-11-30T03:05:18.001Z"),
      JobStart(1, 1, 1),
      R"({"Event":"SparkListenerJobEnd","Job ID":1,"Completion Time":1796007919400,"Job Result":)"
      R"({"Result":"JobFailed","Exception":{"Message":"Job 1 cancelled part of cancelled job group run1"}}})",
      R"({"Event":")" + kListener +
          R"(QueryTerminatedEvent","id":"q1","runId":"run1","exception":null})",
  });
  ASSERT_EQ(m.streaming.runs.size(), 1u);
  const StreamingQueryRun& run = m.streaming.runs[0];
  EXPECT_EQ(run.name, "n");
  EXPECT_TRUE(run.terminated);
  ASSERT_EQ(run.batches.size(), 1u);
  EXPECT_EQ(run.batches[0].jobs, 1);
  EXPECT_EQ(run.batches[0].tasks, 2);
  EXPECT_EQ(run.batches[0].task_run_time_ms, 200);
  EXPECT_EQ(run.batches[0].input_rows, 10);
  EXPECT_EQ(run.cancelled_jobs, 1);
  EXPECT_EQ(m.jobs.at(1).streaming_batch_id, 1);
  EXPECT_TRUE(CancelledByQueryStop(m.streaming, m.jobs.at(1)));
  EXPECT_FALSE(CancelledByQueryStop(m.streaming, m.jobs.at(0)));
  // Spark 4 gives the stop's reason instead of the group's name.
  EXPECT_TRUE(
      IsJobGroupCancellation("Job 7 cancelled Query n [id = q1, runId = run1] was stopped"));
  // As Spark 4.2's event log writes it.
  EXPECT_TRUE(IsJobGroupCancellation(
      "[SPARK_JOB_CANCELLED] Job 2 cancelled Query state_growth [id = 287f1eb8-0db7-4afc-a50a-"
      "a6b1f7faf18c, runId = b2ceed9d-f8e2-448a-b1d0-a6bcde1e1b86] was stopped SQLSTATE: XXKDA"));
  EXPECT_FALSE(IsJobGroupCancellation("Job 7 cancelled because SparkContext was shut down"));
  EXPECT_FALSE(IsJobGroupCancellation("Job aborted due to stage failure: Task 0 in stage 1.0"));

  // The same cancellation of a run that failed is the failure's consequence: not excused.
  const ApplicationModel failed = Build({
      ProgressLine(0, "2026-11-30T03:05:18.001Z"),
      JobStart(1, 1, 1),
      R"({"Event":"SparkListenerJobEnd","Job ID":1,"Completion Time":1796007919400,"Job Result":)"
      R"({"Result":"JobFailed","Exception":{"Message":"Job 1 cancelled part of cancelled job group run1"}}})",
      R"({"Event":")" + kListener +
          R"(QueryTerminatedEvent","id":"q1","runId":"run1","exception":"java.lang.RuntimeException: x"})",
  });
  EXPECT_FALSE(CancelledByQueryStop(failed.streaming, failed.jobs.at(1)));
}

}  // namespace
}  // namespace sparkprof::model
