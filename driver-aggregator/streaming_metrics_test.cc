// Per-query streaming series from progress event lines, through the live model as the plugin
// feeds it: the latest batch's figures, counters over a query's runs, the engine's
// falling-behind judgement, a stopped query's gauges removed and the query label's cap.
#include "driver-aggregator/streaming_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/testing/streaming_lines.h"

namespace sparkprof::driver {
namespace {

using testing::ProgressLine;

constexpr int64_t kStart = 1'796'007'900'000;  // 2026-11-30T03:05:00Z

// The value of one series in an exposition (`name{labels}` as rendered), NaN when not served (so
// every comparison with it fails).
double Value(const std::string& exposition, const std::string& series) {
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::strtod(line.c_str() + series.size(), nullptr);
  }
  return std::nan("");
}

bool Served(const std::string& exposition, const std::string& series) {
  return !std::isnan(Value(exposition, series));
}

std::string Query(const std::string& name, const std::string& label) {
  return name + "{query=\"" + label + "\"}";
}

class StreamingMetricsTest : public ::testing::Test {
 protected:
  explicit StreamingMetricsTest(size_t cap = kMaxLabelledQueries) : metrics_(cap) {}

  void SetUp() override {
    ASSERT_TRUE(metrics_.Register(registry_).ok());
    Feed(R"({"Event":"SparkListenerLogStart","Spark Version":"3.5.9"})");
    Feed(
        R"({"Event":"SparkListenerApplicationStart","App Name":"s","App ID":"app-1","Timestamp":)" +
        std::to_string(kStart) + R"(,"User":"u"})");
  }

  void Feed(const std::string& line) { ASSERT_TRUE(live_.OnEventLine(line).ok()) << line; }

  // Refreshes the series from a snapshot of the model, as a scrape does; the exposition.
  std::string Scrape() {
    metrics_.Update(live_.Snapshot(-1));
    return registry_.Render();
  }

