// The parallel reader against the one-thread reader: the same events in the same order, the same
// bad lines and counts, on logs built to cross batch boundaries where it matters (the first
// Photon plan, lines parsed in order for their size, bad lines, a cut last line).
#include "analyzer/eventlog/parallel_line_parser.h"

#include <gtest/gtest.h>

#include <string>

#include "analyzer/eventlog/event_log_reader.h"

namespace sparkprof::eventlog {
namespace {

// A line of text per event with the fields the tests vary.
class TraceSink final : public EventSink {
 public:
  std::string trace;
  void OnEvent(const Event& event) override {
    std::visit(Overloaded{
                   [&](const LogStartEvent& e) { trace += "log " + e.spark_version + "\n"; },
                   [&](const TaskEndEvent& e) {
                     trace += "end " + std::to_string(e.info.task_id) + " " +
                              std::to_string(e.info.photon_peak_memory_bytes) + "\n";
                   },
                   [&](const SqlExecutionStartEvent& e) {
                     trace += "sql " + std::to_string(e.execution_id) + " " +
                              std::to_string(e.plan.size()) + "\n";
                   },
                   [&](const OtherEvent& e) {
                     trace += e.name + " " + std::to_string(e.timestamp_ms) + "\n";
                   },
                   [](const auto&) {},
               },
               event);
  }
};

std::string TaskEnd(int id) {
  return R"({"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,)"
         R"("Task Type":"ResultTask","Task End Reason":{"Reason":"Success"},"Task Info":)"
         R"({"Task ID":)" +
         std::to_string(id) +
         R"(,"Index":0,"Attempt":0,"Launch Time":1000,"Executor ID":"1","Host":"h",)"
         R"("Finish Time":2000,"Accumulables":[{"ID":1,"Name":"peak memory usage",)"
         R"("Update":)" +
         std::to_string(1000 + id) +
         R"(,"Value":5}]},)"
         R"("Task Metrics":{"Executor Run Time":5}})"
         "\n";
}

std::string SqlStart(int id, const std::string& node, size_t filler_bytes = 0) {
  return R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",)"
         R"("executionId":)" +
         std::to_string(id) + R"(,"description":"q","details":"","physicalPlanDescription":")" +
         std::string(filler_bytes, 'p') + R"(","sparkPlanInfo":{"nodeName":")" + node +
         R"(","simpleString":"x","children":[],"metadata":{},"metrics":[]},"time":1000})"
         "\n";
}

struct Outcome {
  std::string trace;
  ReadReport report;
};

Outcome ReadWith(const std::string& text, int threads, LineReaderOptions lines = {}) {
  TraceSink sink;
  source::ApplicationLog log;
  log.name = "app";
  source::LogPart part;
  part.display_name = "app.log";
  part.open = [text]() -> Result<std::unique_ptr<InputStream>> {
    return MakeMemoryInputStream(text);
  };
  log.parts.push_back(part);
  ReaderOptions options;
  options.threads = threads;
  options.lines = lines;
  ReadReport report = ReadApplicationLog(log, sink, options);
  return {sink.trace, report};
}

void ExpectSameAsOneThread(const std::string& text, LineReaderOptions lines = {}) {
  const Outcome one = ReadWith(text, 1, lines);
  for (int threads : {2, 3}) {
    SCOPED_TRACE(threads);
    const Outcome many = ReadWith(text, threads, lines);
    EXPECT_EQ(many.trace, one.trace);
    EXPECT_EQ(many.report.lines, one.report.lines);
    EXPECT_EQ(many.report.events, one.report.events);
    EXPECT_EQ(many.report.bad_line_count, one.report.bad_line_count);
    ASSERT_EQ(many.report.bad_lines.size(), one.report.bad_lines.size());
    for (size_t i = 0; i < one.report.bad_lines.size(); ++i) {
      EXPECT_EQ(many.report.bad_lines[i].line, one.report.bad_lines[i].line);
      EXPECT_EQ(many.report.bad_lines[i].byte_offset, one.report.bad_lines[i].byte_offset);
      EXPECT_EQ(many.report.bad_lines[i].error, one.report.bad_lines[i].error);
    }
    EXPECT_EQ(many.report.event_counts, one.report.event_counts);
    EXPECT_EQ(many.report.unknown_events, one.report.unknown_events);
    ASSERT_EQ(many.report.files.size(), 1u);
    EXPECT_EQ(many.report.files[0].error, one.report.files[0].error);
    EXPECT_EQ(many.report.files[0].decoded_bytes, one.report.files[0].decoded_bytes);
  }
}

