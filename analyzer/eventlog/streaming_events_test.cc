// The StreamingQueryListener events, as Spark 3.5 writes them (lines from a real run of
// tests/workloads/apps/streaming.py), and what hostile versions of them become.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/eventlog/event_parser.h"
#include "analyzer/eventlog/value_bounds.h"

namespace sparkprof::eventlog {
namespace {

class StreamingSink : public EventSink {
 public:
  void OnEvent(const Event& event) override {
    std::visit(Overloaded{
                   [&](const StreamingQueryStartedEvent& e) { started.push_back(e); },
                   [&](const StreamingQueryProgressEvent& e) { progress.push_back(e); },
                   [&](const StreamingQueryIdleEvent& e) { idle.push_back(e); },
                   [&](const StreamingQueryTerminatedEvent& e) { terminated.push_back(e); },
                   [&](const JobStartEvent& e) { jobs.push_back(e); },
                   [](const auto&) {},
               },
               event);
  }
  std::vector<StreamingQueryStartedEvent> started;
  std::vector<StreamingQueryProgressEvent> progress;
  std::vector<StreamingQueryIdleEvent> idle;
  std::vector<StreamingQueryTerminatedEvent> terminated;
  std::vector<JobStartEvent> jobs;
};

Status Parse(EventParser& parser, const std::string& line) {
  std::string padded = line;
  padded.resize(line.size() + EventParser::kRequiredPadding, '\0');
  return parser.ParseLine(padded.data(), line.size(), padded.size());
}

const std::string kPrefix = "org.apache.spark.sql.streaming.StreamingQueryListener$";

const std::string kStarted =
    R"({"Event":")" + kPrefix +
    R"(QueryStartedEvent","id":"d8768b2e-6a36-40aa-966e-3122b3c21709",)"
    R"("runId":"851ef701-7461-4d4c-96c3-d6994b310a10","name":"state_growth",)"
    R"("timestamp":"2026-11-30T03:05:05.162Z"})";

