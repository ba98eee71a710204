// The streaming rules on clearly synthetic event logs: one streaming query whose batches are
// written to have (or not have) each problem, analysed as `sparkprof analyze` does.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/report/text_report.h"
#include "analyzer/testing/analysis_test_util.h"

namespace sparkprof::diagnosis {
namespace {

using test_util::AnalyzeText;
using test_util::EvidenceValue;
using test_util::FindingsOf;
using test_util::RecommendsKey;

constexpr int64_t kStart = 1796007900000;  // 2026-11-30T03:05:00Z
const std::string kListener = "org.apache.spark.sql.streaming.StreamingQueryListener$";

std::string Iso(int64_t epoch_ms) {
  // 2026-11-30 (day 20,787 since the epoch); the tests stay within that day.
  const int64_t day_ms = epoch_ms % 86'400'000;
  char text[40];
  std::snprintf(text, sizeof(text), "2026-11-30T%02lld:%02lld:%02lld.%03lldZ",
                static_cast<long long>(day_ms / 3'600'000),
                static_cast<long long>(day_ms / 60'000 % 60),
                static_cast<long long>(day_ms / 1000 % 60), static_cast<long long>(day_ms % 1000));
  return text;
}

struct Batch {
  int64_t start_ms;
  int64_t duration_ms;
  int64_t rows;
  int64_t planning_ms = 0;  // with wal and commit: the bookkeeping, each this long
  int64_t state_rows = -1;
  int64_t watermark_ms = -1;
  int tasks = 0;  // tasks of the batch's job
};

// A local-mode application (2 slots) running one query with these batches.
class StreamingLog {
 public:
  explicit StreamingLog(std::string master = "local[2]") {
    out_ << R"({"Event":"SparkListenerLogStart","Spark Version":"3.5.9"})"
         << "\n";
    out_
        << R"({"Event":"SparkListenerApplicationStart","App Name":"s","App ID":"local-1","Timestamp":)"
        << kStart << R"(,"User":"u"})"
        << "\n";
    out_ << R"({"Event":"SparkListenerEnvironmentUpdate","Spark Properties":{"spark.master":")"
         << master << R"(","spark.driver.memory":"1g"},"JVM Information":{}})"
         << "\n";
    out_ << R"({"Event":"SparkListenerExecutorAdded","Timestamp":)" << kStart
         << R"(,"Executor ID":"driver","Executor Info":{"Host":"h","Total Cores":2}})"
         << "\n";
    out_ << R"({"Event":")" << kListener
         << R"(QueryStartedEvent","id":"q1","runId":"run1","name":"orders","timestamp":")"
         << Iso(kStart + 100) << "\"}\n";
  }

  void Add(int64_t id, const Batch& b) {
    if (b.tasks > 0) {
      const int stage = static_cast<int>(id);
      out_ << R"({"Event":"SparkListenerJobStart","Job ID":)" << id << R"(,"Submission Time":)"
           << b.start_ms + 1 << R"(,"Stage Infos":[{"Stage ID":)" << stage
           << R"(,"Stage Attempt ID":0,"Stage Name":"b","Number of Tasks":)" << b.tasks
           << R"(}],"Stage IDs":[)" << stage
           << R"(],"Properties":{"spark.jobGroup.id":"run1","sql.streaming.queryId":"q1",)"
           << R"("streaming.sql.batchId":")" << id << "\"}}\n";
      for (int t = 0; t < b.tasks; ++t) {
        out_
            << R"({"Event":"SparkListenerTaskEnd","Stage ID":)" << stage
            << R"(,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":{"Reason":"Success"},)"
            << R"("Task Info":{"Task ID":)" << task_id_++ << R"(,"Index":)" << t
            << R"(,"Attempt":0,"Launch Time":)" << b.start_ms + 2
            << R"(,"Executor ID":"driver","Host":"h","Finish Time":)" << b.start_ms + 4
            << R"(},"Task Metrics":{"Executor Run Time":2}})"
            << "\n";
      }
      out_ << R"({"Event":"SparkListenerJobEnd","Job ID":)" << id << R"(,"Completion Time":)"
           << b.start_ms + b.duration_ms - 1 << R"(,"Job Result":{"Result":"JobSucceeded"}})"
           << "\n";
    }
    const int64_t bookkeeping = 3 * b.planning_ms;
    out_ << R"({"Event":")" << kListener << R"(QueryProgressEvent","progress":{"id":"q1",)"
         << R"("runId":"run1","name":"orders","timestamp":")" << Iso(b.start_ms)
         << R"(","batchId":)" << id << R"(,"batchDuration":)" << b.duration_ms
         << R"(,"durationMs":{"triggerExecution":)" << b.duration_ms << R"(,"queryPlanning":)"
         << b.planning_ms << R"(,"walCommit":)" << b.planning_ms << R"(,"commitOffsets":)"
         << b.planning_ms << R"(,"addBatch":)" << std::max<int64_t>(b.duration_ms - bookkeeping, 0)
         << R"(},"eventTime":{)";
    if (b.watermark_ms >= 0) out_ << R"("watermark":")" << Iso(b.watermark_ms) << "\"";
    out_ << "}";
    if (b.state_rows >= 0) {
      out_ << R"(,"stateOperators":[{"operatorName":"stateStoreSave","numRowsTotal":)"
           << b.state_rows << R"(,"numRowsUpdated":10,"numRowsRemoved":0,"memoryUsedBytes":)"
           << b.state_rows * 400 << R"(,"commitTimeMs":5,"numShufflePartitions":200}])";
    }
    out_ << R"(,"sources":[{"description":"RateStreamV2[rowsPerSecond=1000]","numInputRows":)"
         << b.rows << R"(}],"sink":{"description":"noop","numOutputRows":)" << b.rows << "}}}\n";
    end_ms_ = b.start_ms + b.duration_ms;
  }

  std::string Finish(bool cancelled_last_batch = true) {
    if (cancelled_last_batch) {
      // query.stop() while the next batch ran: its job's group (the run id) was cancelled.
      out_ << R"({"Event":"SparkListenerJobStart","Job ID":9999,"Submission Time":)" << end_ms_ + 5
           << R"(,"Stage Infos":[],"Stage IDs":[],"Properties":{"spark.jobGroup.id":"run1",)"
           << R"("sql.streaming.queryId":"q1","streaming.sql.batchId":"9999"}})"
           << "\n";
      out_ << R"({"Event":"SparkListenerJobEnd","Job ID":9999,"Completion Time":)" << end_ms_ + 50
           << R"(,"Job Result":{"Result":"JobFailed","Exception":{"Message":)"
           << R"("Job 9999 cancelled part of cancelled job group run1"}}})"
           << "\n";
    }
    out_ << R"({"Event":")" << kListener
         << R"(QueryTerminatedEvent","id":"q1","runId":"run1","exception":null})"
         << "\n";
    out_ << R"({"Event":"SparkListenerApplicationEnd","Timestamp":)" << end_ms_ + 100 << "}\n";
    return out_.str();
  }

 private:
  std::ostringstream out_;
  int64_t task_id_ = 0;
  int64_t end_ms_ = kStart;
};

