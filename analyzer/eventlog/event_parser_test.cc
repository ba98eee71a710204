#include "analyzer/eventlog/event_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "analyzer/eventlog/value_bounds.h"

namespace sparkprof::eventlog {
namespace {

class RecordingSink : public EventSink {
 public:
  void OnEvent(const Event& event) override {
    std::visit(Overloaded{
                   [&](const TaskEndEvent& e) { task_ends.push_back(e); },
                   [&](const TaskStartEvent& e) { task_starts.push_back(e); },
                   [&](const StageCompletedEvent& e) { stages.push_back(e.stage); },
                   [&](const ApplicationStartEvent& e) { app_start = e; },
                   [&](const LogStartEvent& e) { version = e.spark_version; },
                   [&](const DatabricksMetadataEvent& e) { version = e.spark_version; },
                   [&](const ExecutorRemovedEvent& e) { removed.push_back(e); },
                   [&](const SqlExecutionStartEvent& e) { sql.push_back(e); },
                   [&](const JobStartEvent& e) { jobs.push_back(e); },
                   [&](const ExclusionEvent& e) { exclusions.push_back(e); },
                   [&](const OtherEvent& e) { others.push_back(e.name); },
                   [](const auto&) {},
               },
               event);
  }

  std::vector<TaskEndEvent> task_ends;
  std::vector<TaskStartEvent> task_starts;
  std::vector<StageInfo> stages;
  std::vector<ExecutorRemovedEvent> removed;
  std::vector<SqlExecutionStartEvent> sql;
  std::vector<JobStartEvent> jobs;
  std::vector<ExclusionEvent> exclusions;
  std::vector<std::string> others;
  ApplicationStartEvent app_start;
  std::string version;
};

Status Parse(EventParser& parser, const std::string& line) {
  std::string padded = line;
  padded.resize(line.size() + EventParser::kRequiredPadding, '\0');
  return parser.ParseLine(padded.data(), line.size(), padded.size());
}

// A 3.5-style TaskEnd (spark-facts.md 4.7) with push-based shuffle metrics.
const char* kTaskEnd35 =
    R"({"Event":"SparkListenerTaskEnd","Stage ID":3,"Stage Attempt ID":1,"Task Type":"ShuffleMapTask",)"
    R"("Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":6,"Index":6,"Attempt":0,)"
    R"("Partition ID":6,"Launch Time":1642039496427,"Executor ID":"7","Host":"h1",)"
    R"("Locality":"NODE_LOCAL","Speculative":true,"Getting Result Time":0,"Finish Time":1642039496888,)"
    R"("Failed":false,"Killed":false,"Accumulables":[{"ID":36,"Name":"x","Update":"12","Value":"12",)"
    R"("Internal":true,"Count Failed Values":true,"Metadata":"sql"}]},)"
    R"("Task Executor Metrics":{"JVMHeapMemory":319351248,"MajorGCTime":353,"TotalGCTime":473},)"
    R"("Task Metrics":{"Executor Deserialize Time":277,"Executor Deserialize CPU Time":131261000,)"
    R"("Executor Run Time":158,"Executor CPU Time":75295000,"Peak Execution Memory":10,)"
    R"("Result Size":1836,"JVM GC Time":11,"Result Serialization Time":1,"Memory Bytes Spilled":5,)"
    R"("Disk Bytes Spilled":6,"Shuffle Read Metrics":{"Remote Blocks Fetched":1,"Local Blocks Fetched":2,)"
    R"("Fetch Wait Time":3,"Remote Bytes Read":400,"Remote Bytes Read To Disk":0,"Local Bytes Read":50,)"
    R"("Total Records Read":7,"Remote Requests Duration":9,"Push Based Shuffle":{"Corrupt Merged Block Chunks":0,)"
    R"("Merged Fetch Fallback Count":2,"Merged Remote Blocks Fetched":0,"Merged Local Blocks Fetched":0,)"
    R"("Merged Remote Chunks Fetched":0,"Merged Local Chunks Fetched":0,"Merged Remote Bytes Read":77,)"
    R"("Merged Local Bytes Read":88,"Merged Remote Requests Duration":0}},)"
    R"("Shuffle Write Metrics":{"Shuffle Bytes Written":468,"Shuffle Write Time":32402787,"Shuffle Records Written":12},)"
    R"("Input Metrics":{"Bytes Read":100,"Records Read":12},"Output Metrics":{"Bytes Written":200,"Records Written":3},)"
    R"("Updated Blocks":[]}})";

TEST(EventParser, TaskEndAllMetricsInTheirUnits) {
  RecordingSink sink;
  EventParser parser(sink);
  ASSERT_TRUE(Parse(parser, kTaskEnd35).ok());
  ASSERT_EQ(sink.task_ends.size(), 1u);
  const TaskEndEvent& e = sink.task_ends[0];
  EXPECT_EQ(e.stage_id, 3);
  EXPECT_EQ(e.stage_attempt, 1);
  EXPECT_EQ(e.reason.reason, "Success");
  EXPECT_EQ(e.info.task_id, 6);
  EXPECT_EQ(e.info.executor_id, "7");
  EXPECT_EQ(e.info.locality, TaskLocality::kNodeLocal);
  EXPECT_TRUE(e.info.speculative);
  EXPECT_EQ(e.info.finish_time_ms - e.info.launch_time_ms, 461);
  ASSERT_TRUE(e.has_metrics);
  EXPECT_EQ(e.metrics.executor_run_time_ms, 158);
  EXPECT_EQ(e.metrics.executor_cpu_time_ns, 75295000);
  EXPECT_EQ(e.metrics.executor_deserialize_cpu_time_ns, 131261000);
  EXPECT_EQ(e.metrics.shuffle_write_time_ns, 32402787);
  EXPECT_EQ(e.metrics.shuffle_total_bytes_read(), 450);
  EXPECT_EQ(e.metrics.shuffle_fetch_wait_time_ms, 3);
  EXPECT_EQ(e.metrics.shuffle_push_merged_remote_bytes_read, 77);
  EXPECT_EQ(e.metrics.shuffle_push_merged_local_bytes_read, 88);
  EXPECT_EQ(e.metrics.shuffle_push_merged_fetch_fallback_count, 2);
  EXPECT_EQ(e.metrics.input_bytes_read, 100);
  EXPECT_EQ(e.metrics.output_bytes_written, 200);
  EXPECT_EQ(e.metrics.memory_bytes_spilled, 5);
  EXPECT_EQ(e.metrics.disk_bytes_spilled, 6);
  EXPECT_TRUE(e.executor_metrics.present);
  EXPECT_EQ(e.executor_metrics.total_gc_time_ms, 473);
  EXPECT_EQ(parser.event_counts().at("SparkListenerTaskEnd"), 1);
  EXPECT_TRUE(parser.unknown_events().empty());
}

// Keys and strings are read in place unless they hold a backslash: escaped spellings (in keys,
// in values, across the scan's 8-byte words) give what their unescaped text gives.
// value_bounds.h: times, amounts and declared counts are bounded by the parser, once, for every
// sink; an accumulator's value only within kMaxInteger (a stage's sum can pass kMaxAmount).
TEST(EventParser, HostileValuesAreBoundedBeforeAnySinkSeesThem) {
  RecordingSink sink;
  EventParser parser(sink);
  ASSERT_TRUE(Parse(parser,
                    R"({"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,)"
                    R"("Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":1,)"
                    R"("Launch Time":-7,"Finish Time":99999999999999999,"Executor ID":"1",)"
                    R"("Host":"h"},"Task Executor Metrics":{"JVMHeapMemory":-99999999999999999},)"
                    R"("Task Metrics":{"Executor Run Time":9223372036854775807,)"
                    R"("Peak Execution Memory":-4611686018427387904,"Memory Bytes Spilled":-5}})")
                  .ok());
  ASSERT_EQ(sink.task_ends.size(), 1u);
  const TaskEndEvent& e = sink.task_ends[0];
  EXPECT_EQ(e.info.launch_time_ms, -1);
  EXPECT_EQ(e.info.finish_time_ms, kMaxTimeMs);
  EXPECT_EQ(e.executor_metrics.jvm_heap_memory_bytes, -kMaxAmount);
  EXPECT_EQ(e.metrics.executor_run_time_ms, kMaxAmount);
  EXPECT_EQ(e.metrics.peak_execution_memory_bytes, -kMaxAmount);
  EXPECT_EQ(e.metrics.memory_bytes_spilled, -5);  // a real log's negative value stays
  ASSERT_TRUE(Parse(parser, R"({"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":2,)"
                            R"("Stage Attempt ID":0,"Stage Name":"s","Number of Tasks":2147483647,)"
                            R"("Accumulables":[{"ID":3,"Name":"n","Value":4611686018427387904}]}})")
                  .ok());
  ASSERT_EQ(sink.stages.size(), 1u);
  EXPECT_EQ(sink.stages[0].num_tasks, kMaxDeclaredCount);
  ASSERT_EQ(sink.stages[0].accumulables.size(), 1u);
  EXPECT_EQ(sink.stages[0].accumulables[0].value, kMaxInteger);
}

TEST(EventParser, EscapedKeysAndStringsReadAsTheirText) {
  auto replace = [](std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  std::string line = kTaskEnd35;
  line = replace(line, R"("Task ID":6)", R"("Task\u0020ID":6)");
  line = replace(line, R"("Executor ID":"7")", R"("Executor ID":"\u0037")");
  line = replace(line, R"("Host":"h1")", R"("Host":"rack-07.example.com\/h\"1")");
  line = replace(line, R"("Locality":"NODE_LOCAL")", R"("Locality":"NODE\u005fLOCAL")");
  line = replace(line, R"("Shuffle Bytes Written":468)", R"("Shuffle Bytes Writte\u006e":468)");
  RecordingSink sink;
  EventParser parser(sink);
  ASSERT_TRUE(Parse(parser, line).ok()) << line;
  ASSERT_EQ(sink.task_ends.size(), 1u);
  const TaskEndEvent& e = sink.task_ends[0];
  EXPECT_EQ(e.info.task_id, 6);
  EXPECT_EQ(e.info.executor_id, "7");
  EXPECT_EQ(e.info.host, "rack-07.example.com/h\"1");
  EXPECT_EQ(e.info.locality, TaskLocality::kNodeLocal);
  EXPECT_EQ(e.metrics.shuffle_bytes_written, 468);
  EXPECT_EQ(e.metrics.shuffle_records_written, 12);
}

// Keys are matched in Spark's order first: keys out of that order, unknown keys, keys that
// extend or cut a known one, and a repeated key (the last one counts) read as they always did.
TEST(EventParser, KeysInAnyOrderReadAsTheirName) {
  const std::string shuffled =
      R"({"Stage Attempt ID":1,"Task Metrics":{"Executor Run Time":158,"Shuffle Write Metrics":)"
      R"({"Shuffle Records Written":12,"Shuffle Bytes Written":468},)"
      R"("Executor Deserialize Time":277,)"
      R"("Executor Run Times":1,"Executor Run Tim":2,"Executor CPU Time":75295000},)"
      R"("Task Info":{"Killed":false,"Finish Time":1642039496888,"Task IDs":99,"Task I":98,)"
      R"("Launch Time":1642039496427,"Host":"h1","Task ID":5,"Index":6,"Task ID":6},)"
      R"("Event":"SparkListenerTaskEnd","Task End Reason":{"Reason":"Success"},"Stage ID":3,)"
      R"("Task Executor Metrics":{"TotalGCTime":473,"SomeNewMemory":1,"JVMHeapMemory":319351248}})";
  RecordingSink sink;
  EventParser parser(sink);
  ASSERT_TRUE(Parse(parser, kTaskEnd35).ok());
  ASSERT_TRUE(Parse(parser, shuffled).ok()) << shuffled;
  ASSERT_EQ(sink.task_ends.size(), 2u);
  auto read = [](const TaskEndEvent& e) {
    return std::tuple(e.stage_id, e.stage_attempt, e.info.task_id, e.info.index, e.info.host,
                      e.info.launch_time_ms, e.info.finish_time_ms, e.metrics.executor_run_time_ms,
                      e.metrics.executor_deserialize_time_ms, e.metrics.executor_cpu_time_ns,
                      e.metrics.shuffle_bytes_written, e.metrics.shuffle_records_written,
                      e.executor_metrics.jvm_heap_memory_bytes,
                      e.executor_metrics.total_gc_time_ms);
  };
  EXPECT_EQ(read(sink.task_ends[1]), read(sink.task_ends[0]));
}

// Photon: a task's peak is the sum of its "peak memory usage" updates, whatever the order of
// "Name" and "Update" and however the name is spelled; other accumulables' updates are not read.
TEST(EventParser, PhotonPeakMemorySumsOnlyPeakMemoryUpdates) {
  std::string line = kTaskEnd35;
  const std::string accumulables =
      R"("Accumulables":[{"ID":1,"Name":"peak\u0020memory usage","Update":"100","Value":"1"},)"
      R"({"ID":2,"Update":50,"Name":"peak memory usage"},{"ID":3,"Name":"other","Update":"999"},)"
      R"({"ID":4,"Name":"peak memory usage, other","Update":7},{"ID":5,"Name":7,"Update":8},)"
      // Past another accumulable's "Name" its object is skipped, nested values and all.
      R"({"ID":6,"Name":"other","Update":{"a":[1,{"b":"]}"}]},"Value":[[]]},)"
      R"({"ID":7,"Name":"peak memory usage","Update":3},)"
      R"({"ID":8,"Name":"\u0070eak memory usage","Update":4}])";  // an escaped first byte
  const size_t from = line.find(R"("Accumulables":[)");
  const size_t to = line.find("]}", from);
  ASSERT_NE(to, std::string::npos);
  line.replace(from, to + 1 - from, accumulables);
  RecordingSink sink;
  EventParser parser(sink);
  parser.set_photon_plan_seen(true);
  ASSERT_TRUE(Parse(parser, line).ok()) << line;
  ASSERT_EQ(sink.task_ends.size(), 1u);
  EXPECT_EQ(sink.task_ends[0].info.photon_peak_memory_bytes, 157);
  EXPECT_EQ(sink.task_ends[0].info.photon_peak_memory_largest_operator_bytes, 100);
  EXPECT_EQ(sink.task_ends[0].info.photon_shuffle_write_ns, 0);
}