const std::string kProgress =
    R"({"Event":")" + kPrefix +
    R"(QueryProgressEvent","progress":{"id":"d8768b2e-6a36-40aa-966e-3122b3c21709",)"
    R"("runId":"851ef701-7461-4d4c-96c3-d6994b310a10","name":"state_growth",)"
    R"("timestamp":"2026-11-30T03:05:18.001Z","batchId":9,"batchDuration":670,)"
    R"("durationMs":{"triggerExecution":670,"queryPlanning":23,"getBatch":0,"commitOffsets":85,)"
    R"("latestOffset":0,"addBatch":488,"walCommit":73},"eventTime":{},)"
    R"("stateOperators":[{"operatorName":"stateStoreSave","numRowsTotal":24000,)"
    R"("numRowsUpdated":2000,"allUpdatesTimeMs":131,"numRowsRemoved":0,"allRemovalsTimeMs":0,)"
    R"("commitTimeMs":290,"memoryUsedBytes":7238048,"numRowsDroppedByWatermark":0,)"
    R"("numShufflePartitions":4,"numStateStoreInstances":4,"customMetrics":)"
    R"({"stateOnCurrentVersionSizeBytes":4228176,"loadedMapCacheHitCount":72,)"
    R"("loadedMapCacheMissCount":0}}],"sources":[{"description":)"
    R"("RateStreamV2[rowsPerSecond=2000, rampUpTimeSeconds=0, numPartitions=2",)"
    R"("startOffset":"11","endOffset":"12","latestOffset":"12","numInputRows":2000,)"
    R"("inputRowsPerSecond":1998.0019980019981,"processedRowsPerSecond":2985.0746268656717,)"
    R"("metrics":{}}],"sink":{"description":)"
    R"("org.apache.spark.sql.execution.datasources.noop.NoopTable$@1e7ff8e8",)"
    R"("numOutputRows":2000,"metrics":{}},"observedMetrics":{}}})";

TEST(StreamingEvents, StartedProgressAndTerminatedAsSpark35WritesThem) {
  StreamingSink sink;
  EventParser parser(sink);
  ASSERT_TRUE(Parse(parser, kStarted).ok());
  ASSERT_TRUE(Parse(parser, kProgress).ok());
  ASSERT_TRUE(
      Parse(parser, R"({"Event":")" + kPrefix +
                        R"(QueryTerminatedEvent","id":"d8768b2e-6a36-40aa-966e-3122b3c21709",)"
                        R"("runId":"851ef701-7461-4d4c-96c3-d6994b310a10",)"
                        R"("exception":null,"errorClassOnException":null})")
          .ok());
  ASSERT_EQ(sink.started.size(), 1u);
  EXPECT_EQ(sink.started[0].run_id, "851ef701-7461-4d4c-96c3-d6994b310a10");
  EXPECT_EQ(sink.started[0].name, "state_growth");
  EXPECT_EQ(sink.started[0].timestamp_ms, 1796007905162);  // 2026-11-30T03:05:05.162Z

  ASSERT_EQ(sink.progress.size(), 1u);
  const StreamingQueryProgressEvent& p = sink.progress[0];
  EXPECT_EQ(p.batch_id, 9);
  EXPECT_EQ(p.timestamp_ms, 1796007918001);
  EXPECT_EQ(p.batch_duration_ms, 670);
  EXPECT_EQ(p.trigger_execution_ms, 670);
  EXPECT_EQ(p.query_planning_ms, 23);
  EXPECT_EQ(p.get_batch_ms, 0);
  EXPECT_EQ(p.commit_offsets_ms, 85);
  EXPECT_EQ(p.latest_offset_ms, 0);
  EXPECT_EQ(p.add_batch_ms, 488);
  EXPECT_EQ(p.wal_commit_ms, 73);
  EXPECT_EQ(p.watermark_ms, -1);
  ASSERT_EQ(p.state_operators.size(), 1u);
  EXPECT_EQ(p.state_operators[0].operator_name, "stateStoreSave");
  EXPECT_EQ(p.state_operators[0].num_rows_total, 24000);
  EXPECT_EQ(p.state_operators[0].num_rows_updated, 2000);
  EXPECT_EQ(p.state_operators[0].memory_used_bytes, 7238048);
  EXPECT_EQ(p.state_operators[0].commit_time_ms, 290);
  EXPECT_EQ(p.state_operators[0].num_shuffle_partitions, 4);
  ASSERT_EQ(p.state_operators[0].custom_metrics.size(), 3u);
  EXPECT_EQ(p.state_operators[0].custom_metrics[0].first, "stateOnCurrentVersionSizeBytes");
  ASSERT_EQ(p.sources.size(), 1u);
  EXPECT_EQ(p.sources[0].start_offset, "11");
  EXPECT_EQ(p.sources[0].num_input_rows, 2000);
  EXPECT_NEAR(p.sources[0].input_rows_per_second, 1998.002, 1e-3);
  EXPECT_NEAR(p.sources[0].processed_rows_per_second, 2985.075, 1e-3);
  EXPECT_EQ(p.sink_num_output_rows, 2000);

  ASSERT_EQ(sink.terminated.size(), 1u);
  EXPECT_EQ(sink.terminated[0].exception_head, "");
  // Interpreted now: not "unknown".
  EXPECT_TRUE(parser.unknown_events().empty());
}

