#include "analyzer/source/log_source.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/codec/codec.h"
#include "analyzer/codec/encode.h"
#include "analyzer/source/zip_archive.h"

namespace sparkprof::source {
namespace {

namespace fs = std::filesystem;

struct ZipEntrySpec {
  std::string name;  // a trailing '/' adds a directory entry
  std::string bytes;
  bool store = false;  // stored instead of deflated
};

void WriteFile(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteZip(const fs::path& path, const std::vector<ZipEntrySpec>& entries) {
  fs::create_directories(path.parent_path());
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(zip, nullptr);
  for (const ZipEntrySpec& entry : entries) {
    if (entry.name.ends_with('/')) {
      ASSERT_GE(zip_dir_add(zip, entry.name.c_str(), ZIP_FL_ENC_UTF_8), 0);
      continue;
    }
    zip_source_t* source = zip_source_buffer(zip, entry.bytes.data(), entry.bytes.size(), 0);
    ASSERT_NE(source, nullptr);
    zip_int64_t index = zip_file_add(zip, entry.name.c_str(), source, ZIP_FL_ENC_UTF_8);
    ASSERT_GE(index, 0);
    if (entry.store) zip_set_file_compression(zip, index, ZIP_CM_STORE, 0);
  }
  ASSERT_EQ(zip_close(zip), 0) << zip_strerror(zip);
}

std::string ZipBytes(const fs::path& scratch, const std::vector<ZipEntrySpec>& entries) {
  WriteZip(scratch, entries);
  std::string bytes = ReadFile(scratch);
  fs::remove(scratch);
  return bytes;
}

Result<std::string> ReadPart(const LogPart& part) {
  SPARKPROF_ASSIGN_OR_RETURN(auto stream, part.open());
  std::string bytes;
  char buffer[1000];
  while (true) {
    SPARKPROF_ASSIGN_OR_RETURN(size_t got, stream->Read(buffer, sizeof(buffer)));
    if (got == 0) return bytes;
    bytes.append(buffer, got);
  }
}

// The part's bytes; a read error fails the test and gives "".
std::string ReadText(const LogPart& part) {
  Result<std::string> bytes = ReadPart(part);
  EXPECT_TRUE(bytes.ok()) << part.display_name << ": " << bytes.status().ToString();
  return bytes.ok() ? std::move(bytes).value() : std::string();
}

std::vector<std::string> PartTexts(const ApplicationLog& log) {
  std::vector<std::string> texts;
  for (const LogPart& part : log.parts) texts.push_back(ReadText(part));
  return texts;
}

std::vector<std::string> PartNames(const ApplicationLog& log) {
  std::vector<std::string> names;
  for (const LogPart& part : log.parts) names.push_back(part.display_name);
  return names;
}

std::vector<std::string> AppNames(const DiscoveryResult& result) {
  std::vector<std::string> names;
  for (const ApplicationLog& log : result.applications) names.push_back(log.name);
  return names;
}

bool HasWarning(const DiscoveryResult& result, const std::string& path_part,
                const std::string& message_part) {
  return std::any_of(result.warnings.begin(), result.warnings.end(),
                     [&](const DiscoveryWarning& warning) {
                       return warning.path.find(path_part) != std::string::npos &&
                              warning.message.find(message_part) != std::string::npos;
                     });
}

std::string WarningsText(const DiscoveryResult& result) {
  std::string text;
  for (const auto& warning : result.warnings) text += warning.path + ": " + warning.message + "\n";
  return text;
}

const std::string kLine = "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.1\"}\n";

class LogSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("sparkprof_source_test_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(root_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(root_, ignored);
  }

  DiscoveryResult DiscoverOk(const fs::path& path, const DiscoveryLimits& limits = {}) {
    Result<DiscoveryResult> result = Discover(path.string(), limits);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? std::move(result).value() : DiscoveryResult{};
  }

  fs::path root_;
};

TEST_F(LogSourceTest, MissingPathIsNotFoundNamingThePath) {
  Result<DiscoveryResult> result = Discover((root_ / "nope").string());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find((root_ / "nope").string()), std::string::npos);
}

TEST_F(LogSourceTest, SingleFileAnyNameAndCodec) {
  for (const std::string name : {"app-1", "app-1.lz4", "app-1.snappy", "app-1.zstd", "app-1.lzf",
                                 "app-1.gz", "local-1.zstd.inprogress"}) {
    WriteFile(root_ / name, kLine);
    DiscoveryResult result = DiscoverOk(root_ / name);
    ASSERT_EQ(result.applications.size(), 1u) << name;
    const ApplicationLog& log = result.applications[0];
    EXPECT_EQ(log.name, name);
    EXPECT_EQ(log.layout, "single");
    EXPECT_TRUE(log.archive.empty());
    EXPECT_EQ(log.in_progress_by_name, name.ends_with(".inprogress"));
    ASSERT_EQ(log.parts.size(), 1u);
    EXPECT_EQ(log.parts[0].display_name, (root_ / name).string());
    EXPECT_EQ(log.parts[0].size_bytes, kLine.size());
    EXPECT_EQ(ReadText(log.parts[0]), kLine);
  }
}

TEST_F(LogSourceTest, RollingDirectorySortsIndicesNumerically) {
  fs::path dir = root_ / "eventlog_v2_app-7";
  for (int index : {10, 2, 12, 1, 9, 3, 11, 4, 5, 6, 7, 8}) {
    WriteFile(dir / ("events_" + std::to_string(index) + "_app-7.zstd"), std::to_string(index));
  }
  WriteFile(dir / "appstatus_app-7.inprogress", "");
  DiscoveryResult result = DiscoverOk(dir);
  ASSERT_EQ(AppNames(result), std::vector<std::string>{"eventlog_v2_app-7"});
  EXPECT_EQ(result.applications[0].layout, "rolling");
  EXPECT_TRUE(result.applications[0].in_progress_by_name);
  std::vector<std::string> in_index_order;
  for (int index = 1; index <= 12; ++index) in_index_order.push_back(std::to_string(index));
  EXPECT_EQ(PartTexts(result.applications[0]), in_index_order);
  EXPECT_TRUE(result.warnings.empty()) << WarningsText(result);
}

TEST_F(LogSourceTest, RollingDirectoryFinishedAndWithTrailingSlash) {
  fs::path dir = root_ / "eventlog_v2_app-8";
  WriteFile(dir / "events_1_app-8", kLine);
  WriteFile(dir / "appstatus_app-8", "");
  DiscoveryResult result = DiscoverOk(dir.string() + "/");
  ASSERT_EQ(result.applications.size(), 1u);
  EXPECT_EQ(result.applications[0].name, "eventlog_v2_app-8");
  EXPECT_FALSE(result.applications[0].in_progress_by_name);
}

TEST_F(LogSourceTest, RollingCompactionDropsEverythingBeforeTheLastCompactFile) {
  fs::path dir = root_ / "eventlog_v2_app";
  for (const char* name :
       {"events_1_app.zstd", "events_2_app.zstd.compact", "events_3_app.zstd", "events_4_app.zstd",
        "events_4_app.zstd.compact", "events_5_app.zstd", "events_6_app.zstd", "appstatus_app"}) {
    WriteFile(dir / name, name);
  }
  DiscoveryResult result = DiscoverOk(root_);
  ASSERT_EQ(result.applications.size(), 1u);
  EXPECT_EQ(PartNames(result.applications[0]),
            (std::vector<std::string>{(dir / "events_4_app.zstd.compact").string(),
                                      (dir / "events_5_app.zstd").string(),
                                      (dir / "events_6_app.zstd").string()}));
  EXPECT_FALSE(result.applications[0].in_progress_by_name);
  EXPECT_TRUE(result.warnings.empty()) << WarningsText(result);
}

TEST_F(LogSourceTest, RollingGapsAndStrayFilesWarn) {
  fs::path dir = root_ / "eventlog_v2_gap";
  WriteFile(dir / "events_2_gap", "a");
  WriteFile(dir / "events_5_gap", "b");
  WriteFile(dir / "notes.txt", "c");
  DiscoveryResult result = DiscoverOk(dir);
  ASSERT_EQ(result.applications.size(), 1u);
  EXPECT_EQ(result.applications[0].parts.size(), 2u);
  EXPECT_TRUE(HasWarning(result, "eventlog_v2_gap", "starts at events_2")) << WarningsText(result);
  EXPECT_TRUE(HasWarning(result, "eventlog_v2_gap", "skips from events_2 to events_5"));
  EXPECT_TRUE(HasWarning(result, "notes.txt", "ignored"));
  EXPECT_TRUE(HasWarning(result, "eventlog_v2_gap", "no appstatus_"));
}

TEST_F(LogSourceTest, EmptyRollingDirectoryWarns) {
  fs::create_directories(root_ / "eventlog_v2_none");
  WriteFile(root_ / "eventlog_v2_none" / "appstatus_none", "");
  DiscoveryResult result = DiscoverOk(root_);
  EXPECT_TRUE(result.applications.empty());
  EXPECT_TRUE(HasWarning(result, "eventlog_v2_none", "no events_<N>_ files"));
}

TEST_F(LogSourceTest, DatabricksFolderReadsDatedPartsThenCurrent) {
  fs::path dir = root_ / "0612-app";
  WriteFile(dir / "eventlog", "current");
  WriteFile(dir / "eventlog-2021-06-15--16-00.gz", "second");
  WriteFile(dir / "eventlog-2021-06-15--15-00.gz", "first");
  WriteFile(dir / "eventlog-2021-06-16--01-00", "third");
  DiscoveryResult result = DiscoverOk(dir);
  ASSERT_EQ(AppNames(result), std::vector<std::string>{"0612-app"});
  EXPECT_EQ(result.applications[0].layout, "databricks");
  EXPECT_EQ(PartTexts(result.applications[0]),
            (std::vector<std::string>{"first", "second", "third", "current"}));
}

std::string Encoded(codec::Format format, const std::string& text) {
  Result<std::string> bytes = codec::Encode(format, text);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? std::move(bytes).value() : std::string();
}

// The part's events as the reader gets them: its codec decided by its bytes.
std::string DecodedText(const LogPart& part) {
  Result<std::unique_ptr<InputStream>> raw = part.open();
  EXPECT_TRUE(raw.ok()) << part.display_name;
  if (!raw.ok()) return "";
  Result<codec::DecodedStream> decoded = codec::OpenDecoded(std::move(*raw), part.display_name);
  EXPECT_TRUE(decoded.ok()) << part.display_name << ": " << decoded.status().ToString();
  if (!decoded.ok()) return "";
  std::string text;
  char buffer[1000];
  while (true) {
    Result<size_t> got = decoded->stream->Read(buffer, sizeof(buffer));
    EXPECT_TRUE(got.ok()) << part.display_name;
    if (!got.ok() || *got == 0) return text;
    text.append(buffer, *got);
  }
}

// Every way a Databricks delivery folder has been seen to hold its parts (docs/limits.md,
// "Input layouts"): each part is read, in time order, whatever its wrapping; what is not a
// part is named in a warning, and the warning is in the log's own list for its report.
TEST_F(LogSourceTest, DatabricksPartsInEveryWrappingAreReadInTimeOrder) {
  const fs::path scratch = root_ / "scratch.zip";
  // Written out of time order, in the folder and in the zip alike.
  const std::vector<ZipEntrySpec> folder = {
      {"d/eventlog", "current"},
      // Databricks' own rolled part, then zipped and gzipped by hand (a gzip holding a zip).
      {"d/eventlog-2022-01-14--17-00.zip.gz",
       Encoded(codec::Format::kGzip, ZipBytes(scratch, {{"eventlog-2022-01-14--17-00", "p17"}}))},
      // A zip holding the part under another name: the time comes from the zip's name.
      {"d/eventlog-2022-01-14--15-00.zip", ZipBytes(scratch, {{"part", "p15"}})},
      // Misnamed: ".gz" holding zstd.
      {"d/eventlog-2022-01-14--18-00.gz", Encoded(codec::Format::kZstd, "p18")},
      // A zip holding the gzipped part.
      {"d/eventlog-2022-01-14--19-00.gz.zip",
       ZipBytes(scratch,
                {{"eventlog-2022-01-14--19-00.gz", Encoded(codec::Format::kGzip, "p19")}})},
      {"d/databricks_pricing.json", "{\n  \"price\": 1\n}\n"},
  };
  const std::vector<std::string> in_time_order = {"p15", "p17", "p18", "p19", "current"};
  for (const bool zipped : {false, true}) {
    SCOPED_TRACE(zipped ? "in a zip" : "on disk");
    fs::path input = root_ / (zipped ? "delivery.zip" : "delivery");
    if (zipped) {
      WriteZip(input, folder);
    } else {
      for (const ZipEntrySpec& entry : folder) WriteFile(input / entry.name, entry.bytes);
    }
    DiscoveryResult result = DiscoverOk(input);
    ASSERT_EQ(AppNames(result), std::vector<std::string>{"d"}) << WarningsText(result);
    const ApplicationLog& log = result.applications[0];
    EXPECT_EQ(log.layout, "databricks");
    std::vector<std::string> texts;
    for (const LogPart& part : log.parts) texts.push_back(DecodedText(part));
    EXPECT_EQ(texts, in_time_order);
    EXPECT_NE(log.parts[1].display_name.find("eventlog-2022-01-14--17-00.zip.gz!"
                                             "eventlog-2022-01-14--17-00"),
              std::string::npos)
        << log.parts[1].display_name;
    EXPECT_TRUE(HasWarning(result, "databricks_pricing.json", "not a part"))
        << WarningsText(result);
    ASSERT_EQ(log.warnings.size(), result.warnings.size()) << WarningsText(result);
    EXPECT_NE(log.warnings[0].path.find("databricks_pricing.json"), std::string::npos);
  }
}

// An archive named as a Databricks part that is not one part: one holding two logs is searched
// like any zip, one past the nested-archive limit is named with why -- neither is "not a part".
TEST_F(LogSourceTest, ArchivesNamedAsPartsThatAreNotOneAreSearchedOrNamed) {
  const fs::path scratch = root_ / "scratch.zip";
  const std::string two = ZipBytes(scratch, {{"app-1", kLine}, {"app-2", kLine}});
  const std::string big = Encoded(
      codec::Format::kGzip,
      ZipBytes(scratch, {{"eventlog-2022-01-14--18-00", std::string(4096, ' ') + kLine, true}}));
  WriteZip(root_ / "delivery.zip", {{"d/eventlog", "current"},
                                    {"d/eventlog-2022-01-14--17-00.zip", two},
                                    {"d/eventlog-2022-01-14--18-00.zip.gz", big}});
  DiscoveryLimits limits;
  limits.max_nested_archive_bytes = 4096;
  DiscoveryResult result = DiscoverOk(root_ / "delivery.zip", limits);
  EXPECT_EQ(AppNames(result), (std::vector<std::string>{"app-1", "app-2", "d"}))
      << WarningsText(result);
  EXPECT_TRUE(HasWarning(result, "eventlog-2022-01-14--18-00.zip.gz", "max_nested_archive_bytes"))
      << WarningsText(result);
  EXPECT_FALSE(HasWarning(result, "", "not a part")) << WarningsText(result);
}

// A zip compressed with a log codec, and named so ("logs.zip.gz"), is searched like a zip (and
// its size is bounded like a zip's inside another: it has to be decompressed to be opened).
// Only the name sends discovery into a compressed file: anything else costs a listing only.
TEST_F(LogSourceTest, CompressedZipIsSearchedWithinTheNestedLimits) {
  const std::string zip = ZipBytes(
      root_ / "scratch.zip",
      {{"eventlog_v2_app-1/events_1_app-1", kLine}, {"eventlog_v2_app-1/appstatus_app-1", ""}});
  const std::pair<codec::Format, const char*> formats[] = {{codec::Format::kGzip, ".gz"},
                                                           {codec::Format::kZstd, ".zstd"},
                                                           {codec::Format::kLz4Block, ".lz4"}};
  for (const auto& [format, extension] : formats) {
    SCOPED_TRACE(codec::FormatName(format));
    fs::path input = root_ / (std::string("logs.zip") + extension);
    WriteFile(input, Encoded(format, zip));
    DiscoveryResult result = DiscoverOk(input);
    ASSERT_EQ(AppNames(result), std::vector<std::string>{"eventlog_v2_app-1"})
        << WarningsText(result);
    EXPECT_EQ(PartTexts(result.applications[0]), std::vector<std::string>{kLine});
    DiscoveryLimits small;
    small.max_nested_archive_bytes = zip.size() - 1;
    DiscoveryResult capped = DiscoverOk(input, small);
    EXPECT_TRUE(capped.applications.empty());
    EXPECT_TRUE(HasWarning(capped, input.string(), "max_nested_archive_bytes"))
        << WarningsText(capped);
  }
}

// The same compressed zip named like a log ("x.gz", a Databricks part "eventlog-<time>.gz") is
// not searched: discovery reads into a compressed file only when its name has ".zip" among its
// extensions. It is a log to read, as it is (the reader names it then: EventLogReader.
// CompressedZipNamedLikeALogIsNamedNotRead), never a set of applications found inside it.
TEST_F(LogSourceTest, CompressedZipNamedLikeALogIsNotSearched) {
  const std::string zip = ZipBytes(
      root_ / "scratch.zip",
      {{"eventlog_v2_app-1/events_1_app-1", kLine}, {"eventlog_v2_app-1/appstatus_app-1", ""}});
  for (const auto& [format, name] :
       {std::pair{codec::Format::kGzip, "x.gz"}, std::pair{codec::Format::kZstd, "x.zstd"}}) {
    SCOPED_TRACE(name);
    const std::string bytes = Encoded(format, zip);
    WriteFile(root_ / name, bytes);
    DiscoveryResult result = DiscoverOk(root_ / name);
    ASSERT_EQ(AppNames(result), std::vector<std::string>{name}) << WarningsText(result);
    EXPECT_TRUE(result.warnings.empty()) << WarningsText(result);
    EXPECT_EQ(result.applications[0].layout, "single");
    EXPECT_EQ(PartTexts(result.applications[0]), std::vector<std::string>{bytes});
    fs::remove(root_ / name);
  }
  WriteFile(root_ / "d" / "eventlog-2022-01-14--17-00.gz", Encoded(codec::Format::kGzip, zip));
  WriteFile(root_ / "d" / "eventlog", kLine);
  DiscoveryResult result = DiscoverOk(root_ / "d");
  ASSERT_EQ(AppNames(result), std::vector<std::string>{"d"}) << WarningsText(result);
  EXPECT_TRUE(result.warnings.empty()) << WarningsText(result);
  ASSERT_EQ(result.applications[0].parts.size(), 2u);
  EXPECT_EQ(result.applications[0].parts[0].display_name,
            (root_ / "d" / "eventlog-2022-01-14--17-00.gz").string());
}

// A warning goes to the logs below the folder it names; one under no log's folder to all.
TEST_F(LogSourceTest, WarningsGoToTheLogsOfTheirFolder) {
  WriteFile(root_ / "a" / "eventlog", kLine);
  WriteFile(root_ / "a" / "notes.txt", "x");
  WriteFile(root_ / "b" / "eventlog", kLine);
  WriteFile(root_ / "r" / "eventlog_v2_x" / "stray", "x");  // no events_ file: no log, a warning
  DiscoveryResult result = DiscoverOk(root_);
  ASSERT_EQ(AppNames(result), (std::vector<std::string>{"a", "b"})) << WarningsText(result);
  auto paths = [](const ApplicationLog& log) {
    std::vector<std::string> found;
    for (const DiscoveryWarning& warning : log.warnings) {
      found.push_back(fs::path(warning.path).filename().string());
    }
    std::sort(found.begin(), found.end());
    return found;
  };
  // The rolling directory without events: "stray" ignored, the directory skipped.
  EXPECT_EQ(paths(result.applications[0]),
            (std::vector<std::string>{"eventlog_v2_x", "notes.txt", "stray"}))
      << WarningsText(result);
  EXPECT_EQ(paths(result.applications[1]), (std::vector<std::string>{"eventlog_v2_x", "stray"}));
}

TEST_F(LogSourceTest, DatabricksClusterLogTreeGivesOneApplicationPerFolder) {
  fs::path a = root_ / "cluster-logs" / "0101-c1" / "eventlog" / "0101-c1_10_0_0_1" / "111";
  fs::path b = root_ / "cluster-logs" / "0202-c2" / "eventlog" / "0202-c2_10_0_0_2" / "222";
  WriteFile(a / "eventlog-2024-01-01--10-00.gz", "a1");
  WriteFile(a / "eventlog", "a2");
  WriteFile(b / "eventlog", "b1");
  WriteFile(root_ / "cluster-logs" / "0101-c1" / "driver" / "log4j-active.log", "not a log");
  DiscoveryResult result = DiscoverOk(root_ / "cluster-logs");
  std::vector<std::string> databricks;
  for (const auto& log : result.applications) {
    if (log.layout == "databricks") databricks.push_back(log.name);
  }
  EXPECT_EQ(databricks, (std::vector<std::string>{"111", "222"}));
  EXPECT_EQ(PartNames(result.applications[0]).back(), (a / "eventlog").string());
}

TEST_F(LogSourceTest, HistoryServerZipWithTwoAttempts) {
  const std::string part1 = "attempt one, part one";
  const std::string part2 = "attempt one, part two";
  const std::string single = "attempt two";
  fs::path zip = root_ / "eventLogs-application_1_0001.zip";
  WriteZip(zip, {{"eventlog_v2_application_1_0001_1/", ""},
                 {"eventlog_v2_application_1_0001_1/events_2_application_1_0001_1.zstd", part2},
                 {"eventlog_v2_application_1_0001_1/events_1_application_1_0001_1.zstd", part1},
                 {"eventlog_v2_application_1_0001_1/appstatus_application_1_0001_1", ""},
                 {"application_1_0001_2.lz4.inprogress", single, /*store=*/true}});
  DiscoveryResult result = DiscoverOk(zip);
  ASSERT_EQ(result.applications.size(), 2u) << WarningsText(result);
  const ApplicationLog& second = result.applications[0];
  const ApplicationLog& first = result.applications[1];
  EXPECT_EQ(first.name, "eventlog_v2_application_1_0001_1");
  EXPECT_EQ(first.layout, "rolling");
  EXPECT_EQ(first.archive, zip.string());
  EXPECT_FALSE(first.in_progress_by_name);
  EXPECT_EQ(
      PartNames(first),
      (std::vector<std::string>{
          zip.string() + "!eventlog_v2_application_1_0001_1/events_1_application_1_0001_1.zstd",
          zip.string() + "!eventlog_v2_application_1_0001_1/events_2_application_1_0001_1.zstd"}));
  EXPECT_EQ(ReadText(first.parts[0]), part1);
  EXPECT_EQ(ReadText(first.parts[1]), part2);
  EXPECT_EQ(ReadText(first.parts[1]), part2) << "open is callable more than once";
  EXPECT_EQ(second.name, "application_1_0001_2.lz4.inprogress");
  EXPECT_EQ(second.layout, "single");
  EXPECT_TRUE(second.in_progress_by_name);
  EXPECT_EQ(second.parts[0].size_bytes, single.size()) << "stored entry: compressed == raw size";
  EXPECT_EQ(ReadText(second.parts[0]), single);
  EXPECT_TRUE(result.warnings.empty()) << WarningsText(result);
}

TEST_F(LogSourceTest, ZipIsRecognisedByMagicBytesNotName) {
  WriteZip(root_ / "download", {{"app-1.zstd", "x"}});
  DiscoveryResult result = DiscoverOk(root_ / "download");
  ASSERT_EQ(result.applications.size(), 1u);
  EXPECT_EQ(result.applications[0].parts[0].display_name,
            (root_ / "download").string() + "!app-1.zstd");
}

// The CLI loads libzip when it opens its first zip: from its soname, or with a reason.
TEST(ZipLibraryTest, LoadsBySonameOrSaysWhyNot) {
  EXPECT_TRUE(CheckZipLibrary(SPARKPROF_TEST_LIBZIP_SONAME).ok());
#ifdef SPARKPROF_TEST_LIBZIP_ON_USE
  const Status missing = CheckZipLibrary("libsparkprof-no-such-library.so.1");
  EXPECT_EQ(missing.code(), StatusCode::kUnsupported);
  EXPECT_NE(missing.message().find("needs libzip"), std::string::npos) << missing.message();
  EXPECT_NE(missing.message().find("libsparkprof-no-such-library.so.1"), std::string::npos)
      << missing.message();
  const Status other = CheckZipLibrary("libz.so.1");  // a library, but not libzip
  EXPECT_EQ(other.code(), StatusCode::kUnsupported);
  EXPECT_NE(other.message().find("libz.so.1 has no zip_"), std::string::npos) << other.message();
#endif
}

TEST_F(LogSourceTest, NestedZipIsReadFromMemory) {
  std::string inner = ZipBytes(root_ / "scratch.zip", {{"eventlog", "inner log"}});
  fs::path outer = root_ / "outer.zip";
  WriteZip(outer, {{"inner.zip", inner}, {"__MACOSX/._inner.zip", "junk"}});
  DiscoveryResult result = DiscoverOk(outer);
  ASSERT_EQ(result.applications.size(), 1u) << WarningsText(result);
  const ApplicationLog& log = result.applications[0];
  EXPECT_EQ(log.parts[0].display_name, outer.string() + "!inner.zip!eventlog");
  EXPECT_EQ(log.archive, outer.string() + "!inner.zip");
  EXPECT_EQ(log.layout, "databricks");
  EXPECT_EQ(log.name, "inner");
  EXPECT_EQ(ReadText(log.parts[0]), "inner log");
  EXPECT_TRUE(result.warnings.empty()) << WarningsText(result);
}

TEST_F(LogSourceTest, NestedZipLimits) {
  std::string innermost = ZipBytes(root_ / "s1.zip", {{"app-1", std::string(5000, 'x')}});
  std::string middle = ZipBytes(root_ / "s2.zip", {{"innermost.zip", innermost}});
  fs::path outer = root_ / "outer.zip";
  WriteZip(outer, {{"middle.zip", middle}});

  DiscoveryLimits shallow;
  shallow.max_archive_depth = 2;
  DiscoveryResult too_deep = DiscoverOk(outer, shallow);
  EXPECT_TRUE(too_deep.applications.empty());
  EXPECT_TRUE(HasWarning(too_deep, "middle.zip!innermost.zip", "nested more than 2"))
      << WarningsText(too_deep);
  DiscoveryLimits at_depth;
  at_depth.max_archive_depth = 3;  // outer.zip!middle.zip!innermost.zip: exactly 3
  EXPECT_EQ(DiscoverOk(outer, at_depth).applications.size(), 1u);

  DiscoveryLimits small;
  small.max_nested_archive_bytes = 100;
  DiscoveryResult too_big = DiscoverOk(outer, small);
  EXPECT_TRUE(too_big.applications.empty());
  EXPECT_TRUE(HasWarning(too_big, "outer.zip!middle.zip", "larger than the limit"))
      << WarningsText(too_big);

  DiscoveryResult fine = DiscoverOk(outer);
  ASSERT_EQ(fine.applications.size(), 1u);
  EXPECT_EQ(fine.applications[0].parts[0].display_name,
            outer.string() + "!middle.zip!innermost.zip!app-1");
  EXPECT_EQ(ReadText(fine.applications[0].parts[0]).size(), 5000u);
}

// A zipped rolling log of a long streaming application has thousands of parts; each part used
// to reopen the archive (libzip reads the whole central directory): 10,000 parts took 209 s.
TEST_F(LogSourceTest, ZippedRollingLogOpensTheArchiveOnceNotOncePerPart) {
  constexpr int kParts = 3000;
  std::vector<ZipEntrySpec> entries = {{"eventlog_v2_app-1/appstatus_app-1", ""}};
  for (int i = 1; i <= kParts; ++i) {
    entries.push_back(
        {"eventlog_v2_app-1/events_" + std::to_string(i) + "_app-1", "part " + std::to_string(i)});
  }
  WriteZip(root_ / "rolling.zip", entries);
  DiscoveryResult result = DiscoverOk(root_ / "rolling.zip");
  ASSERT_EQ(result.applications.size(), 1u) << WarningsText(result);
  const ApplicationLog& log = result.applications[0];
  ASSERT_EQ(log.parts.size(), static_cast<size_t>(kParts));
  uint64_t opens_before = ZipArchiveOpenCount();
  for (int i = 0; i < kParts; ++i) {
    ASSERT_EQ(ReadText(log.parts[i]), "part " + std::to_string(i + 1));
  }
  EXPECT_LE(ZipArchiveOpenCount() - opens_before, 1u);
  // Two parts open at once (another thread, or a caller holding one) get handles of their own.
  Result<std::unique_ptr<InputStream>> first = log.parts[0].open();
  Result<std::unique_ptr<InputStream>> second = log.parts[1].open();
  ASSERT_TRUE(first.ok() && second.ok());
  char a[16], b[16];
  Result<size_t> got_b = (*second)->Read(b, sizeof(b));
  Result<size_t> got_a = (*first)->Read(a, sizeof(a));
  ASSERT_TRUE(got_a.ok() && got_b.ok());
  EXPECT_EQ(std::string(a, *got_a), "part 1");
  EXPECT_EQ(std::string(b, *got_b), "part 2");
}

TEST_F(LogSourceTest, ManyZipFilesDoNotHoldManyFilesOpen) {
  constexpr int kZips = 40;
  for (int i = 0; i < kZips; ++i) {
    WriteZip(root_ / ("app-" + std::to_string(i) + ".zip"), {{"app-" + std::to_string(i), "x"}});
  }
  DiscoveryResult result = DiscoverOk(root_);
  ASSERT_EQ(result.applications.size(), static_cast<size_t>(kZips));
  auto open_files = []() {
    return std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator());
  };
  auto before = open_files();
  for (const ApplicationLog& log : result.applications) EXPECT_EQ(ReadText(log.parts[0]), "x");
  EXPECT_LE(open_files() - before, static_cast<long>(kMaxIdleZipArchives));
}

