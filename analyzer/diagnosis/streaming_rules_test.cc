// The streaming rules on clearly synthetic event logs: one streaming query whose batches are
// written to have (or not have) each problem, analysed as `sparkprof analyze` does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/streaming_batches.h"
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
  // Parts written as given when >= 0 (else walCommit and commitOffsets are planning_ms, the
  // source's parts absent); addBatch is the rest of the batch.
  int64_t latest_offset_ms = -1;
  int64_t wal_commit_ms = -1;
  int64_t commit_offsets_ms = -1;
  int64_t job_ms = -1;  // the job's wall time (else the batch's, less 2 ms)
  // A stateful stage in the batch's job: one task per state partition, these run times and
  // shuffle records read.
  std::vector<int64_t> state_task_ms = {};
  std::vector<int64_t> state_task_records = {};
  int64_t state_partitions = 200;
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
    const int64_t job_end =
        b.job_ms >= 0 ? b.start_ms + 1 + b.job_ms : b.start_ms + b.duration_ms - 1;
    const int state_tasks = static_cast<int>(b.state_task_ms.size());
    if (b.tasks > 0) {
      const int stage = static_cast<int>(id);
      const int state_stage = 100000 + stage;
      out_ << R"({"Event":"SparkListenerJobStart","Job ID":)" << id << R"(,"Submission Time":)"
           << b.start_ms + 1 << R"(,"Stage Infos":[{"Stage ID":)" << stage
           << R"(,"Stage Attempt ID":0,"Stage Name":"b","Number of Tasks":)" << b.tasks << "}";
      if (state_tasks > 0) {
        out_ << R"(,{"Stage ID":)" << state_stage
             << R"(,"Stage Attempt ID":0,"Stage Name":"state","Number of Tasks":)" << state_tasks
             << "}";
      }
      out_ << R"(],"Stage IDs":[)" << stage;
      if (state_tasks > 0) out_ << "," << state_stage;
      out_ << R"(],"Properties":{"spark.jobGroup.id":"run1","sql.streaming.queryId":"q1",)"
           << R"("streaming.sql.batchId":")" << id << "\"}}\n";
      for (int t = 0; t < state_tasks; ++t) {
        out_ << R"({"Event":"SparkListenerTaskEnd","Stage ID":)" << state_stage
             << R"(,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":)"
             << R"({"Reason":"Success"},"Task Info":{"Task ID":)" << task_id_++ << R"(,"Index":)"
             << t << R"(,"Attempt":0,"Launch Time":)" << b.start_ms + 2
             << R"(,"Executor ID":"driver","Host":"h","Finish Time":)"
             << b.start_ms + 2 + b.state_task_ms[t] << R"(},"Task Metrics":{"Executor Run Time":)"
             << b.state_task_ms[t] << R"(,"Shuffle Read Metrics":{"Total Records Read":)"
             << (t < static_cast<int>(b.state_task_records.size()) ? b.state_task_records[t] : 1)
             << "}}}\n";
      }
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
           << job_end << R"(,"Job Result":{"Result":"JobSucceeded"}})"
           << "\n";
    }
    const int64_t wal = b.wal_commit_ms >= 0 ? b.wal_commit_ms : b.planning_ms;
    const int64_t commit = b.commit_offsets_ms >= 0 ? b.commit_offsets_ms : b.planning_ms;
    const int64_t latest = std::max<int64_t>(b.latest_offset_ms, 0);
    const int64_t bookkeeping = b.planning_ms + wal + commit + latest;
    out_ << R"({"Event":")" << kListener << R"(QueryProgressEvent","progress":{"id":"q1",)"
         << R"("runId":"run1","name":"orders","timestamp":")" << Iso(b.start_ms)
         << R"(","batchId":)" << id << R"(,"batchDuration":)" << b.duration_ms
         << R"(,"durationMs":{"triggerExecution":)" << b.duration_ms << R"(,"queryPlanning":)"
         << b.planning_ms << R"(,"walCommit":)" << wal << R"(,"commitOffsets":)" << commit
         << R"(,"latestOffset":)" << latest << R"(,"getBatch":0,"addBatch":)"
         << std::max<int64_t>(b.duration_ms - bookkeeping, 0) << R"(},"eventTime":{)";
    if (b.watermark_ms >= 0) out_ << R"("watermark":")" << Iso(b.watermark_ms) << "\"";
    out_ << "}";
    if (b.state_rows >= 0) {
      out_ << R"(,"stateOperators":[{"operatorName":"stateStoreSave","numRowsTotal":)"
           << b.state_rows << R"(,"numRowsUpdated":10,"numRowsRemoved":0,"memoryUsedBytes":)"
           << b.state_rows * 400 << R"(,"commitTimeMs":5,"numShufflePartitions":)"
           << (state_tasks > 0 ? state_tasks : b.state_partitions) << "}]";
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
  for (const char* rule : {"falling-behind", "batch-over-trigger", "batch-overhead", "state-growth",
                           "slow-source", "slow-commit", "state-skew"}) {
    if (std::string(rule) == except) continue;
    EXPECT_FALSE(Has(a, rule)) << rule << "\n" << report::RenderText(a);
  }
}