// Photon: beside the sum over a task's operators (an upper bound of its peak), the largest
// operator's peak (a lower bound; spark-rapids-tools' figure), from the same updates: the
// largest wherever it stands, a zero or negative update and other accumulables ignored.
TEST(EventParser, PhotonPeakMemoryKeepsTheLargestOperatorBesideTheSum) {
  struct Case {
    const char* accumulables;
    int64_t sum;
    int64_t largest;
  };
  const Case cases[] = {
      {R"({"ID":1,"Name":"peak memory usage","Update":300},)"
       R"({"ID":2,"Name":"peak memory usage","Update":"1200"},)"
       R"({"ID":3,"Name":"peak memory usage","Update":500})",
       2000, 1200},
      {R"({"ID":1,"Name":"peak memory usage","Update":-5},)"
       R"({"ID":2,"Name":"peak memory usage","Update":0},{"ID":3,"Name":"other","Update":9})",
       0, 0},
      {R"({"ID":1,"Name":"peak memory usage","Update":7},{"ID":2,"Name":"other","Update":900},)"
       R"({"ID":3,"Update":64,"Name":"peak memory usage"})",
       71, 64},
  };
  for (const Case& c : cases) {
    std::string line = kTaskEnd35;
    const size_t from = line.find(R"("Accumulables":[)");
    const size_t to = line.find("]}", from);
    ASSERT_NE(to, std::string::npos);
    line.replace(from, to + 1 - from, std::string(R"("Accumulables":[)") + c.accumulables + "]");
    RecordingSink sink;
    EventParser parser(sink);
    parser.set_photon_plan_seen(true);
    ASSERT_TRUE(Parse(parser, line).ok()) << line;
    ASSERT_EQ(sink.task_ends.size(), 1u);
    EXPECT_EQ(sink.task_ends[0].info.photon_peak_memory_bytes, c.sum) << c.accumulables;
    EXPECT_EQ(sink.task_ends[0].info.photon_peak_memory_largest_operator_bytes, c.largest)
        << c.accumulables;
  }
}

