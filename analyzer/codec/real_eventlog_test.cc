// Decodes real Spark event logs from ../shared/eventlogs (when present) and checks the byte
// counts an independent reader recorded in facts.json.
#include <gtest/gtest.h>

#include <filesystem>

#include "analyzer/codec/codec_test_util.h"

namespace sparkprof::codec {
namespace {

struct RealLog {
  const char* path;  // below SPARKPROF_SHARED_EVENTLOGS
  Format format;
  uint64_t decompressed_bytes;  // from facts.json
};

constexpr RealLog kRealLogs[] = {
    {"NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-profiling/eventlog_dsv1.zstd",
     Format::kZstd, 491134},
    {"NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/"
     "eventlog_v2_local-1623876083964/events_2_local-1623876083964.zstd",
     Format::kZstd, 951074},
    {"NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/"
     "db_sim_eventlog/eventlog-2021-06-15--15-00.gz",
     Format::kGzip, 10480446},
    {"synccomputingcode+spark_log_parser/tests/logs/log_in_dir/databricks.json.gz", Format::kGzip,
     4886073},
};

class RealEventLogTest : public ::testing::TestWithParam<RealLog> {};

TEST_P(RealEventLogTest, DecodesToTheRecordedSize) {
  std::filesystem::path path = std::filesystem::path(SPARKPROF_SHARED_EVENTLOGS) / GetParam().path;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  auto file = OpenFileInputStream(path.string());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto opened = OpenDecoded(std::move(*file), path.filename().string());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->format, GetParam().format);
  testing::Drained drained = testing::Drain(*opened->stream);
  EXPECT_TRUE(drained.status.ok()) << drained.status.ToString();
  EXPECT_EQ(drained.bytes.size(), GetParam().decompressed_bytes);
  EXPECT_EQ(drained.bytes.substr(0, 10), "{\"Event\":\"");
}

INSTANTIATE_TEST_SUITE_P(SharedEventLogs, RealEventLogTest, ::testing::ValuesIn(kRealLogs));

}  // namespace
}  // namespace sparkprof::codec