// A query on a 10 s trigger whose batches take 300 ms: 97% of the run has no task, all of it
// while the query runs (its trigger waits) -- the streaming rules' to judge, not driver-bound's,
// which still judges the driver alone before the query started.
TEST(StreamingRules, DriverBoundLeavesTheQuerysOwnTimeToTheStreamingRules) {
  StreamingLog log;
  for (int64_t id = 0; id < 30; ++id) {
    log.Add(id, {kStart + 10'000 * (id + 1), 300, 100, 0, -1, -1, 1});
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  EXPECT_GT(a.phases.driver_only_ms, 250'000);  // the phase is still the whole gap
  EXPECT_FALSE(Has(a, "driver-bound")) << report::RenderText(a);
  const std::vector<std::pair<int64_t, int64_t>> lifetimes =
      QueryLifetimes(a.model.streaming, a.model.end_time_ms);
  ASSERT_EQ(lifetimes.size(), 1u);
  EXPECT_EQ(lifetimes[0].first, kStart + 100);             // the query's start
  EXPECT_EQ(lifetimes[0].second, kStart + 300'000 + 300);  // its last batch's end

  // The same query started only after 205 s of the driver working alone: that is driver-bound's.
  StreamingLog late;
  for (int64_t id = 0; id < 30; ++id) {
    late.Add(id, {kStart + 200'000 + 10'000 * (id + 1), 300, 100, 0, -1, -1, 1});
  }
  std::string text = late.Finish();
  // The query's start event, moved to when its first batch is due.
  const std::string started = "\"timestamp\":\"" + Iso(kStart + 100) + "\"";
  const size_t at = text.find(started);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, started.size(), "\"timestamp\":\"" + Iso(kStart + 205'000) + "\"");
  const report::Analysis b = AnalyzeText(text);
  const std::vector<const Finding*> bound = FindingsOf(b, "driver-bound");
  ASSERT_EQ(bound.size(), 1u) << report::RenderText(b);
  EXPECT_NEAR(EvidenceValue(*bound[0], "driver_only_ms"), 205'000, 1'000);
  EXPECT_GT(EvidenceValue(*bound[0], "streaming_queries_driver_only_ms"), 250'000);
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

// Real runs' first batches: tests/workloads falling_behind (a pandas UDF waiting 1 ms a row on 2
// slots, 3000 rows/s in, no trigger) on Spark 3.5.9 and 4.2.0, its batches 0-3 as their progress
// events recorded them (start offset from batch 0 in ms, triggerExecution, rows). A run cut
// after four batches (a slower host, a shorter run) still shows the query falling behind: the
// last three each started with more rows waiting and ended with an older oldest row.
TEST(StreamingRules, FallingBehindOnThreeBatchesOfRealRuns) {
  struct Recorded {
    int64_t start_ms, duration_ms, rows;
  };
  const std::vector<std::vector<Recorded>> runs = {
      // 3.5.9: 07:18:53.734, 07:18:57.099, 07:19:06.528, 07:19:20.670
      {{0, 3336, 0}, {3365, 9427, 9000}, {12794, 14140, 27000}, {26936, 23201, 45000}},
      // 4.2.0: 07:22:11.157, 07:22:13.965, 07:22:23.520, 07:22:39.206
      {{0, 2680, 0}, {2808, 9553, 6000}, {12363, 15682, 30000}, {28049, 24529, 48000}},
  };
  for (const std::vector<Recorded>& run : runs) {
    StreamingLog log;
    for (size_t id = 0; id < run.size(); ++id) {
      log.Add(static_cast<int64_t>(id),
              {kStart + 1000 + run[id].start_ms, run[id].duration_ms, run[id].rows});
    }
    const report::Analysis a = AnalyzeText(log.Finish());
    const auto found = FindingsOf(a, "falling-behind");
    ASSERT_EQ(found.size(), 1u) << report::RenderText(a);
    EXPECT_EQ(EvidenceValue(*found[0], "batches"), 3);
    EXPECT_EQ(EvidenceValue(*found[0], "growing_batches"), 3);
    EXPECT_GT(EvidenceValue(*found[0], "busy_share"), 1.5);
    EXPECT_FALSE(Has(a, "batch-over-trigger"));
  }
}

// A query at capacity (no trigger, 1000 rows/s, batches back to back) whose batches vary: the
// lag rises for a batch or two and falls again. Neither run falls behind.
TEST(StreamingRules, AtCapacityQueryThatCatchesUpIsNotFallingBehind) {
  for (const std::vector<int64_t>& durations :
       {std::vector<int64_t>{1000, 1200, 1500, 900},  // caught up: busy under the span
        std::vector<int64_t>{1000, 800, 1200, 1500},  // two rising batches only
        std::vector<int64_t>{1000, 1100, 900, 1200, 1000, 1300, 950, 1150}}) {
    StreamingLog log;
    int64_t t = kStart + 1000, previous = -1;
    for (size_t id = 0; id < durations.size(); ++id) {
      log.Add(static_cast<int64_t>(id), {t, durations[id], previous + 1});
      t += durations[id] + 1;
      previous = durations[id];
    }
    const report::Analysis a = AnalyzeText(log.Finish());
    EXPECT_FALSE(Has(a, "falling-behind")) << report::RenderText(a);
  }
}

// The checkpoint's two writes take 600 ms of each 1 s batch, back to back (an object store's
// PUT and COPY a write; clearly synthetic): slow-commit names the checkpoint, batch-overhead
// leaves it. The same batches on a 10 s trigger delay only their output: silent.
TEST(StreamingRules, SlowCommitOfTheCheckpoint) {
  StreamingLog log;
  for (int64_t id = 0; id < 12; ++id) {
    Batch b{kStart + 1001 * (id + 1), 1000, 1000};
    b.planning_ms = 20;
    b.wal_commit_ms = 300;
    b.commit_offsets_ms = 300;
    b.tasks = 2;
    log.Add(id, b);
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  const auto found = FindingsOf(a, "slow-commit");
  ASSERT_EQ(found.size(), 1u) << report::RenderText(a);
  EXPECT_EQ(EvidenceValue(*found[0], "checkpoint_ms"), 600 * EvidenceValue(*found[0], "batches"));
  EXPECT_NEAR(EvidenceValue(*found[0], "commit_share"), 0.6, 1e-3);
  EXPECT_TRUE(RecommendsKey(*found[0], "checkpointLocation"));
  EXPECT_TRUE(RecommendsKey(*found[0], "trigger"));
  EXPECT_EQ(found[0]->impact.time_saved_ms_high, EvidenceValue(*found[0], "commit_ms"));
  EXPECT_FALSE(Has(a, "batch-overhead")) << report::RenderText(a);
  EXPECT_FALSE(Has(a, "slow-source"));

  StreamingLog idle;
  for (int64_t id = 0; id < 12; ++id) {
    Batch b{kStart + 10000 * (id + 1), 1000, 1000};
    b.wal_commit_ms = 300;
    b.commit_offsets_ms = 300;
    b.tasks = 2;
    idle.Add(id, b);
  }
  EXPECT_FALSE(Has(AnalyzeText(idle.Finish()), "slow-commit"));
}

// A real run: Spark 3.5.9 on a standalone cluster (2 workers of 1 core), tests/workloads
// slow_sink_commit (a foreachBatch sink counting each batch, then committing on the driver for
// 2 s; 200 rows/s on a 3 s trigger): per batch its start (ms after batch 0's), triggerExecution,
// rows, queryPlanning, walCommit, commitOffsets and its job's wall time (addBatch is the rest of
// the batch here, within 15 ms of the recorded one).
TEST(StreamingRules, SlowCommitOfTheSinkInARealRun) {
  struct Recorded {
    int64_t start_ms, duration_ms, rows, planning_ms, wal_ms, commit_ms, job_ms;
  };
  const std::vector<Recorded> batches = {
      {0, 8287, 0, 1119, 107, 65, 3070},   {8327, 7261, 1600, 26, 210, 46, 4621},
      {15591, 2918, 1400, 8, 47, 48, 528}, {18510, 2736, 600, 14, 42, 69, 452},
      {21247, 2671, 600, 18, 60, 44, 417}, {23920, 2741, 600, 9, 41, 46, 418},
      {26662, 2426, 400, 8, 48, 48, 239},  {29090, 2776, 600, 7, 46, 57, 436},
      {31868, 2638, 400, 9, 42, 51, 360},  {34506, 2419, 600, 11, 42, 39, 242},
      {37140, 2639, 600, 13, 41, 42, 415}, {40140, 2600, 600, 6, 46, 49, 444},
  };
  StreamingLog log;
  for (size_t id = 0; id < batches.size(); ++id) {
    const Recorded& r = batches[id];
    Batch b{kStart + 1000 + r.start_ms, r.duration_ms, r.rows};
    b.planning_ms = r.planning_ms;
    b.wal_commit_ms = r.wal_ms;
    b.commit_offsets_ms = r.commit_ms;
    b.job_ms = r.job_ms;
    b.tasks = 2;
    log.Add(static_cast<int64_t>(id), b);
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  const auto found = FindingsOf(a, "slow-commit");
  ASSERT_EQ(found.size(), 1u) << report::RenderText(a);
  const Finding& f = *found[0];
  EXPECT_EQ(EvidenceValue(f, "batches"), 6);  // batches 6-11
  // Per batch addBatch - its job: 2083, 2230, 2176, 2085, 2128, 2055 ms.
  EXPECT_EQ(EvidenceValue(f, "sink_driver_ms"), 12757);
  EXPECT_EQ(EvidenceValue(f, "checkpoint_ms"), 551);
  EXPECT_NEAR(EvidenceValue(f, "commit_share"), 13308.0 / 15498, 1e-3);
  EXPECT_FALSE(RecommendsKey(f, "checkpointLocation"));
  EXPECT_TRUE(RecommendsKey(f, "trigger"));
  EXPECT_NE(f.title.find("sink"), std::string::npos) << f.title;
  EXPECT_EQ(f.impact.time_saved_ms_high, 13308);
  EXPECT_FALSE(Has(a, "batch-overhead"));
  EXPECT_FALSE(Has(a, "falling-behind"));
  EXPECT_FALSE(Has(a, "batch-over-trigger"));
}

// latestOffset takes 700 ms of each 1 s batch (a directory listing; clearly synthetic).
TEST(StreamingRules, SlowSource) {
  StreamingLog log;
  for (int64_t id = 0; id < 12; ++id) {
    Batch b{kStart + 1001 * (id + 1), 1000, 1000};
    b.latest_offset_ms = 700;
    b.tasks = 2;
    log.Add(id, b);
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  const auto found = FindingsOf(a, "slow-source");
  ASSERT_EQ(found.size(), 1u) << report::RenderText(a);
  EXPECT_NEAR(EvidenceValue(*found[0], "source_share"), 0.7, 1e-3);
  EXPECT_TRUE(RecommendsKey(*found[0], "trigger"));
  // 4 x 700 ms, rounded up to a second.
  EXPECT_NE(found[0]->recommendations.back().value.find("3 seconds"), std::string::npos)
      << found[0]->recommendations.back().value;
  EXPECT_FALSE(Has(a, "slow-commit"));
  EXPECT_FALSE(Has(a, "batch-overhead"));
}

// A real run: Spark 3.5.9 in local[2], tests/workloads StreamingJvm skewed_state_key (a count
// per key by flatMapGroupsWithState waiting 1 ms a row, 300 rows/s on a 3 s trigger, 90% of the
// rows on key 0, spark.sql.shuffle.partitions=4): per batch its start (ms after batch 0's),
// triggerExecution, rows, and its stateful stage's 4 tasks' run time and shuffle records read.
// Partition 1 holds key 0 in every batch. The same stage with the slow task on another partition
// each batch (a slow host, a GC pause; synthetic) is no hot key.
TEST(StreamingRules, StateSkewOfARealRun) {
  struct Recorded {
    int64_t start_ms, duration_ms, rows;
    std::vector<int64_t> task_ms, records;
  };
  const std::vector<Recorded> batches = {
      {0, 9945, 0, {}, {}},
      {10021, 6253, 3000, {815, 3910, 319, 348}, {85, 2770, 74, 71}},
      {16276, 3725, 1800, {282, 2471, 433, 323}, {54, 1660, 44, 42}},
      {20002, 2443, 1200, {211, 1482, 141, 210}, {33, 1107, 30, 30}},
      {22446, 1702, 600, {217, 926, 241, 125}, {21, 556, 10, 13}},
      {24156, 2024, 600, {205, 977, 323, 370}, {13, 555, 18, 14}},
      {26355, 1950, 600, {258, 946, 288, 144}, {19, 550, 16, 15}},
      {29359, 1989, 900, {142, 1128, 158, 85}, {27, 830, 23, 20}},
      {32350, 2128, 900, {240, 1187, 149, 192}, {27, 831, 21, 21}},
      {35353, 2155, 900, {145, 1203, 164, 181}, {26, 832, 20, 22}},
      {38350, 2154, 900, {261, 1218, 142, 184}, {24, 832, 22, 22}},
      {41350, 1878, 900, {156, 1123, 214, 161}, {26, 830, 24, 20}},
      {44350, 1907, 900, {184, 1098, 221, 152}, {26, 831, 22, 21}},
      {47351, 1914, 900, {240, 1190, 134, 139}, {27, 829, 23, 21}},
      {50355, 1970, 900, {152, 1289, 121, 248}, {24, 832, 21, 23}},
      {53355, 1935, 900, {275, 1231, 140, 140}, {24, 830, 24, 22}},
      {56351, 1977, 900, {248, 1142, 260, 242}, {27, 829, 22, 22}},
  };
  StreamingLog log;
  for (size_t id = 0; id < batches.size(); ++id) {
    const Recorded& r = batches[id];
    Batch b{kStart + 1000 + r.start_ms, r.duration_ms, r.rows};
    b.tasks = 2;
    b.state_rows = 98;
    b.state_task_ms = r.task_ms;
    b.state_task_records = r.records;
    b.state_partitions = 4;
    log.Add(static_cast<int64_t>(id), b);
  }
  const report::Analysis a = AnalyzeText(log.Finish());
  const auto found = FindingsOf(a, "state-skew");
  ASSERT_EQ(found.size(), 1u) << report::RenderText(a);
  const Finding& f = *found[0];
  EXPECT_EQ(EvidenceValue(f, "hot_partition"), 1);
  EXPECT_EQ(EvidenceValue(f, "batches"), 9);  // batches 8-16, the run's second half
  EXPECT_EQ(EvidenceValue(f, "skewed_batches"), 9);
  EXPECT_EQ(EvidenceValue(f, "hot_partition_task_ms"), 1186);  // 10681 ms / 9
  EXPECT_EQ(EvidenceValue(f, "median_task_ms"), 237);          // 2140 ms / 9
  EXPECT_GT(EvidenceValue(f, "records_ratio"), 25);
  // Batch 8: 1187 - max(240, (240 + 1187 + 149 + 192) / 2 slots) = 303 ms; batches 9-16: 357,
  // 316, 296, 271, 339, 384, 338, 196.
  EXPECT_EQ(EvidenceValue(f, "waited_ms"), 2800);
  EXPECT_EQ(f.impact.time_saved_ms_high, EvidenceValue(f, "waited_ms"));
  EXPECT_FALSE(Has(a, "state-growth"));
  EXPECT_FALSE(Has(a, "falling-behind"));
  EXPECT_FALSE(Has(a, "batch-overhead"));

  StreamingLog rotating;
  for (int64_t id = 0; id < 12; ++id) {
    Batch b{kStart + 3000 * (id + 1), 1200, 900};
    b.tasks = 2;
    b.state_rows = 98;
    b.state_task_ms = {60, 70, 65, 60};
    b.state_task_ms[id % 4] = 900;
    rotating.Add(id, b);
  }
  EXPECT_FALSE(Has(AnalyzeText(rotating.Finish()), "state-skew"));

  // A real run's stage whose first task is slow with as many rows as the others (Spark 4.2.0,
  // workload state_growth on a 2-slot standalone cluster, its batches 5-12 here as 5-11, the
  // earlier ones as its batch 5): in the window (batches 6-11) task 0 is the slowest by 2x in 3
  // of 6 batches, with 0.99x the median's rows. Warm-up, no hot key.
  const std::vector<std::vector<int64_t>> warm_up_ms = {
      {328, 551, 103, 148}, {432, 234, 309, 167}, {392, 176, 142, 106}, {619, 238, 120, 100},
      {272, 107, 64, 164},  {342, 147, 80, 106},  {220, 205, 75, 51},   {321, 188, 111, 28}};
  const std::vector<std::vector<int64_t>> warm_up_records = {
      {1025, 976, 1010, 989}, {516, 477, 466, 541}, {955, 1002, 1047, 996}, {531, 496, 497, 476},
      {513, 530, 495, 462},   {499, 469, 531, 501}, {472, 478, 534, 516},   {485, 508, 502, 490}};
  StreamingLog warm_up;
  for (int64_t id = 0; id < 12; ++id) {
    Batch b{kStart + 3000 * (id + 1), 1200, 2000};
    b.tasks = 2;
    b.state_rows = 1000 * (id + 1);
    b.watermark_ms = kStart;
    b.state_task_ms = warm_up_ms[std::max<int64_t>(id - 5, 0)];
    b.state_task_records = warm_up_records[std::max<int64_t>(id - 5, 0)];
    warm_up.Add(id, b);
  }
  EXPECT_FALSE(Has(AnalyzeText(warm_up.Finish()), "state-skew"));
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