// Photon: a task's shuffle write time is the sum of its "(part of shuffle file write)" timings
// (nanoseconds), as spark-rapids-tools' profiler reads them; other "time taken" metrics are not.
TEST(EventParser, PhotonShuffleWriteTimeSumsItsThreeParts) {
  std::string line = kTaskEnd35;
  const std::string accumulables =
      R"x("Accumulables":[)x"
      R"x({"ID":1,"Name":"time taken to convert columns to rows (part of shuffle file write)","Update":"1000"},)x"
      R"x({"ID":2,"Update":20,"Name":"time taken to sort rows by partition ID (part of shuffle file write)"},)x"
      R"x({"ID":3,"Name":"time taken waiting on file write IO (part of shuffle file write)","Update":300},)x"
      R"x({"ID":4,"Name":"time taken to build hash table","Update":99999},)x"
      R"x({"ID":5,"Name":"peak memory usage","Update":5}])x";
  const size_t from = line.find(R"("Accumulables":[)");
  const size_t to = line.find("]}", from);
  ASSERT_NE(to, std::string::npos);
  line.replace(from, to + 1 - from, accumulables);
  for (const bool photon : {true, false}) {
    RecordingSink sink;
    EventParser parser(sink);
    parser.set_photon_plan_seen(photon);
    ASSERT_TRUE(Parse(parser, line).ok()) << line;
    ASSERT_EQ(sink.task_ends.size(), 1u);
    EXPECT_EQ(sink.task_ends[0].info.photon_shuffle_write_ns, photon ? 1320 : 0);
    EXPECT_EQ(sink.task_ends[0].info.photon_peak_memory_bytes, photon ? 5 : 0);
    EXPECT_EQ(sink.task_ends[0].info.photon_peak_memory_largest_operator_bytes, photon ? 5 : 0);
  }
}

