#include "driver-aggregator/driver_settings.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sparkprof::driver {
namespace {

AppliedSettings Apply(std::vector<std::string> key_values) {
  return ApplyDriverSettings(AggregatorOptions{}, key_values);
}

TEST(DriverSettingsTest, NothingSetKeepsEveryDefault) {
  AppliedSettings applied = Apply({});
  EXPECT_TRUE(applied.problems.empty());
  for (const DriverSetting& setting : DriverSettings()) {
    EXPECT_EQ(setting.get(applied.options), setting.get(AggregatorOptions{})) << setting.key;
  }
}

// The plugin passes sizes in bytes and durations in milliseconds (Spark's parser read the units:
// maxBatchBytes=32m, ingestQueue.maxBytes=2g, metricsRefreshInterval=1min).
TEST(DriverSettingsTest, SetValuesAreUsed) {
  AppliedSettings applied = Apply(
      {"spark.sparkprof.maxBatchBytes", "33554432", "spark.sparkprof.maxBatchesPerSecond", "500",
       "spark.sparkprof.maxNodesPerStage", "1000", "spark.sparkprof.maxStages", "8",
       "spark.sparkprof.maxTotalNodes", "5000", "spark.sparkprof.ingestQueue.maxBatches", "64",
       "spark.sparkprof.ingestQueue.maxBytes", "2147483648", "spark.sparkprof.maxProfileFileBytes",
       "0", "spark.sparkprof.metricsRefreshInterval", " 60000 "});
  EXPECT_TRUE(applied.problems.empty()) << applied.problems.front();
  const AggregatorOptions& options = applied.options;
  EXPECT_EQ(options.max_batch_bytes, size_t{32} << 20);
  EXPECT_EQ(options.max_batches_per_second, 500u);
  EXPECT_EQ(options.max_nodes_per_stage, 1000u);
  EXPECT_EQ(options.max_stages, 8u);
  EXPECT_EQ(options.max_total_nodes, 5000u);
  EXPECT_EQ(options.ingest_queue.max_batches, 64u);
  EXPECT_EQ(options.ingest_queue.max_bytes, uint64_t{2} << 30);
  EXPECT_EQ(options.max_profile_file_bytes, 0u);
  EXPECT_EQ(options.live_refresh_interval_ms, 60000);
}

TEST(DriverSettingsTest, RefusedValuesKeepTheDefaultAndSaySo) {
  AppliedSettings applied =
      Apply({"spark.sparkprof.ingestQueue.maxBatches", "100000",
             "spark.sparkprof.ingestQueue.maxBytes", "lots", "spark.sparkprof.maxBatchBytes", "0",
             "spark.sparkprof.maxStages", "-1", "spark.sparkprof.maxTotalNodes", "1.5"});
  EXPECT_EQ(applied.options.ingest_queue.max_batches, 1024u);
  EXPECT_EQ(applied.options.ingest_queue.max_bytes, uint64_t{256} << 20);
  EXPECT_EQ(applied.options.max_batch_bytes, size_t{16} << 20);
  EXPECT_EQ(applied.options.max_stages, 256u);
  EXPECT_EQ(applied.options.max_total_nodes, 4000000u);
  ASSERT_EQ(applied.problems.size(), 5u);
  EXPECT_EQ(applied.problems[0],
            "spark.sparkprof.ingestQueue.maxBatches=100000 is not valid (1 to 65534), using 1024");
  EXPECT_EQ(applied.problems[1],
            "spark.sparkprof.ingestQueue.maxBytes=lots is not valid (1 to 1t), using 256m");
  EXPECT_EQ(applied.problems[2],
            "spark.sparkprof.maxBatchBytes=0 is not valid (1 to 1t), using 16m");
}

TEST(DriverSettingsTest, ValuesInRangeAreClampedToWhatIsUsed) {
  AppliedSettings applied =
      Apply({"spark.sparkprof.maxBatchBytes", "10", "spark.sparkprof.ingestQueue.maxBytes", "1024",
             "spark.sparkprof.metricsRefreshInterval", "0"});
  EXPECT_TRUE(applied.problems.empty());
  EXPECT_EQ(applied.options.max_batch_bytes, 1024u);
  EXPECT_EQ(applied.options.ingest_queue.max_bytes, uint64_t{1} << 20);
  EXPECT_EQ(applied.options.live_refresh_interval_ms, 1);
  applied = Apply({"spark.sparkprof.maxBatchBytes", "1099511627776",
                   "spark.sparkprof.metricsRefreshInterval", "86400000"});
  EXPECT_EQ(applied.options.max_batch_bytes, size_t{1} << 30);
  EXPECT_EQ(applied.options.live_refresh_interval_ms, 600000);
}

TEST(DriverSettingsTest, UnknownKeysAndMissingValuesAreProblems) {
  AppliedSettings applied =
      Apply({"spark.sparkprof.flushInterval", "5000", "spark.sparkprof.maxStages"});
  ASSERT_EQ(applied.problems.size(), 2u);
  EXPECT_EQ(applied.problems[0],
            "spark.sparkprof.flushInterval is not a driver aggregator setting; ignored");
  EXPECT_EQ(applied.problems[1], "spark.sparkprof.maxStages has no value; ignored");
  EXPECT_EQ(applied.options.max_stages, 256u);
}

TEST(DriverSettingsTest, FormatsValuesAsTheDocsWriteThem) {
  EXPECT_EQ(FormatSettingValue(SettingUnit::kBytes, int64_t{16} << 20), "16m");
  EXPECT_EQ(FormatSettingValue(SettingUnit::kBytes, int64_t{1} << 30), "1g");
  EXPECT_EQ(FormatSettingValue(SettingUnit::kBytes, 1000), "1000");
  EXPECT_EQ(FormatSettingValue(SettingUnit::kBytes, 0), "0");
  EXPECT_EQ(FormatSettingValue(SettingUnit::kMilliseconds, 1000), "1s");
  EXPECT_EQ(FormatSettingValue(SettingUnit::kMilliseconds, 250), "250ms");
  EXPECT_EQ(FormatSettingValue(SettingUnit::kMilliseconds, 600000), "10min");
  EXPECT_EQ(FormatSettingValue(SettingUnit::kCount, 4000000), "4000000");
}

// docs/quickstart-spark.md's settings table gives each key's default as this library has it.
TEST(DriverSettingsTest, TheDocumentedDefaultsAreTheseDefaults) {
  std::ifstream file(SPARKPROF_SOURCE_DIR "/docs/quickstart-spark.md");
  ASSERT_TRUE(file) << "docs/quickstart-spark.md";
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  for (const DriverSetting& setting : DriverSettings()) {
    const std::string row_start = "| `" + std::string(setting.key) + "` | `";
    size_t at = doc.find(row_start);
    ASSERT_NE(at, std::string::npos) << setting.key << " has no row in the settings table";
    at += row_start.size();
    const std::string documented = doc.substr(at, doc.find('`', at) - at);
    EXPECT_EQ(documented, FormatSettingValue(setting.unit, setting.get(AggregatorOptions{})))
        << setting.key;
  }
}

}  // namespace
}  // namespace sparkprof::driver
