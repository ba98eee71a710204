#include "analyzer/source/log_names.h"

#include <gtest/gtest.h>

namespace sparkprof::source {
namespace {

TEST(LogNamesTest, RollingEventFileNames) {
  auto plain = ParseRollingEventFileName("events_12_local-1623876083964");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->index, 12u);
  EXPECT_FALSE(plain->compact);

  auto compact = ParseRollingEventFileName("events_5_app.zstd.compact");
  ASSERT_TRUE(compact.has_value());
  EXPECT_EQ(compact->index, 5u);
  EXPECT_TRUE(compact->compact);
  EXPECT_TRUE(ParseRollingEventFileName("events_5_app.compact.inprogress")->compact);

  EXPECT_FALSE(ParseRollingEventFileName("events__app").has_value());
  EXPECT_FALSE(ParseRollingEventFileName("events_1_").has_value());
  EXPECT_FALSE(ParseRollingEventFileName("events_x_app").has_value());
  EXPECT_FALSE(ParseRollingEventFileName("events_1234567890123456789_app").has_value());
  EXPECT_FALSE(ParseRollingEventFileName("appstatus_app").has_value());
}

TEST(LogNamesTest, DatabricksPartNames) {
  EXPECT_TRUE(ParseDatabricksPartName("eventlog")->current);
  EXPECT_TRUE(ParseDatabricksPartName("eventlog.gz")->current);
  auto dated = ParseDatabricksPartName("eventlog-2021-06-15--15-00.gz");
  ASSERT_TRUE(dated.has_value());
  EXPECT_FALSE(dated->current);
  EXPECT_EQ(dated->time_key, "2021-06-15--15-00");
  EXPECT_TRUE(ParseDatabricksPartName("eventlog-2021-06-15--15-00").has_value());
  EXPECT_FALSE(ParseDatabricksPartName("eventlog-2").has_value());
  EXPECT_FALSE(ParseDatabricksPartName("eventlog-2021-06-15-15-00.gz").has_value());
  EXPECT_FALSE(ParseDatabricksPartName("my_eventlog").has_value());
}

TEST(LogNamesTest, JunkAndSuffixes) {
  EXPECT_TRUE(IsJunkName(".DS_Store"));
  EXPECT_TRUE(IsJunkName("._eventlog"));
  EXPECT_TRUE(IsJunkName("__MACOSX"));
  EXPECT_TRUE(IsJunkName(".git"));
  EXPECT_TRUE(IsJunkName("app-1.crc"));
  EXPECT_FALSE(IsJunkName("app-1.zstd"));
  EXPECT_EQ(StripCodecExtension("app.snappy"), "app");
  EXPECT_EQ(StripCodecExtension(".gz"), ".gz");
  EXPECT_EQ(StripCodecExtension("app.json"), "app.json");
  EXPECT_TRUE(HasInProgressSuffix("app.lz4.inprogress"));
  EXPECT_TRUE(IsAppStatusName("appstatus_app.inprogress"));
  EXPECT_FALSE(IsAppStatusName("appstatus_"));
  EXPECT_TRUE(HasRollingDirectoryPrefix("eventlog_v2_app"));
  EXPECT_FALSE(HasRollingDirectoryPrefix("eventlog_v2_"));
}

TEST(LogNamesTest, CompressedArchiveNames) {
  EXPECT_EQ(CompressedArchiveName("x.gz", ".gz"), "x.zip.gz");
  EXPECT_EQ(CompressedArchiveName("/logs/x.zstd", ".zstd"), "x.zip.zstd");
  EXPECT_EQ(CompressedArchiveName("a.zip!d/eventlog-2022-01-14--17-00.gz", ".gz"),
            "eventlog-2022-01-14--17-00.zip.gz");
  EXPECT_EQ(CompressedArchiveName("dir/app-1", ".lz4"), "app-1.zip.lz4");  // no codec named
  EXPECT_EQ(CompressedArchiveName("x.gz", ".zstd"), "x.zip.zstd");         // the bytes' codec wins
}

}  // namespace
}  // namespace sparkprof::source