TEST(EventParser, Spark12TaskEndWithoutOptionalMetrics) {
  RecordingSink sink;
  EventParser parser(sink);
  std::string line =
      R"({"Event":"SparkListenerTaskEnd","Stage ID":0,"Stage Attempt ID":0,"Task Type":"ResultTask",)"
      R"("Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":6,"Index":6,"Attempt":0,)"
      R"("Launch Time":1422981762084,"Executor ID":"driver","Host":"localhost","Locality":"PROCESS_LOCAL",)"
      R"("Speculative":false,"Getting Result Time":0,"Finish Time":1422981762632,"Failed":false,"Accumulables":[]},)"
      R"("Task Metrics":{"Host Name":"localhost","Executor Deserialize Time":10,"Executor Run Time":521,)"
      R"("Result Size":1268,"JVM GC Time":20,"Result Serialization Time":0,"Memory Bytes Spilled":0,)"
      R"("Disk Bytes Spilled":0,"Updated Blocks":[]}})";
  ASSERT_TRUE(Parse(parser, line).ok());
  ASSERT_EQ(sink.task_ends.size(), 1u);
  EXPECT_EQ(sink.task_ends[0].metrics.executor_run_time_ms, 521);
  EXPECT_EQ(sink.task_ends[0].metrics.executor_cpu_time_ns, 0);
  EXPECT_EQ(sink.task_ends[0].info.partition_id, -1);
}