TEST(StreamingEvents, WatermarkKafkaMetricsIdleAndAFailedQuery) {
  StreamingSink sink;
  EventParser parser(sink);
  ASSERT_TRUE(
      Parse(parser, R"({"Event":")" + kPrefix +
                        R"(QueryProgressEvent","progress":{"id":"q","runId":"r",)"
                        R"("name":null,"timestamp":"2026-11-30T03:05:18.001Z","batchId":3,)"
                        R"("eventTime":{"watermark":"2026-11-30T03:04:00.000Z",)"
                        R"("min":"2026-11-30T03:04:10.000Z","max":"2026-11-30T03:05:17.500Z"},)"
                        R"("sources":[{"description":"KafkaV2[Subscribe[events]]",)"
                        R"("startOffset":"{\"events\":{\"0\":100}}","numInputRows":5,)"
                        R"("inputRowsPerSecond":"NaN","metrics":{"avgOffsetsBehindLatest":)"
                        R"("1500.0","maxOffsetsBehindLatest":"2000"}}]}})")
          .ok());
  ASSERT_TRUE(Parse(parser, R"({"Event":")" + kPrefix +
                                R"(QueryIdleEvent","id":"q","runId":"r",)"
                                R"("timestamp":"2026-11-30T03:06:00.000Z"})")
                  .ok());
  ASSERT_TRUE(Parse(parser, R"({"Event":")" + kPrefix +
                                R"(QueryTerminatedEvent","id":"q","runId":"r","exception":)"
                                R"j("org.apache.spark.SparkException: boom\n\tat x.y(z)"})j")
                  .ok());
  ASSERT_EQ(sink.progress.size(), 1u);
  const StreamingQueryProgressEvent& p = sink.progress[0];
  EXPECT_EQ(p.name, "");
  EXPECT_EQ(p.watermark_ms, 1796007840000);
  EXPECT_EQ(p.event_time_max_ms, 1796007917500);
  EXPECT_EQ(p.trigger_execution_ms, -1);  // no durationMs: absent, not 0
  ASSERT_EQ(p.sources.size(), 1u);
  EXPECT_EQ(p.sources[0].start_offset, R"({"events":{"0":100}})");
  EXPECT_EQ(p.sources[0].input_rows_per_second, -1);  // "NaN"
  ASSERT_EQ(p.sources[0].metrics.size(), 2u);
  EXPECT_EQ(p.sources[0].metrics[0].first, "avgOffsetsBehindLatest");
  EXPECT_EQ(p.sources[0].metrics[0].second, 1500.0);
  ASSERT_EQ(sink.idle.size(), 1u);
  EXPECT_EQ(sink.idle[0].timestamp_ms, 1796007960000);
  ASSERT_EQ(sink.terminated.size(), 1u);
  EXPECT_EQ(sink.terminated[0].exception_head, "org.apache.spark.SparkException: boom");
}

// A DSv1 Source's offset lookup is timed as "getOffset" (MicroBatchExecution), a DSv2 source's as
// "latestOffset"; a query reading both writes both (clearly synthetic figures).
TEST(StreamingEvents, GetOffsetOfADsv1Source) {
  StreamingSink sink;
  EventParser parser(sink);
  ASSERT_TRUE(Parse(parser, R"({"Event":")" + kPrefix +
                                R"(QueryProgressEvent","progress":{"id":"q","runId":"r",)"
                                R"("timestamp":"2026-11-30T03:05:18.001Z","batchId":3,)"
                                R"("durationMs":{"triggerExecution":2000,"getOffset":1200,)"
                                R"("latestOffset":5,"getBatch":40,"addBatch":700}}})")
                  .ok());
  ASSERT_EQ(sink.progress.size(), 1u);
  EXPECT_EQ(sink.progress[0].get_offset_ms, 1200);
  EXPECT_EQ(sink.progress[0].latest_offset_ms, 5);
  EXPECT_EQ(sink.progress[0].get_batch_ms, 40);
}

TEST(StreamingEvents, MicroBatchJobPropertiesNameTheQueryAndBatch) {
  StreamingSink sink;
  EventParser parser(sink);
  ASSERT_TRUE(Parse(parser, R"({"Event":"SparkListenerJobStart","Job ID":12,)"
                            R"("Submission Time":1796007919000,"Stage Infos":[],"Stage IDs":[],)"
                            R"("Properties":{"spark.jobGroup.id":"851ef701",)"
                            R"("sql.streaming.queryId":"d8768b2e","streaming.sql.batchId":"11"}})")
                  .ok());
  ASSERT_EQ(sink.jobs.size(), 1u);
  EXPECT_EQ(sink.jobs[0].job_group, "851ef701");
  EXPECT_EQ(sink.jobs[0].streaming_query_id, "d8768b2e");
  EXPECT_EQ(sink.jobs[0].streaming_batch_id, 11);
}