// A few-MB zip of zips that inflate to GBs used to be read whole, kept until the end, and die
// with std::bad_alloc. Each nested zip and all of them together are capped; the rest is read.
TEST_F(LogSourceTest, NestedZipsTogetherAreCappedAndTheRestIsStillRead) {
  std::string inner = ZipBytes(root_ / "s.zip", {{"app-1", std::string(4000, 'x'), true}});
  fs::path outer = root_ / "outer.zip";
  WriteZip(outer, {{"a.zip", inner, true},
                   {"b.zip", inner, true},
                   {"c.zip", inner, true},
                   {"plain-app", kLine}});
  DiscoveryLimits limits;
  limits.max_nested_archive_total_bytes = 2 * inner.size();  // exactly two fit
  // The nested zips are copied to unlinked temporary files, not kept in memory.
  fs::create_directories(root_ / "tmp");
  const char* saved_tmpdir = std::getenv("TMPDIR");
  ::setenv("TMPDIR", (root_ / "tmp").c_str(), 1);
  DiscoveryResult result = DiscoverOk(outer, limits);
  if (saved_tmpdir != nullptr) {
    ::setenv("TMPDIR", saved_tmpdir, 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_TRUE(fs::is_empty(root_ / "tmp"));
  ASSERT_EQ(result.applications.size(), 3u) << WarningsText(result);
  for (const ApplicationLog& log : result.applications) {
    EXPECT_FALSE(ReadText(log.parts[0]).empty());
  }
  EXPECT_TRUE(HasWarning(result, "outer.zip!c.zip", "max_nested_archive_total_bytes"))
      << WarningsText(result);
  EXPECT_FALSE(HasWarning(result, "outer.zip!b.zip", "skipped"));
  EXPECT_EQ(result.warnings.size(), 1u) << WarningsText(result);

  limits.max_nested_archive_total_bytes = 2 * inner.size() - 1;  // one past: the second is out
  DiscoveryResult one_less = DiscoverOk(outer, limits);
  EXPECT_EQ(one_less.applications.size(), 2u) << WarningsText(one_less);
  EXPECT_TRUE(HasWarning(one_less, "outer.zip!b.zip", "max_nested_archive_total_bytes"));

  limits = DiscoveryLimits{};
  limits.max_nested_archive_bytes = inner.size();  // at the limit: read
  EXPECT_EQ(DiscoverOk(outer, limits).applications.size(), 4u);
  limits.max_nested_archive_bytes = inner.size() - 1;  // one past: skipped, named
  DiscoveryResult each_too_big = DiscoverOk(outer, limits);
  EXPECT_EQ(each_too_big.applications.size(), 1u);
  EXPECT_TRUE(HasWarning(each_too_big, "outer.zip!a.zip", "max_nested_archive_bytes"));
}

TEST_F(LogSourceTest, ArchiveEntryLimitAtAndPastIt) {
  WriteZip(root_ / "three.zip", {{"app-1", "1"}, {"app-2", "2"}, {"app-3", "3"}});
  DiscoveryLimits limits;
  limits.max_archive_entries = 3;
  DiscoveryResult at = DiscoverOk(root_ / "three.zip", limits);
  EXPECT_EQ(at.applications.size(), 3u);
  EXPECT_TRUE(at.warnings.empty()) << WarningsText(at);
  limits.max_archive_entries = 2;
  DiscoveryResult past = DiscoverOk(root_ / "three.zip", limits);
  EXPECT_EQ(past.applications.size(), 2u);
  EXPECT_TRUE(HasWarning(past, "three.zip", "only the first 2 are searched"));
}

TEST_F(LogSourceTest, CorruptAndEmptyZipsWarnNamingTheArchive) {
  std::string good = ZipBytes(root_ / "s.zip", {{"app-1", std::string(3000, 'y')}});
  WriteFile(root_ / "truncated.zip", good.substr(0, good.size() / 2));
  WriteFile(root_ / "garbage.zip", std::string("PK\3\4") + std::string(100, '\x7f'));
  WriteFile(root_ / "empty.zip", std::string("PK\5\6") + std::string(18, '\0'));
  WriteZip(root_ / "junk.zip", {{"__MACOSX/", ""},
                                {"__MACOSX/._app", "junk"},
                                {".DS_Store", "junk"},
                                {"dir/app.crc", "junk"}});
  DiscoveryResult result = DiscoverOk(root_);
  EXPECT_TRUE(result.applications.empty()) << AppNames(result)[0];
  EXPECT_TRUE(HasWarning(result, "truncated.zip", "cannot open zip archive"))
      << WarningsText(result);
  EXPECT_TRUE(HasWarning(result, "garbage.zip", "cannot open zip archive"));
  EXPECT_TRUE(HasWarning(result, "empty.zip", "no event logs"));
  EXPECT_TRUE(HasWarning(result, "junk.zip", "no event logs"));
}

TEST_F(LogSourceTest, DamagedEntryFailsWhenReadNotWhenFound) {
  std::string content(2000, 'a');
  std::string bytes = ZipBytes(root_ / "s.zip", {{"app-1", content, /*store=*/true}});
  size_t at = bytes.find(content);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1500] = 'b';
  WriteFile(root_ / "crc.zip", bytes);
  DiscoveryResult result = DiscoverOk(root_ / "crc.zip");
  ASSERT_EQ(result.applications.size(), 1u);
  Result<std::string> read = ReadPart(result.applications[0].parts[0]);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(read.status().message().find("crc.zip!app-1"), std::string::npos)
      << read.status().message();
}

TEST_F(LogSourceTest, DirectoryOfManyApplicationsSkipsJunk) {
  WriteFile(root_ / "local-2.zstd", kLine);
  WriteFile(root_ / "local-1", kLine);
  WriteFile(root_ / ".local-1.crc", "crc");
  WriteFile(root_ / "local-1.crc", "crc");
  WriteFile(root_ / "._local-1", "appledouble");
  WriteFile(root_ / ".DS_Store", "finder");
  WriteFile(root_ / "appstatus_orphan", "");
  WriteFile(root_ / ".git" / "HEAD", "ref: refs/heads/main");
  WriteFile(root_ / "__MACOSX" / "._local-2.zstd", "appledouble");
  WriteFile(root_ / "eventlog_v2_local-3" / "events_1_local-3", kLine);
  WriteFile(root_ / "eventlog_v2_local-3" / "appstatus_local-3", "");
  WriteFile(root_ / "team" / "local-4.lz4", kLine);
  WriteZip(root_ / "history" / "local-5.zip", {{"local-5", kLine}});
  DiscoveryResult result = DiscoverOk(root_);
  EXPECT_EQ(AppNames(result), (std::vector<std::string>{"eventlog_v2_local-3", "local-1",
                                                        "local-2.zstd", "local-4.lz4", "local-5"}));
  EXPECT_TRUE(result.warnings.empty()) << WarningsText(result);
}

// The folder sparkprof's driver stores beside the event log (reports, flame graphs, the
// compressed profile) is not a log: a spark.eventLog.dir with it lists the log alone.
TEST_F(LogSourceTest, SparkprofOutputsBesideTheLogAreSkipped) {
  WriteFile(root_ / "app-20260101-0001", kLine);
  WriteFile(root_ / "app-20260101-0001.sparkprof" / "report.json", "{\"schema\":1}");
  WriteFile(root_ / "app-20260101-0001.sparkprof" / "report.txt", "report");
  WriteFile(root_ / "app-20260101-0001.sparkprof" / "stage-0-attempt-0.html", "<html>");
  WriteFile(root_ / "app-20260101-0001.sparkprof" / "profile.sparkprof.zstd", "zstd");
  WriteFile(root_ / "app-20260101-0001.sparkprof" / ".report.json.1.tmp", "partial");
  DiscoveryResult result = DiscoverOk(root_);
  EXPECT_EQ(AppNames(result), (std::vector<std::string>{"app-20260101-0001"}));
  EXPECT_TRUE(result.warnings.empty()) << WarningsText(result);
}

TEST_F(LogSourceTest, SymlinkLoopsAndDuplicatesAreVisitedOnce) {
  WriteFile(root_ / "a" / "local-1", kLine);
  fs::create_directory_symlink(root_, root_ / "a" / "loop");
  fs::create_symlink(root_ / "a" / "local-1", root_ / "a" / "same-as-local-1");
  fs::create_symlink(root_ / "missing", root_ / "a" / "dangling");
  DiscoveryResult result = DiscoverOk(root_);
  EXPECT_EQ(AppNames(result), std::vector<std::string>{"local-1"});
  EXPECT_TRUE(HasWarning(result, "loop", "already searched")) << WarningsText(result);
  EXPECT_TRUE(HasWarning(result, "same-as-local-1", "already searched"));
  EXPECT_TRUE(HasWarning(result, "dangling", "skipped"));
}

TEST_F(LogSourceTest, DirectoryDepthLimit) {
  fs::path deep = root_;
  for (int i = 0; i < 5; ++i) deep /= "d" + std::to_string(i);
  WriteFile(deep / "local-1", kLine);
  DiscoveryLimits limits;
  limits.max_directory_depth = 3;
  DiscoveryResult result = DiscoverOk(root_, limits);
  EXPECT_TRUE(result.applications.empty());
  EXPECT_TRUE(HasWarning(result, "d3", "more than 3 directory levels")) << WarningsText(result);
  EXPECT_EQ(DiscoverOk(root_).applications.size(), 1u);
}

TEST_F(LogSourceTest, DirectoryDepthLimitAtAndPastIt) {
  fs::path deep = root_;
  for (int i = 0; i < 5; ++i) deep /= "d" + std::to_string(i);  // d4 is 5 levels down
  WriteFile(deep / "local-1", kLine);
  WriteZip(root_ / "zipped" / "deep.zip", {{"e0/e1/e2/local-2", kLine}});  // 3 levels in a zip
  DiscoveryLimits limits;
  limits.max_directory_depth = 5;
  EXPECT_EQ(AppNames(DiscoverOk(root_ / "d0", limits)).size(), 1u);  // 4 levels: fine
  DiscoveryResult at = DiscoverOk(root_, limits);
  EXPECT_EQ(at.applications.size(), 2u) << WarningsText(at);
  limits.max_directory_depth = 4;
  DiscoveryResult past = DiscoverOk(root_, limits);
  EXPECT_EQ(AppNames(past), std::vector<std::string>{"local-2"});
  EXPECT_TRUE(HasWarning(past, "d4", "more than 4 directory levels")) << WarningsText(past);
  limits.max_directory_depth = 3;
  EXPECT_EQ(DiscoverOk(root_ / "zipped" / "deep.zip", limits).applications.size(), 1u);
  limits.max_directory_depth = 2;
  DiscoveryResult zip_past = DiscoverOk(root_ / "zipped" / "deep.zip", limits);
  EXPECT_TRUE(zip_past.applications.empty());
  EXPECT_TRUE(HasWarning(zip_past, "e0/e1/e2/local-2", "nested deeper than 2"));
}

TEST_F(LogSourceTest, UnreadableFileWarnsAndDiscoveryContinues) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files regardless of permissions";
  WriteFile(root_ / "local-1", kLine);
  WriteFile(root_ / "local-2", kLine);
  fs::permissions(root_ / "local-1", fs::perms::none);
  DiscoveryResult result = DiscoverOk(root_);
  EXPECT_EQ(AppNames(result), std::vector<std::string>{"local-2"});
  EXPECT_TRUE(HasWarning(result, "local-1", "skipped"));
}