TEST(EventParser, FailureReasonsKeepClassAndFirstLine) {
  RecordingSink sink;
  EventParser parser(sink);
  std::string line =
      R"({"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,"Task Type":"ResultTask",)"
      R"("Task End Reason":{"Reason":"ExceptionFailure","Class Name":"java.lang.RuntimeException",)"
      R"("Description":"boom\nsecond line","Stack Trace":[],"Full Stack Trace":"x"},)"
      R"("Task Info":{"Task ID":1,"Index":0,"Attempt":0,"Launch Time":1,"Executor ID":"1","Host":"h",)"
      R"("Locality":"ANY","Speculative":false,"Getting Result Time":0,"Finish Time":2,"Failed":true}})";
  ASSERT_TRUE(Parse(parser, line).ok());
  ASSERT_EQ(sink.task_ends.size(), 1u);
  EXPECT_EQ(sink.task_ends[0].reason.exception_class, "java.lang.RuntimeException");
  EXPECT_EQ(sink.task_ends[0].reason.message_head, "boom");
  EXPECT_FALSE(sink.task_ends[0].has_metrics);
}

// Issue 29: what ran out is often only in the innermost cause -- the exception a Python
// traceback ends with, the last "Caused by:" of a Java stack trace -- not in the first line.
TEST(EventParser, FailureReasonsKeepTheRootCause) {
  RecordingSink sink;
  EventParser parser(sink);
  auto root_cause = [&](const std::string& description, const std::string& full_stack_trace) {
    std::string line =
        R"({"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,)"
        R"("Task End Reason":{"Reason":"ExceptionFailure","Class Name":"x.E","Description":")" +
        description + R"(","Stack Trace":[],"Full Stack Trace":")" + full_stack_trace +
        R"("},"Task Info":{"Task ID":1,"Index":0,"Attempt":0,"Launch Time":1,)"
        R"("Executor ID":"1","Host":"h","Locality":"ANY","Finish Time":2,"Failed":true}})";
    EXPECT_TRUE(Parse(parser, line).ok());
    return sink.task_ends.back().reason.root_cause;
  };
  // Spark 4's PythonException: the traceback's frames are indented, the exception is not.
  EXPECT_EQ(root_cause(R"([PYTHON_EXCEPTION] An exception was thrown from the Python worker: )"
                       R"(Traceback (most recent call last):\n  File \"udf.py\", line 61, in f\n)"
                       R"(    document = bytearray(300 << 20)\n               ^^^^\nMemoryError\n)"
                       R"( SQLSTATE: 38000)",
                       ""),
            "MemoryError");
  // Chained Python exceptions: the last traceback's.
  EXPECT_EQ(root_cause(R"(Traceback (most recent call last):\n  File \"a.py\"\nKeyError: 'k'\n\n)"
                       R"(During handling of the above exception, another exception occurred:\n\n)"
                       R"(Traceback (most recent call last):\n  File \"b.py\"\nValueError: bad)",
                       ""),
            "ValueError: bad");
  // Java: the last "Caused by:" of the full stack trace.
  EXPECT_EQ(root_cause("Task failed while writing rows.",
                       R"(org.apache.spark.SparkException: Task failed while writing rows.\n)"
                       R"(\tat a.b(c.java:1)\nCaused by: java.io.IOException: No space left on )"
                       R"(device\n\tat d.e(f.java:2))"),
            "java.io.IOException: No space left on device");
  EXPECT_EQ(root_cause("boom", R"(x.E: boom\n\tat a.b(c.java:1))"), "");
  EXPECT_EQ(RootCauseLine("Caused by: " + std::string(600, 'x'), 512).size(), 512u);
}