  LiveApplication live_;
  metrics::PrometheusRegistry registry_;
  StreamingMetrics metrics_;
};

TEST_F(StreamingMetricsTest, LatestBatchRatesStepsStateAndWatermarkPerQuery) {
  Feed(testing::QueryStartedLine("q1", "run1", "orders", kStart));
  ProgressLine batch{.id = "q1", .run_id = "run1", .name = "orders"};
  for (int64_t i = 0; i < 5; ++i) {
    batch.batch_id = i;
    batch.start_ms = kStart + 1000 + i * 1000;
    batch.duration_ms = 400;
    batch.rows = 1000;
    Feed(batch.Line());
  }
  batch.batch_id = 5;
  batch.start_ms = kStart + 6000;
  batch.duration_ms = 500;
  batch.rows = 2000;
  batch.latest_offset_ms = 10;
  batch.get_batch_ms = 5;
  batch.planning_ms = 20;
  batch.wal_commit_ms = 30;
  batch.commit_offsets_ms = 40;
  batch.state_rows = 5000;
  batch.state_bytes = 1 << 20;
  batch.watermark_ms = batch.start_ms - 7000;
  Feed(batch.Line());
  // An unnamed query is labelled by its id.
  Feed(testing::QueryStartedLine("3f1c", "run2", "", kStart));
  Feed(ProgressLine{.id = "3f1c",
                    .run_id = "run2",
                    .name = "",
                    .start_ms = kStart + 2000,
                    .duration_ms = 100,
                    .rows = 7}
           .Line());

  const std::string text = Scrape();
  const std::string orders = "orders";
  EXPECT_EQ(Value(text, Query("spark_streaming_batches_total", orders)), 6) << text;
  EXPECT_EQ(Value(text, Query("spark_streaming_input_rows_total", orders)), 7000);
  // Spark's definitions: rows over the time since the previous start (1 s), over its own 0.5 s.
  EXPECT_NEAR(Value(text, Query("spark_streaming_input_rows_per_second", orders)), 2000, 1e-9);
  EXPECT_NEAR(Value(text, Query("spark_streaming_processed_rows_per_second", orders)), 4000, 1e-9);
  EXPECT_NEAR(Value(text, Query("spark_streaming_batch_duration_seconds", orders)), 0.5, 1e-9);
  const std::pair<const char*, double> steps[] = {
      {"latest_offset", 0.010}, {"get_batch", 0.005},  {"query_planning", 0.020},
      {"add_batch", 0.395},     {"wal_commit", 0.030}, {"commit_offsets", 0.040}};
  for (const auto& [step, seconds] : steps) {
    const std::string series =
        "spark_streaming_batch_step_seconds{query=\"orders\",step=\"" + std::string(step) + "\"}";
    ASSERT_TRUE(Served(text, series)) << series << "\n" << text;
    EXPECT_NEAR(Value(text, series), seconds, 1e-9) << step;
  }
  EXPECT_EQ(Value(text, Query("spark_streaming_state_rows", orders)), 5000);
  EXPECT_EQ(Value(text, Query("spark_streaming_state_memory_bytes", orders)), 1 << 20);
  EXPECT_NEAR(Value(text, Query("spark_streaming_watermark_lag_seconds", orders)), 7, 1e-9);
  // Recent batches 2..5 (records after the anchor, batch 1): 1.7 s busy over the 4 s their rows
  // took to arrive.
  EXPECT_NEAR(Value(text, Query("spark_streaming_busy_ratio", orders)), 1.7 / 4, 1e-9);
  EXPECT_EQ(Value(text, Query("spark_streaming_falling_behind", orders)), 0);

  EXPECT_EQ(Value(text, Query("spark_streaming_batches_total", "3f1c")), 1);
  EXPECT_NEAR(Value(text, Query("spark_streaming_processed_rows_per_second", "3f1c")), 70, 1e-9);
  // Its first batch: no previous start, no input rate to speak of; no state, no watermark, too
  // few batches for a busy ratio.
  EXPECT_EQ(Value(text, Query("spark_streaming_input_rows_per_second", "3f1c")), 0);
  EXPECT_FALSE(Served(text, Query("spark_streaming_state_rows", "3f1c")));
  EXPECT_FALSE(Served(text, Query("spark_streaming_watermark_lag_seconds", "3f1c")));
  EXPECT_FALSE(Served(text, Query("spark_streaming_busy_ratio", "3f1c")));
}

TEST_F(StreamingMetricsTest, FallingBehindIsTheEnginesJudgementOnTheRecentBatches) {
  Feed(testing::QueryStartedLine("q1", "run1", "slow", kStart));
  // Back to back, each batch half again as long and as large as the one before: the rows of each
  // arrived while the previous one ran, faster than they are processed.
  ProgressLine batch{.id = "q1", .run_id = "run1", .name = "slow", .start_ms = kStart};
  int64_t duration_ms = 1000;
  for (int64_t i = 0; i < 7; ++i) {
    batch.batch_id = i;
    batch.duration_ms = duration_ms;
    batch.rows = duration_ms * 2;
    Feed(batch.Line());
    if (i == 3) {
      const std::string text = Scrape();
      EXPECT_GT(Value(text, Query("spark_streaming_busy_ratio", "slow")), 1) << text;
    }
    batch.start_ms += duration_ms + 5;
    duration_ms = duration_ms * 3 / 2;
  }
  const std::string text = Scrape();
  EXPECT_EQ(Value(text, Query("spark_streaming_falling_behind", "slow")), 1) << text;
  EXPECT_GT(Value(text, Query("spark_streaming_busy_ratio", "slow")), 1);
  EXPECT_GT(Value(text, Query("spark_streaming_batch_duration_seconds", "slow")), 5);
}

TEST_F(StreamingMetricsTest, AStoppedQueryLosesItsGaugesAndARestartContinuesItsCounters) {
  Feed(testing::QueryStartedLine("q1", "run1", "orders", kStart));
  ProgressLine batch{.id = "q1", .run_id = "run1", .name = "orders", .rows = 10};
  for (int64_t i = 0; i < 3; ++i) {
    batch.batch_id = i;
    batch.start_ms = kStart + i * 1000;
    batch.duration_ms = 100;
    Feed(batch.Line());
  }
  EXPECT_EQ(Value(Scrape(), Query("spark_streaming_batches_total", "orders")), 3);
  Feed(testing::QueryTerminatedLine("q1", "run1"));
  std::string text = Scrape();
  EXPECT_EQ(Value(text, Query("spark_streaming_batches_total", "orders")), 3) << text;
  EXPECT_EQ(Value(text, Query("spark_streaming_input_rows_total", "orders")), 30);
  for (const char* gauge :
       {"spark_streaming_batch_duration_seconds", "spark_streaming_processed_rows_per_second",
        "spark_streaming_falling_behind"}) {
    EXPECT_FALSE(Served(text, Query(gauge, "orders"))) << gauge << "\n" << text;
  }
  EXPECT_EQ(text.find("spark_streaming_batch_step_seconds{"), std::string::npos) << text;

  // Restarted from its checkpoint: the same id and name, a new run.
  Feed(testing::QueryStartedLine("q1", "run2", "orders", kStart + 10'000));
  batch.run_id = "run2";
  for (int64_t i = 3; i < 5; ++i) {
    batch.batch_id = i;
    batch.start_ms = kStart + 10'000 + i * 1000;
    batch.duration_ms = 200;
    Feed(batch.Line());
  }
  text = Scrape();
  EXPECT_EQ(Value(text, Query("spark_streaming_batches_total", "orders")), 5) << text;
  EXPECT_EQ(Value(text, Query("spark_streaming_input_rows_total", "orders")), 50);
  EXPECT_NEAR(Value(text, Query("spark_streaming_batch_duration_seconds", "orders")), 0.2, 1e-9);
  EXPECT_NEAR(Value(text, Query("spark_streaming_processed_rows_per_second", "orders")), 50, 1e-9);
}

class CappedStreamingMetricsTest : public StreamingMetricsTest {
 protected:
  CappedStreamingMetricsTest() : StreamingMetricsTest(2) {}
};

TEST_F(CappedStreamingMetricsTest, QueriesPastTheCapShareOneSeries) {
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  for (size_t q = 0; q < names.size(); ++q) {
    const std::string id = "id-" + names[q];
    Feed(testing::QueryStartedLine(id, "run-" + names[q], names[q], kStart));
    for (int64_t i = 0; i < 2; ++i) {
      Feed(ProgressLine{.id = id,
                        .run_id = "run-" + names[q],
                        .name = names[q],
                        .batch_id = i,
                        .start_ms = kStart + i * 1000,
                        .duration_ms = static_cast<int64_t>(100 * (q + 1)),
                        .rows = static_cast<int64_t>(10 * (q + 1))}
               .Line());
    }
  }
  const std::string text = Scrape();
  EXPECT_EQ(Value(text, Query("spark_streaming_batches_total", "a")), 2) << text;
  EXPECT_EQ(Value(text, Query("spark_streaming_batches_total", "b")), 2);
  EXPECT_FALSE(Served(text, Query("spark_streaming_batches_total", "c")));
  EXPECT_EQ(Value(text, Query("spark_streaming_batches_total", kOtherQueries)), 4);
  EXPECT_EQ(Value(text, Query("spark_streaming_input_rows_total", kOtherQueries)), 2 * (30 + 40));
  // Rates add up (30 + 40 rows a second arrive), durations take the longest (0.4 s).
  EXPECT_NEAR(Value(text, Query("spark_streaming_input_rows_per_second", kOtherQueries)), 70, 1e-9);
  EXPECT_NEAR(Value(text, Query("spark_streaming_batch_duration_seconds", kOtherQueries)), 0.4,
              1e-9);
}

}  // namespace
}  // namespace sparkprof::driver