TEST_F(LogSourceTest, ArchiveBytesThatAreNotAZip) {
  DiscoveryResult result = DiscoverArchiveBytes("stdin", "not a zip at all");
  EXPECT_TRUE(result.applications.empty());
  EXPECT_TRUE(HasWarning(result, "stdin", "cannot open zip archive"));
}

TEST_F(LogSourceTest, PartsOfDifferentAttemptsReadIndependently) {
  fs::path zip = root_ / "logs.zip";
  WriteZip(zip, {{"app_1", std::string(5000, '1')}, {"app_2", std::string(5000, '2')}});
  DiscoveryResult result = DiscoverOk(zip);
  ASSERT_EQ(result.applications.size(), 2u);
  auto first = result.applications[0].parts[0].open();
  auto second = result.applications[1].parts[0].open();
  ASSERT_TRUE(first.ok() && second.ok());
  char a[10];
  char b[10];
  ASSERT_EQ((*first)->Read(a, 10).value(), 10u);
  ASSERT_EQ((*second)->Read(b, 10).value(), 10u);
  EXPECT_EQ(std::string(a, 10), std::string(10, '1'));
  EXPECT_EQ(std::string(b, 10), std::string(10, '2'));
}

// --- the real logs in ../shared/eventlogs ---------------------------------------------------

class SharedEventLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::is_directory(shared_)) GTEST_SKIP() << shared_ << " is absent";
  }
  const ApplicationLog* Find(const DiscoveryResult& result, const std::string& display_suffix) {
    for (const ApplicationLog& log : result.applications) {
      for (const LogPart& part : log.parts) {
        if (part.display_name.ends_with(display_suffix)) return &log;
      }
    }
    return nullptr;
  }
  fs::path shared_ = SPARKPROF_SHARED_EVENTLOGS;
};

TEST_F(SharedEventLogsTest, WholeCorpus) {
  Result<DiscoveryResult> result = Discover(shared_.string());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_GT(result->applications.size(), 100u);
  EXPECT_TRUE(std::is_sorted(
      result->applications.begin(), result->applications.end(),
      [](const ApplicationLog& a, const ApplicationLog& b) { return a.name < b.name; }));

  const std::string qualification =
      "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/";
  const ApplicationLog* rolling = Find(
      *result, qualification + "eventlog_v2_local-1623876083964/events_1_local-1623876083964.zstd");
  ASSERT_NE(rolling, nullptr);
  EXPECT_EQ(rolling->name, "eventlog_v2_local-1623876083964");
  EXPECT_EQ(rolling->layout, "rolling");
  EXPECT_FALSE(rolling->in_progress_by_name);
  ASSERT_EQ(rolling->parts.size(), 2u);
  EXPECT_TRUE(rolling->parts[0].display_name.ends_with("events_1_local-1623876083964.zstd"));
  EXPECT_TRUE(rolling->parts[1].display_name.ends_with("events_2_local-1623876083964.zstd"));

  const ApplicationLog* databricks = Find(*result, qualification + "db_sim_eventlog/eventlog");
  ASSERT_NE(databricks, nullptr);
  EXPECT_EQ(databricks->layout, "databricks");
  EXPECT_EQ(databricks->name, "db_sim_eventlog");
  ASSERT_EQ(databricks->parts.size(), 2u);
  EXPECT_TRUE(
      databricks->parts[0].display_name.ends_with("db_sim_eventlog/eventlog-2021-06-15--15-00.gz"));
  EXPECT_TRUE(databricks->parts[1].display_name.ends_with("db_sim_eventlog/eventlog"));

  const ApplicationLog* zipped =
      Find(*result, "spark_log_parser/tests/logs/databricks.zip!eventlog-2");
  ASSERT_NE(zipped, nullptr);
  EXPECT_EQ(zipped->layout, "single");
  EXPECT_GT(ReadText(zipped->parts[0]).size(), 1000000u);

  for (const auto& warning : result->warnings) {
    EXPECT_EQ(warning.path.find("__MACOSX"), std::string::npos) << warning.message;
  }
}

TEST_F(SharedEventLogsTest, MixedParsedZipSkipsMacJunk) {
  fs::path zip = shared_ / "synccomputingcode+spark_log_parser/tests/logs/bad/mixed_parsed.zip";
  Result<DiscoveryResult> result = Discover(zip.string());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(AppNames(*result),
            (std::vector<std::string>{"similarity.gz", "similarity_parsed.json.gz"}));
  EXPECT_EQ(result->applications[0].parts[0].display_name,
            zip.string() + "!mixed_parsed/similarity.gz");
  EXPECT_TRUE(result->warnings.empty()) << WarningsText(*result);
}

}  // namespace
}  // namespace sparkprof::source