// A TaskEnd without its reason (or without a task id) used to be counted as a success.
TEST(EventParser, MalformedTaskEndIsABadLineNotASuccess) {
  RecordingSink sink;
  EventParser parser(sink);
  const std::string info =
      R"("Task Info":{"Task ID":1,"Index":0,"Attempt":0,"Launch Time":1,"Executor ID":"1",)"
      R"("Host":"h","Locality":"ANY","Speculative":false,"Finish Time":2,"Failed":false}})";
  const std::string head = R"({"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,)";
  for (const std::string& line :
       {head + info, head + R"("Task End Reason":{},)" + info,
        head + R"("Task End Reason":{"Reason":""},)" + info,
        head + R"("Task End Reason":{"Reason":"Success"},"Task Info":{"Index":0,"Attempt":0}})"}) {
    Status status = Parse(parser, line);
    ASSERT_FALSE(status.ok()) << line;
    EXPECT_EQ(status.code(), StatusCode::kCorrupt);
    EXPECT_NE(status.message().find("invalid SparkListenerTaskEnd: no \""), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("not counted"), std::string::npos);
  }
  EXPECT_TRUE(sink.task_ends.empty());
  ASSERT_TRUE(Parse(parser, head + R"("Task End Reason":{"Reason":"Success"},)" + info).ok());
  EXPECT_EQ(sink.task_ends.size(), 1u);
}