bool Has(const report::Analysis& a, const char* rule) { return !FindingsOf(a, rule).empty(); }

// A real event log of analyzer/diagnosis/testdata whose one query ran `batches` batches on a
// `trigger_ms` trigger and was stopped mid-batch: analysed, its stop never a job failure.
report::Analysis AnalyzeStoppedQuery(const std::string& name, int64_t batches, int64_t trigger_ms) {
  std::optional<report::Analysis> a = test_util::AnalyzeFile(
      std::filesystem::path(SPARKPROF_SOURCE_DIR) / "analyzer/diagnosis/testdata" / name, name);
  if (!a.has_value()) {
    ADD_FAILURE() << "missing " << name;
    return report::Analysis{};
  }
  const std::vector<model::StreamingQueryRun>& runs = a->model.streaming.runs;
  EXPECT_EQ(runs.size(), 1u);
  if (runs.size() == 1) {
    EXPECT_EQ(runs[0].batches_total, batches);
    EXPECT_EQ(runs[0].trigger_interval_ms, trigger_ms);
    EXPECT_EQ(runs[0].cancelled_jobs, 1);
  }
  EXPECT_FALSE(Has(*a, "job-failures")) << report::RenderText(*a);
  return std::move(*a);
}

void ExpectNoStreamingFinding(const report::Analysis& a, const char* except = "") {
  for (const char* rule :
       {"falling-behind", "batch-over-trigger", "batch-overhead", "state-growth"}) {
    if (std::string(rule) == except) continue;
    EXPECT_FALSE(Has(a, rule)) << rule << "\n" << report::RenderText(a);
  }
}