TEST(ParallelLineParser, PhotonPlanMidwayBadLinesAndBigLinesAsOneThreadReadsThem) {
  std::string text = R"({"Event":"SparkListenerLogStart","Spark Version":"3.5.1"})"
                     "\n";
  int id = 0;
  for (int i = 0; i < 3000; ++i) text += TaskEnd(id++);  // many batches before the plan
  text += "{not json\n";
  text += R"({"Event":"SparkListenerTaskEnd","Task Info":{"Task ID":1}})"
          "\n";                                         // no reason
  text += SqlStart(1, "WholeStageCodegen", 100 << 10);  // parsed in order for its size
  for (int i = 0; i < 500; ++i) text += TaskEnd(id++);
  text += SqlStart(2, "PhotonShuffleExchangeSink");  // from here, Photon's peak memory is read
  for (int i = 0; i < 3000; ++i) text += TaskEnd(id++);
  text += R"({"Event":"SparkListenerSomethingNew","Timestamp":7})"
          "\n";
  text += "\n   \n";
  text += TaskEnd(id++).substr(0, 80);  // cut last line, no newline
  const Outcome one = ReadWith(text, 1);
  // The test means something: photon peaks appear only after the plan, bad lines are counted.
  EXPECT_NE(one.trace.find("end 3499 0\n"), std::string::npos);
  EXPECT_NE(one.trace.find("end 3500 4500\n"), std::string::npos);
  EXPECT_EQ(one.report.bad_line_count, 3);
  ExpectSameAsOneThread(text);
}

TEST(ParallelLineParser, PhotonPlanInTheFirstLinesAndAPlanParsedInOrder) {
  std::string text = SqlStart(1, "PhotonResultStage");
  for (int i = 0; i < 2000; ++i) text += TaskEnd(i);
  text += SqlStart(2, "Photon", 70 << 10);
  for (int i = 2000; i < 2100; ++i) text += TaskEnd(i);
  ExpectSameAsOneThread(text);
}

// Batches keep the line reader's buffers: lines across their ends, one as long as the limit, one
// past it and a cut last line come out as on one thread.
TEST(ParallelLineParser, SmallReadBuffersLinesAtAndPastTheLimitAndACutLastLine) {
  LineReaderOptions lines;
  lines.initial_buffer_bytes = 4096;
  lines.max_line_bytes = 8192;
  std::string text = R"({"Event":"SparkListenerLogStart","Spark Version":"3.5.1"})"
                     "\n";
  int id = 0;
  for (int i = 0; i < 400; ++i) {
    text += TaskEnd(id++);
    if (i == 100) {
      std::string at_limit = SqlStart(1, "Photon", 8192);
      at_limit = at_limit.substr(0, at_limit.size() - 1);  // without its newline
      const size_t cut = at_limit.find(std::string(100, 'p'));
      at_limit.erase(cut, at_limit.size() - 8192);  // exactly max_line_bytes
      text += at_limit + "\n";
    }
    if (i == 200) text += SqlStart(2, "WholeStageCodegen", 9000);  // past the limit: skipped
  }
  text += TaskEnd(id++).substr(0, 300);  // cut last line, no newline
  const Outcome one = ReadWith(text, 1, lines);
  EXPECT_NE(one.trace.find("sql 1 1\n"), std::string::npos);  // the line at the limit is read
  EXPECT_EQ(one.trace.find("sql 2"), std::string::npos);
  EXPECT_EQ(one.report.bad_line_count, 2);
  ExpectSameAsOneThread(text, lines);
}

TEST(ParallelLineParser, GarbageBeforeAnyEventIsGivenUpAtTheSameLine) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "not an event " + std::to_string(i) + "\n";
  for (int i = 0; i < 100; ++i) text += TaskEnd(i);
  ExpectSameAsOneThread(text);
  EXPECT_FALSE(ReadWith(text, 2).report.files[0].error.empty());
  // A few bad lines first, then events: read on all threads after the first event.
  std::string late = "garbage\n" + TaskEnd(0) + "more garbage\n";
  for (int i = 1; i < 1000; ++i) late += TaskEnd(i);
  ExpectSameAsOneThread(late);
}

}  // namespace
}  // namespace sparkprof::eventlog