TEST(EventParser, DatabricksMetadataAndUnknownEvents) {
  RecordingSink sink;
  EventParser parser(sink);
  ASSERT_TRUE(
      Parse(
          parser,
          R"({"Event":"DBCEventLoggingListenerMetadata","Spark Version":"3.3.0","Timestamp":1707850702370,"Rollover Number":0})")
          .ok());
  EXPECT_EQ(sink.version, "3.3.0");
  ASSERT_TRUE(
      Parse(
          parser,
          R"({"Event":"org.apache.spark.sql.catalyst.catalog.CreateTableEvent","database":"d","name":"t"})")
          .ok());
  ASSERT_TRUE(
      Parse(
          parser,
          R"({"Event":"org.apache.spark.scheduler.SparkListenerExecutorBlacklisted","time":1479252044930,"executorId":"2","taskFailures":4})")
          .ok());
  EXPECT_EQ(parser.unknown_events().count("org.apache.spark.sql.catalyst.catalog.CreateTableEvent"),
            1u);
  ASSERT_EQ(sink.exclusions.size(), 1u);
  EXPECT_EQ(sink.exclusions[0].executor_or_host, "2");
  EXPECT_TRUE(sink.exclusions[0].excluded);
}

TEST(EventParser, SqlStartCollectsPlanMetrics) {
  RecordingSink sink;
  EventParser parser(sink);
  std::string line =
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":4,)"
      R"("description":"<script>alert(1)</script>","details":"d","physicalPlanDescription":"== Plan ==",)"
      R"("sparkPlanInfo":{"nodeName":"Execute InsertIntoHadoopFsRelationCommand","simpleString":"s",)"
      R"("children":[{"nodeName":"Scan","simpleString":"s","children":[],"metadata":{},)"
      R"("metrics":[{"name":"number of files read","accumulatorId":11,"metricType":"sum"}]}],"metadata":{},)"
      R"("metrics":[{"name":"task commit time","accumulatorId":9,"metricType":"timing"}]},"time":100})";
  ASSERT_TRUE(Parse(parser, line).ok());
  ASSERT_EQ(sink.sql.size(), 1u);
  EXPECT_EQ(sink.sql[0].description, "<script>alert(1)</script>");
  ASSERT_EQ(sink.sql[0].metrics.size(), 2u);
  EXPECT_EQ(sink.sql[0].metrics[0].name, "number of files read");
  EXPECT_EQ(sink.sql[0].metrics[0].node_name, "Scan");
  EXPECT_EQ(sink.sql[0].metrics[1].accumulator_id, 9);
}

TEST(EventParser, BadLinesAreErrorsAndDeliverNothing) {
  RecordingSink sink;
  EventParser parser(sink);
  std::string full = kTaskEnd35;
  // Cut mid-way, as an .inprogress log's last line is.
  EXPECT_FALSE(Parse(parser, full.substr(0, full.size() / 2)).ok());
  EXPECT_FALSE(Parse(parser, "not json").ok());
  EXPECT_FALSE(Parse(parser, "[1,2,3]").ok());
  EXPECT_FALSE(Parse(parser, R"({"jobData":{"job_id":1}})").ok());
  EXPECT_FALSE(Parse(parser, R"({"Event":42})").ok());
  EXPECT_FALSE(Parse(parser, full + "}").ok());
  EXPECT_FALSE(Parse(parser, R"({"Event":"SparkListenerTaskEnd","Stage ID":1})").ok());
  EXPECT_TRUE(sink.task_ends.empty());
  Status status = Parse(parser, "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":");
  ASSERT_FALSE(status.ok());
  EXPECT_FALSE(status.message().empty()) << status.message();
  std::printf("truncated JobEnd -> %s\n", status.message().c_str());
}

TEST(EventParser, HostileValuesAreTolerated) {
  RecordingSink sink;
  EventParser parser(sink);
  // Numbers of the wrong type or out of range do not abort the event.
  ASSERT_TRUE(
      Parse(
          parser,
          R"({"Event":"SparkListenerExecutorRemoved","Timestamp":1e300,"Executor ID":12,"Removed Reason":null})")
          .ok());
  ASSERT_EQ(sink.removed.size(), 1u);
  EXPECT_EQ(sink.removed[0].executor_id, "12");
  EXPECT_GT(sink.removed[0].timestamp_ms, 0);
  EXPECT_TRUE(sink.removed[0].reason.empty());
  // Deep nesting in a plan is bounded, not a stack overflow.
  std::string deep =
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":1,"sparkPlanInfo":)";
  for (int i = 0; i < 2000; ++i) deep += R"({"nodeName":"n","children":[)";
  for (int i = 0; i < 2000; ++i) deep += "]}";
  deep += "}";
  EXPECT_FALSE(Parse(parser, deep).ok());
}

// ParserLimits (docs/limits.md), each at the limit and one past it.
std::string SqlStart(const std::string& plan_info, const std::string& physical_plan = "p") {
  return R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",)"
         R"("executionId":1,"physicalPlanDescription":")" +
         physical_plan + R"(","sparkPlanInfo":)" + plan_info + R"(,"time":1})";
}