// 1000 rows/s arriving; batches back to back, each 1.25x as long as the one before: each reads
// what arrived while the previous one ran.
TEST(StreamingRules, FallingBehindWhenBatchesGrow) {
  StreamingLog log;
  int64_t t = kStart + 1000, duration = 400, previous = -1;
  for (int64_t id = 0; id < 14; ++id) {
    log.Add(id, {t, duration, previous + 1});  // 1000 rows/s while the previous batch ran
    t += duration + 1;
    previous = duration;
    duration = duration * 5 / 4;
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  const auto found = FindingsOf(a, "falling-behind");
  ASSERT_EQ(found.size(), 1u) << report::RenderText(a);
  const Finding& f = *found[0];
  EXPECT_GT(EvidenceValue(f, "busy_share"), 1.15);
  EXPECT_LT(EvidenceValue(f, "processed_rows_per_second"),
            EvidenceValue(f, "input_rows_per_second"));
  EXPECT_GT(EvidenceValue(f, "lag_growth_ms"), EvidenceValue(f, "mean_batch_ms"));
  // The figures recompute from the evidence: busy share = busy / span.
  EXPECT_NEAR(EvidenceValue(f, "busy_share"),
              EvidenceValue(f, "busy_ms") / EvidenceValue(f, "span_ms"), 1e-3);
  EXPECT_TRUE(RecommendsKey(f, "spark.master"));  // local mode: more slots in local[N]
  EXPECT_GT(f.impact.time_saved_ms_high, 0);
  EXPECT_FALSE(Has(a, "job-failures")) << "the stop's cancelled batch is not a failure";
  EXPECT_NE(report::RenderText(a).find("cancelled when the query stopped"), std::string::npos);
}

// The same query with a 1 s trigger it keeps: batches of 300 ms every second.
TEST(StreamingRules, HealthyTriggeredQueryRaisesNothing) {
  StreamingLog log;
  for (int64_t id = 0; id < 20; ++id) {
    log.Add(id, {kStart + 1000 * (id + 1) + id % 3, 300, 1000});
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  ExpectNoStreamingFinding(a);
  EXPECT_FALSE(Has(a, "job-failures"));
  ASSERT_EQ(a.model.streaming.runs.size(), 1u);
  EXPECT_EQ(a.model.streaming.runs[0].trigger_interval_ms, 1000);
  const std::string text = report::RenderText(a);
  EXPECT_NE(text.find("Streaming queries"), std::string::npos) << text;
  EXPECT_NE(text.find("every 1.0 s"), std::string::npos) << text;
}

// A 1 s trigger kept by the first 5 batches, then batches of 3 s back to back over steady input
// (50 rows/s: 150 rows a batch): over the trigger, not falling behind.
TEST(StreamingRules, BatchOverTriggerWithoutFallingBehind) {
  StreamingLog log;
  int64_t id = 0;
  for (; id < 5; ++id) log.Add(id, {kStart + 1000 * (id + 1), 200, 50});
  int64_t t = kStart + 6000;
  for (; id < 16; ++id) {
    log.Add(id, {t, 3000, 150});
    t += 3001;
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  const auto found = FindingsOf(a, "batch-over-trigger");
  ASSERT_EQ(found.size(), 1u) << report::RenderText(a);
  EXPECT_EQ(EvidenceValue(*found[0], "trigger_interval_ms"), 1000);
  EXPECT_EQ(EvidenceValue(*found[0], "median_batch_ms"), 3000);
  EXPECT_LE(found[0]->severity, Severity::kWarning);
  EXPECT_FALSE(Has(a, "falling-behind")) << report::RenderText(a);
}

// Batches of 3 rows running 40 tasks each on 2 slots, busy most of the time.
TEST(StreamingRules, BatchOverheadOfEmptyTasks) {
  StreamingLog log;
  for (int64_t id = 0; id < 12; ++id) {
    Batch b{kStart + 1000 * (id + 1), 900, 3};
    b.tasks = 40;
    b.state_rows = 5;
    b.watermark_ms = kStart;
    log.Add(id, b);
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  const auto found = FindingsOf(a, "batch-overhead");
  ASSERT_EQ(found.size(), 1u) << report::RenderText(a);
  EXPECT_EQ(EvidenceValue(*found[0], "tasks_per_batch"), 40);
  EXPECT_TRUE(RecommendsKey(*found[0], "spark.sql.shuffle.partitions"));
  EXPECT_NE(found[0]->recommendations[0].reason.find("new checkpoint"), std::string::npos);
  EXPECT_FALSE(Has(a, "state-growth")) << "a watermark bounds the state";

  // The same batches with their trigger mostly idle (busy a tenth of the time): silent.
  StreamingLog idle;
  for (int64_t id = 0; id < 12; ++id) {
    Batch b{kStart + 10000 * (id + 1), 900, 3};
    b.tasks = 40;
    idle.Add(id, b);
  }
  EXPECT_FALSE(Has(AnalyzeText(idle.Finish()), "batch-overhead"));
}

// Two thirds of each batch is planning, WAL and commit.
TEST(StreamingRules, BatchOverheadOfBookkeeping) {
  StreamingLog log;
  for (int64_t id = 0; id < 12; ++id) {
    Batch b{kStart + 500 * (id + 1), 450, 20};
    b.planning_ms = 100;
    log.Add(id, b);
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  const auto found = FindingsOf(a, "batch-overhead");
  ASSERT_EQ(found.size(), 1u) << report::RenderText(a);
  EXPECT_NEAR(EvidenceValue(*found[0], "bookkeeping_share"), 300.0 / 450, 1e-3);
  EXPECT_EQ(found[0]->recommendations[0].config_key, "trigger");
  EXPECT_NE(found[0]->recommendations[0].value.find("2 seconds"), std::string::npos)
      << found[0]->recommendations[0].value;  // 4 x 300 ms, rounded up to a second
}

TEST(StreamingRules, StateGrowthWithoutWatermarkOnly) {
  StreamingLog log;
  for (int64_t id = 0; id < 12; ++id) {
    Batch b{kStart + 1000 * (id + 1), 300, 1000};
    b.state_rows = 1000 * (id + 1);
    log.Add(id, b);
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  const auto found = FindingsOf(a, "state-growth");
  ASSERT_EQ(found.size(), 1u) << report::RenderText(a);
  EXPECT_EQ(EvidenceValue(*found[0], "state_rows"), 12000);
  EXPECT_EQ(EvidenceValue(*found[0], "state_rows_grown"), 6000);  // batches 6..11 over 5's
  // 400 bytes a row: 2.4 MB in 6 s; the 1 GiB driver heap (local mode) fills in ~44 minutes.
  EXPECT_NEAR(EvidenceValue(*found[0], "until_heap_ms") / 60000.0, 44.6, 1.0);

  StreamingLog watermarked;
  for (int64_t id = 0; id < 12; ++id) {
    Batch b{kStart + 1000 * (id + 1), 300, 1000};
    b.state_rows = 1000 * (id + 1);
    b.watermark_ms = kStart + 1000 * id;
    watermarked.Add(id, b);
  }
  EXPECT_FALSE(Has(AnalyzeText(watermarked.Finish()), "state-growth"));
}

// A real run: Spark 3.5.9 in local[2], tests/workloads/apps/streaming.py state_growth (then 30 s,
// spark.sql.shuffle.partitions=4), stopped with query.stop() while a batch ran:
//   spark-submit --master 'local[2]' --py-files common.py --conf spark.eventLog.enabled=true
//     --conf spark.sql.shuffle.partitions=4 streaming.py state_growth SCRATCH
TEST(StreamingRules, RealSpark35RunOfAStatefulQueryStoppedMidBatch) {
  // The batch the stop cancelled was reported as a critical job failure before.
  const report::Analysis a =
      AnalyzeStoppedQuery("streaming_state_growth_local_3.5.9.zstd", 26, 1000);
  ASSERT_EQ(a.model.streaming.runs.size(), 1u);
  EXPECT_EQ(a.model.streaming.runs[0].batches.back().state_rows_total, 56000);
  EXPECT_EQ(a.model.streaming.runs[0].batches.back().jobs, 1);
  EXPECT_TRUE(Has(a, "state-growth")) << report::RenderText(a);
  EXPECT_FALSE(Has(a, "falling-behind"));
  EXPECT_FALSE(Has(a, "batch-over-trigger"));
}

// A real run: Spark 4.2.0 on a standalone cluster (2 workers of 1 core), the workload corpus's
// healthy_stream (tests/workloads/manifest.json, recorded by generate.py --only healthy_stream)
// on a busy machine: 200 rows/s
// every 2 s, stopped while a batch ran. Spark 4.2 writes the stop's cancellation as
// "[SPARK_JOB_CANCELLED] Job N cancelled Query healthy [id = .., runId = ..] was stopped".
TEST(StreamingRules, RealSpark42HealthyControlStoppedMidBatch) {
  ExpectNoStreamingFinding(
      AnalyzeStoppedQuery("streaming_healthy_standalone_4.2.0.zstd", 13, 2000));
}

}  // namespace
}  // namespace sparkprof::diagnosis