TEST(StreamingEvents, HostileValuesAreBoundedOrRejectedNamingWhy) {
  StreamingSink sink;
  EventParser parser(sink);
  // Numbers far out of range, strings where numbers belong, times that are not times.
  const Status hostile =
      Parse(parser, R"({"Event":")" + kPrefix +
                        R"(QueryProgressEvent","progress":{"id":"q","runId":"r",)"
                        R"("timestamp":"not a time","batchId":1e25,)"
                        R"("durationMs":{"triggerExecution":-5,"addBatch":1e300,"walCommit":"x"},)"
                        R"("eventTime":{"watermark":12},"stateOperators":[{"numRowsTotal":)"
                        R"(-1e25,"memoryUsedBytes":"9999999999999999999999",)"
                        R"("customMetrics":{"a":{"nested":1}}}],"sources":[{"numInputRows":)"
                        R"(1e30,"inputRowsPerSecond":1e308,"metrics":{"m":"inf"}}]}})");
  ASSERT_TRUE(hostile.ok()) << hostile.message();
  ASSERT_EQ(sink.progress.size(), 1u);
  const StreamingQueryProgressEvent& p = sink.progress[0];
  EXPECT_EQ(p.timestamp_ms, -1);
  EXPECT_EQ(p.batch_id, kMaxAmount);
  EXPECT_EQ(p.trigger_execution_ms, -1);
  EXPECT_EQ(p.add_batch_ms, kMaxAmount);
  EXPECT_EQ(p.wal_commit_ms, -1);
  EXPECT_EQ(p.watermark_ms, 12);  // a number: taken as epoch ms
  ASSERT_EQ(p.state_operators.size(), 1u);
  EXPECT_EQ(p.state_operators[0].num_rows_total, -1);
  EXPECT_EQ(p.state_operators[0].memory_used_bytes, -1);  // unparsable text: absent
  EXPECT_EQ(p.sources[0].num_input_rows, kMaxAmount);
  EXPECT_EQ(p.sources[0].input_rows_per_second, static_cast<double>(kMaxAmount));
  EXPECT_TRUE(p.sources[0].metrics.empty());

  // An integer literal past what a JSON number parser reads: the line is rejected, saying so.
  const Status huge = Parse(parser, R"({"Event":")" + kPrefix +
                                        R"(QueryProgressEvent","progress":{"runId":"r",)"
                                        R"("batchId":99999999999999999999999}})");
  EXPECT_FALSE(huge.ok());
  EXPECT_NE(huge.message().find("number"), std::string::npos) << huge.message();

  // Too many operators and metrics: the first ones kept.
  std::string many =
      R"({"Event":")" + kPrefix +
      R"(QueryProgressEvent","progress":{"runId":"r","batchId":1,"stateOperators":[)";
  for (int i = 0; i < 40; ++i) many += std::string(i ? "," : "") + R"({"numRowsTotal":1})";
  many += "]}}";
  ASSERT_TRUE(Parse(parser, many).ok());
  EXPECT_EQ(sink.progress.back().state_operators.size(), kMaxStreamingOperators);

  // Without a run id or a batch id the batch cannot be placed: a located error, no event.
  Status no_run =
      Parse(parser, R"({"Event":")" + kPrefix + R"(QueryProgressEvent","progress":{"batchId":1}})");
  EXPECT_FALSE(no_run.ok());
  EXPECT_NE(no_run.message().find("runId"), std::string::npos) << no_run.message();
  Status no_progress = Parse(parser, R"({"Event":")" + kPrefix + R"(QueryProgressEvent"})");
  EXPECT_FALSE(no_progress.ok());
  Status truncated = Parse(parser, kProgress.substr(0, kProgress.size() / 2));
  EXPECT_FALSE(truncated.ok());
  Status no_started_run =
      Parse(parser, R"({"Event":")" + kPrefix + R"(QueryStartedEvent","id":"q"})");
  EXPECT_FALSE(no_started_run.ok());
  EXPECT_EQ(sink.progress.size(), 2u);
  EXPECT_TRUE(sink.started.empty());
}

}  // namespace
}  // namespace sparkprof::eventlog