std::string NestedPlan(int nodes) {
  std::string plan;
  for (int i = 0; i < nodes; ++i) plan += R"({"nodeName":"n","children":[)";
  for (int i = 0; i < nodes; ++i) plan += "]}";
  return plan;
}

TEST(EventParser, PlanLimitsAtAndPastTheLimit) {
  ParserLimits limits;
  limits.max_plan_depth = 5;
  limits.max_plan_nodes = 3;
  limits.max_plan_string_bytes = 4;
  limits.max_plan_text_bytes = 6;
  RecordingSink sink;
  EventParser parser(sink, limits);
  // Depth: the root is depth 0, so 6 nested nodes reach depth 5.
  EXPECT_TRUE(Parse(parser, SqlStart(NestedPlan(6))).ok());
  EXPECT_FALSE(Parse(parser, SqlStart(NestedPlan(7))).ok());
  // Nodes: the first max_plan_nodes are kept, the event is still read.
  ASSERT_TRUE(Parse(parser, SqlStart(NestedPlan(3))).ok());
  EXPECT_EQ(sink.sql.back().plan.size(), 3u);
  ASSERT_TRUE(Parse(parser, SqlStart(NestedPlan(4))).ok());
  EXPECT_EQ(sink.sql.back().plan.size(), 3u);
  // Strings: cut to the byte limit, never inside a UTF-8 character.
  auto simple = [&](const std::string& text) {
    EXPECT_TRUE(Parse(parser, SqlStart(R"({"nodeName":"n","simpleString":")" + text +
                                       R"(","metadata":{"Format":")" + text + R"("}})"))
                    .ok());
    EXPECT_EQ(sink.sql.back().plan[0].metadata.at(0).second, sink.sql.back().plan[0].simple_string);
    return sink.sql.back().plan[0].simple_string;
  };
  EXPECT_EQ(simple("abcd"), "abcd");
  EXPECT_EQ(simple("abcde"), "abcd");
  EXPECT_EQ(simple("ab\u65e5"), "ab");  // 日 is 3 bytes: "ab" + 3 > 4
  // The physical plan text.
  ASSERT_TRUE(Parse(parser, SqlStart(NestedPlan(1), "123456")).ok());
  EXPECT_EQ(sink.sql.back().physical_plan, "123456");
  ASSERT_TRUE(Parse(parser, SqlStart(NestedPlan(1), "1234567")).ok());
  EXPECT_EQ(sink.sql.back().physical_plan, "123456");
}

TEST(EventParser, FailureMessageLimitAtAndPastTheLimit) {
  ParserLimits limits;
  limits.max_message_bytes = 5;
  RecordingSink sink;
  EventParser parser(sink, limits);
  auto message = [&](const std::string& description) {
    std::string line =
        R"({"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,)"
        R"("Task End Reason":{"Reason":"ExceptionFailure","Description":")" +
        description +
        R"("},"Task Info":{"Task ID":1,"Index":0,"Attempt":0,"Launch Time":1,)"
        R"("Executor ID":"1","Host":"h","Locality":"ANY","Finish Time":2,"Failed":true}})";
    EXPECT_TRUE(Parse(parser, line).ok());
    return sink.task_ends.back().reason.message_head;
  };
  EXPECT_EQ(message("boom!"), "boom!");
  EXPECT_EQ(message("boom!!"), "boom!");
  EXPECT_EQ(message("boo\u00e9!"), "boo\xC3\xA9");  // 5 bytes: é fits exactly
  EXPECT_EQ(message("booo\u00e9"), "booo");
}

TEST(EventParser, FirstLineCutsOnUtf8Boundary) {
  EXPECT_EQ(FirstLine("abc\ndef", 100), "abc");
  EXPECT_EQ(FirstLine("h\xC3\xA9llo", 2), "h");
  EXPECT_EQ(FirstLine("", 10), "");
}

}  // namespace
}  // namespace sparkprof::eventlog
