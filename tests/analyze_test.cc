// End-to-end tests of `sparkprof analyze`: golden JSON reports, every bad-input case (corrupt
// line, truncated or corrupt compressed data, lying block headers, a multi-GB line, empty files,
// random bytes, a zip that is not an event log, hostile strings), and the exit codes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/codec/encode.h"
#include "analyzer/eventlog/event_log_reader.h"
#include "analyzer/model/model_builder.h"
#include "analyzer/report/analysis.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/render.h"
#include "analyzer/testing/synthetic_app.h"
#include "tests/cli_test_util.h"

namespace sparkprof {
namespace {

namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

using AnalyzeTest = testing::CliTest;

std::string DemoLog() { return testing::GenerateEventLog(testing::DemoApp()); }

// Analyses a file, naming it `label` in the report so the golden output is machine-independent.
report::Analysis AnalyzeAs(const std::string& path, const std::string& label) {
  source::ApplicationLog log;
  log.name = label;
  log.layout = "single";
  source::LogPart part;
  part.display_name = label;
  part.open = [path]() { return OpenFileInputStream(path); };
  log.parts.push_back(part);
  return report::Analyze(log);
}

void ExpectGolden(const std::string& actual, const std::string& golden_name) {
  fs::path golden = fs::path(SPARKPROF_SOURCE_DIR) / "tests" / "golden" / golden_name;
  if (std::getenv("SPARKPROF_UPDATE_GOLDEN") != nullptr) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << actual;
    GTEST_SKIP() << "updated " << golden;
  }
  std::ifstream in(golden, std::ios::binary);
  ASSERT_TRUE(in) << "missing " << golden << " (run with SPARKPROF_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str())
      << "report differs from " << golden << "; if intended, rerun with SPARKPROF_UPDATE_GOLDEN=1";
}

TEST_F(AnalyzeTest, GoldenDemoReport) {
  std::string path = Write("demo.json", DemoLog());
  report::Analysis analysis = AnalyzeAs(path, "demo.json");
  ExpectGolden(report::RenderJson({&analysis}), "demo_report.json");
}

TEST_F(AnalyzeTest, GoldenSharedLogs) {
  fs::path logs = SPARKPROF_SHARED_EVENTLOGS;
  if (!fs::exists(logs)) GTEST_SKIP() << "no shared event logs";
  // A speculative task killed after another attempt won, six executors removed (Spark 3.1, YARN).
  const std::string speculation =
      "apache+spark/core/src/test/resources/spark-events/application_1628109047826_1317105";
  // A Spark 1.2 log: no LogStart, no CPU times, no shuffle metrics objects.
  const std::string spark12 =
      "apache+spark/core/src/test/resources/spark-events/local-1422981759269";
  // A failed stage and job (task failed 4 times, PythonException), zstd.
  const std::string failed =
      "kubeflow+mcp-apache-spark-history-server/skills/cli/e2e/spark-events/"
      "local-1776286786993.zstd";
  for (const std::string& label : {speculation, spark12, failed}) {
    SCOPED_TRACE(label);
    report::Analysis analysis = AnalyzeAs((logs / label).string(), label);
    ExpectGolden(report::RenderJson({&analysis}),
                 "shared_" + fs::path(label).filename().string() + ".json");
  }
}

// Issue 15: decoding on its own thread and the cost frontier on all cores change nothing: the
// JSON report of every shared log is byte-identical with --threads 1 (all in one thread).
TEST_F(AnalyzeTest, ThreadsGiveTheSameReportOnEverySharedLog) {
  fs::path logs = SPARKPROF_SHARED_EVENTLOGS;
  if (!fs::exists(logs)) GTEST_SKIP() << "no shared event logs";
  // 300 MB of JSON twice is too slow under sanitizers (RunCli's minute); fuzz_parallel_reader
  // compares the two readers there.
  if (kSanitized) GTEST_SKIP() << "sanitized build";
  Run single = RunCli("analyze -q --format json --threads 1 " + logs.string());
  Run threaded = RunCli("analyze -q --format json --threads 4 " + logs.string());
  ASSERT_EQ(single.exit_code, 0) << single.err;
  ASSERT_EQ(threaded.exit_code, 0) << threaded.err;
  ASSERT_GT(single.out.size(), 100'000u);  // every application's report, not an error
  if (single.out != threaded.out) {
    size_t at = 0;
    while (at < single.out.size() && at < threaded.out.size() &&
           single.out[at] == threaded.out[at]) {
      ++at;
    }
    const size_t from = at > 300 ? at - 300 : 0;
    FAIL() << "reports differ at byte " << at << ":\n--threads 1: " << single.out.substr(from, 400)
           << "\n--threads 4: " << threaded.out.substr(from, 400);
  }
  // The directory's applications are analysed side by side: what each prints on stderr still
  // comes in the directory's order, the same lines as with one thread.
  Run single_text = RunCli("analyze --threads 1 " + logs.string());
  Run threaded_text = RunCli("analyze --threads 2 " + logs.string());
  EXPECT_NE(single_text.err.find("no Spark events could be read"), std::string::npos)
      << single_text.err;
  EXPECT_EQ(single_text.err, threaded_text.err);
  EXPECT_EQ(single_text.out, threaded_text.out);
}

// `analyze` frees each application's task records once it is analysed (a directory of
// thousands of logs would otherwise keep them all until the report is written): the text,
// Markdown and JSON reports must not read them, the HTML one only its kept timeline.
TEST_F(AnalyzeTest, ReportsNeedNoTaskRecordsOnceAnalysed) {
  report::Analysis analysis = AnalyzeAs(Write("demo.json", DemoLog()), "demo.json");
  ASSERT_GT(analysis.model.tasks.size(), 250u);
  const std::vector<const report::Analysis*> reports = {&analysis};
  const std::string json = report::RenderReport("json", reports);
  const std::string text = report::RenderReport("text", reports);
  const std::string markdown = report::RenderReport("md", reports);
  const std::string html = report::RenderReport("html", reports);
  report::KeepTaskTimeline(analysis);  // what the HTML timeline reads of the tasks
  report::ReleaseTaskRecords(analysis);
  EXPECT_EQ(analysis.model.tasks.capacity(), 0u);
  EXPECT_EQ(report::RenderReport("json", reports), json);
  EXPECT_EQ(report::RenderReport("text", reports), text);
  EXPECT_EQ(report::RenderReport("md", reports), markdown);
  EXPECT_EQ(report::RenderReport("html", reports), html);
  // Without it, the HTML timeline would lose its tasks: the check above can tell.
  analysis.task_timeline = nullptr;
  EXPECT_NE(report::RenderReport("html", reports), html);
}

TEST_F(AnalyzeTest, EveryCodecGivesTheSameModel) {
  std::string log = DemoLog();
  std::string plain = Write("demo.json", log);
  report::Analysis reference = AnalyzeAs(plain, "x");
  for (codec::Format format : {codec::Format::kLz4Block, codec::Format::kSnappyJava,
                               codec::Format::kZstd, codec::Format::kLzf, codec::Format::kGzip}) {
    SCOPED_TRACE(codec::FormatName(format));
    Result<std::string> encoded = codec::Encode(format, log);
    ASSERT_TRUE(encoded.ok());
    // A misleading extension: detection goes by magic bytes.
    std::string path = Write(std::string("demo.") + codec::FormatName(format) + ".txt", *encoded);
    report::Analysis analysis = AnalyzeAs(path, "x");
    EXPECT_EQ(analysis.read.files[0].codec, codec::FormatName(format));
    EXPECT_EQ(analysis.read.files[0].decoded_bytes, log.size());
    EXPECT_EQ(analysis.summary.counts.task_attempts, reference.summary.counts.task_attempts);
    EXPECT_EQ(analysis.summary.totals.disk_bytes_spilled,
              reference.summary.totals.disk_bytes_spilled);
    EXPECT_TRUE(analysis.read.files[0].error.empty()) << analysis.read.files[0].error;
  }
}

// Issue 33: what a source holds and the report does not read is named in the report itself
// (input.not_read), not only on stderr: here a file beside a Databricks log's parts.
TEST_F(AnalyzeTest, FilesBesideTheLogAreNamedInTheReport) {
  const std::string log = DemoLog();
  const size_t half = log.find('\n', log.size() / 2) + 1;
  Result<std::string> rolled = codec::Encode(codec::Format::kGzip, log.substr(0, half));
  ASSERT_TRUE(rolled.ok());
  std::filesystem::create_directories(dir_ / "delivery");
  Write("delivery/eventlog-2024-01-01--10-00.gz", *rolled);
  Write("delivery/eventlog", log.substr(half));
  Write("delivery/databricks_pricing.json", "{\n  \"dbu\": 0.55\n}\n");
  const std::string folder = (dir_ / "delivery").string();
  Run json = RunCli("analyze --format json " + folder);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.err.find("databricks_pricing.json: ignored: not a part"), std::string::npos)
      << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report = parser.parse(json.out);
  simdjson::dom::element input = report["input"];
  EXPECT_EQ(simdjson::dom::array(input["files"]).size(), 2u);
  simdjson::dom::array not_read = input["not_read"];
  ASSERT_EQ(not_read.size(), 1u) << json.out.substr(0, 200);
  EXPECT_NE(std::string(std::string_view(not_read.at(0)["path"])).find("databricks_pricing.json"),
            std::string::npos);
  EXPECT_NE(std::string(std::string_view(not_read.at(0)["why"])).find("not a part"),
            std::string::npos);
  EXPECT_EQ(int64_t(report["counts"]["task_attempts"]),
            AnalyzeAs(Write("whole.json", log), "whole.json").summary.counts.task_attempts);
  Run text = RunCli("analyze " + folder);
  EXPECT_NE(text.out.find("not read: " + folder + "/databricks_pricing.json: ignored"),
            std::string::npos)
      << text.out;
}

// A rolled Databricks part that is a gzipped zip named like a gzipped part
// (eventlog-<time>.gz, not .zip.gz) is not searched, nor read as a log and called "not an event
// log": it is named in input.not_read and on stderr with why and how to have it read; the log's
// other part is analysed.
TEST_F(AnalyzeTest, CompressedZipNamedLikeAPartIsNamedWithWhy) {
  const std::string log = DemoLog();
  const size_t half = log.find('\n', log.size() / 2) + 1;
  fs::create_directories(dir_ / "zipsrc");
  Write("zipsrc/eventlog-2024-01-01--10-00", log.substr(0, half));
  const std::string zip = (dir_ / "part.zip").string();
  ASSERT_EQ(std::system(("cd " + (dir_ / "zipsrc").string() + " && zip -q " + zip +
                         " eventlog-2024-01-01--10-00")
                            .c_str()),
            0);
  std::ifstream in(zip, std::ios::binary);
  const std::string zip_bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
  fs::create_directories(dir_ / "delivery");
  Write("delivery/eventlog-2024-01-01--10-00.gz", *codec::Encode(codec::Format::kGzip, zip_bytes));
  Write("delivery/eventlog", log.substr(half));
  const std::string folder = (dir_ / "delivery").string();
  const std::string part = folder + "/eventlog-2024-01-01--10-00.gz";
  const std::string why =
      "a zip archive compressed as gzip, not an event log: rename it "
      "eventlog-2024-01-01--10-00.zip.gz (a compressed file is searched for logs only when .zip "
      "is among its extensions) or unpack it";
  Run json = RunCli("analyze --format json " + folder);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.err.find(part + ": " + why), std::string::npos) << json.err;
  EXPECT_EQ(json.err.find("invalid JSON"), std::string::npos) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report = parser.parse(json.out);
  simdjson::dom::array not_read = report["input"]["not_read"];
  ASSERT_EQ(not_read.size(), 1u) << json.out.substr(0, 200);
  EXPECT_EQ(std::string_view(not_read.at(0)["path"]), part);
  EXPECT_EQ(std::string_view(not_read.at(0)["why"]), why);
  EXPECT_EQ(int64_t(report["input"]["bad_line_count"]), 0);
  EXPECT_GT(int64_t(report["counts"]["task_attempts"]), 0);
  Run text = RunCli("analyze " + folder);
  EXPECT_NE(text.out.find("not read: " + part + ": a zip archive compressed as gzip"),
            std::string::npos)
      << text.out;
}

TEST_F(AnalyzeTest, CorruptLineIsLocatedAndTheRestAnalysed) {
  std::string log = DemoLog();
  size_t line_start = 0;
  for (int i = 0; i < 40; ++i) line_start = log.find('\n', line_start) + 1;
  size_t line_end = log.find('\n', line_start);
  log.replace(line_start + 10, 20, "\x01garbage\"}{[");
  std::string path = Write("corrupt.json", log);
  report::Analysis analysis = AnalyzeAs(path, "corrupt.json");
  ASSERT_EQ(analysis.read.bad_line_count, 1);
  EXPECT_EQ(analysis.read.bad_lines[0].line, 41);
  EXPECT_EQ(analysis.read.bad_lines[0].byte_offset, line_start);
  EXPECT_EQ(analysis.read.bad_lines[0].file, "corrupt.json");
  EXPECT_GT(analysis.summary.counts.task_attempts, 250);
  (void)line_end;

  Run run = RunCli("analyze " + path);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.err.find("corrupt.json:41 (byte " + std::to_string(line_start) + ")"),
            std::string::npos)
      << run.err;
}

// --profile: a missing profile is said on stderr and in the report, and the event log's analysis
// goes on; one profile file for a directory of several applications is refused (it names none).
TEST_F(AnalyzeTest, ProfileThatCannotBeUsedIsSaidNotFatal) {
  std::string path = Write("app.json", DemoLog());
  const fs::path dir = fs::path(path).parent_path();
  Run run =
      RunCli("analyze --format json --profile " + (dir / "no-such-dir").string() + " " + path);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("profile not used"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("\"available\": false"), std::string::npos);
  Run corrupt = RunCli("analyze --profile " + Write("bad.sparkprof", "not a profile") + " " + path);
  EXPECT_EQ(corrupt.exit_code, 0);
  EXPECT_NE(corrupt.err.find("bad.sparkprof"), std::string::npos) << corrupt.err;
  // Two applications, one file.
  fs::create_directories(dir / "two");
  Write("two/a.json", DemoLog());
  testing::SyntheticApp other = testing::DemoApp();
  other.app_id = "application_1700000000000_0043";
  std::string two = Write("two/b.json", testing::GenerateEventLog(other));
  Run refused = RunCli("analyze --profile " + Write("one.sparkprof", "x") + " " +
                       fs::path(two).parent_path().string());
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("one profile file for 2 applications"), std::string::npos)
      << refused.err;
}

TEST_F(AnalyzeTest, InProgressLogWithCutLastLine) {
  testing::SyntheticApp app = testing::DemoApp();
  app.end_application = false;
  std::string log = testing::GenerateEventLog(app);
  log.resize(log.size() - 100);  // cut mid-line, as a log still being written
  std::string path = Write("app.inprogress", log);
  report::Analysis analysis = AnalyzeAs(path, "app.inprogress");
  EXPECT_FALSE(analysis.model.complete);
  ASSERT_EQ(analysis.read.bad_line_count, 1);
  EXPECT_NE(analysis.read.bad_lines[0].error.find("still being written"), std::string::npos);
}

TEST_F(AnalyzeTest, TruncatedCompressedStreamsKeepWhatWasRead) {
  std::string log = DemoLog();
  for (codec::Format format : {codec::Format::kLz4Block, codec::Format::kSnappyJava,
                               codec::Format::kZstd, codec::Format::kLzf, codec::Format::kGzip}) {
    SCOPED_TRACE(codec::FormatName(format));
    std::string encoded = *codec::Encode(format, log);
    encoded.resize(encoded.size() * 6 / 10);
    std::string path = Write("cut", encoded);
    report::Analysis analysis = AnalyzeAs(path, "cut");
    const std::string& error = analysis.read.files[0].error;
    EXPECT_NE(error.find("byte"), std::string::npos) << error;
    EXPECT_NE(error.find("analysed the"), std::string::npos) << error;
    EXPECT_GT(analysis.read.events, 50);
    EXPECT_LT(analysis.read.events, 587);
  }
}

TEST_F(AnalyzeTest, WrongLz4ChecksumIsReportedWithOffset) {
  std::string encoded = *codec::Encode(codec::Format::kLz4Block, DemoLog());
  // Second block's checksum field: header is 21 bytes, first block payload follows.
  uint32_t first_len;
  std::memcpy(&first_len, encoded.data() + 9, 4);  // little-endian on x86
  size_t second = 21 + first_len;
  encoded[second + 17] ^= 0x5A;
  std::string path = Write("bad.lz4", encoded);
  report::Analysis analysis = AnalyzeAs(path, "bad.lz4");
  const std::string& error = analysis.read.files[0].error;
  EXPECT_NE(error.find("checksum"), std::string::npos) << error;
  EXPECT_NE(error.find("byte " + std::to_string(second)), std::string::npos) << error;
}

TEST_F(AnalyzeTest, LyingBlockHeaderIsRejectedNotAllocated) {
  std::string encoded = *codec::Encode(codec::Format::kSnappyJava, DemoLog());
  // First chunk length (big-endian, after the 16-byte header) claims 1.9 GB.
  encoded[16] = 0x70;
  std::string path = Write("bomb.snappy", encoded);
  report::Analysis analysis = AnalyzeAs(path, "bomb.snappy");
  EXPECT_FALSE(analysis.read.files[0].error.empty());
  EXPECT_EQ(analysis.read.events, 0);
  Run run = RunCli("analyze " + path);
  EXPECT_EQ(run.exit_code, 2);
}

// Serves `prefix`, then `filler_bytes` of 'x' (one enormous line), then `suffix`: a multi-GB
// line without multi-GB of memory anywhere.
class HugeLineStream : public InputStream {
 public:
  HugeLineStream(std::string prefix, uint64_t filler_bytes, std::string suffix)
      : prefix_(std::move(prefix)), filler_(filler_bytes), suffix_(std::move(suffix)) {}
  Result<size_t> Read(char* buffer, size_t size) override {
    uint64_t total = prefix_.size() + filler_ + suffix_.size();
    size_t n = static_cast<size_t>(std::min<uint64_t>(size, total - offset_));
    for (size_t i = 0; i < n;) {
      uint64_t at = offset_ + i;
      if (at < prefix_.size()) {
        size_t k = std::min<size_t>(n - i, prefix_.size() - at);
        std::memcpy(buffer + i, prefix_.data() + at, k);
        i += k;
      } else if (at < prefix_.size() + filler_) {
        size_t k = static_cast<size_t>(std::min<uint64_t>(n - i, prefix_.size() + filler_ - at));
        std::memset(buffer + i, 'x', k);
        i += k;
      } else {
        size_t k = std::min<size_t>(n - i, total - at);
        std::memcpy(buffer + i, suffix_.data() + (at - prefix_.size() - filler_), k);
        i += k;
      }
    }
    offset_ += n;
    return n;
  }
  uint64_t input_offset() const override { return offset_; }

 private:
  std::string prefix_;
  uint64_t filler_;
  std::string suffix_;
  uint64_t offset_ = 0;
};

TEST_F(AnalyzeTest, MultiGigabyteLineIsSkippedWithBoundedMemory) {
  const uint64_t filler = kSanitized ? (300ull << 20) : (3ull << 30);
  std::string first = R"({"Event":"SparkListenerLogStart","Spark Version":"3.5.1"})";
  std::string last = R"({"Event":"SparkListenerApplicationEnd","Timestamp":1700000000000})";
  HugeLineStream stream(first + "\n{\"Event\":\"SparkListenerTaskEnd\",\"junk\":\"", filler,
                        "\"}\n" + last + "\n");
  model::ModelBuilder builder;
  eventlog::EventParser parser(builder);
  eventlog::ReaderOptions options;
  options.lines.max_line_bytes = 64u << 20;
  eventlog::ReadReport report;
  eventlog::FileReadReport file;
  eventlog::ReadEventStream(stream, "huge", parser, options, report, file);
  EXPECT_EQ(file.events, 2);
  ASSERT_EQ(report.bad_line_count, 1);
  EXPECT_EQ(report.bad_lines[0].line, 2);
  EXPECT_EQ(report.bad_lines[0].byte_offset, first.size() + 1);
  EXPECT_NE(report.bad_lines[0].error.find("exceeds the limit"), std::string::npos);
  EXPECT_TRUE(builder.Finish().complete);
}

TEST_F(AnalyzeTest, TaskReservationFromAHostileSizeIsCapped) {
  // Analyze() reserves from the input's size; a size that claims billions of tasks gets the cap.
  model::ModelBuilder builder;
  builder.ReserveTaskAttempts(SIZE_MAX);
  EXPECT_EQ(builder.model().tasks.capacity(), model::ModelBuilder::kMaxReservedTaskAttempts);
  EXPECT_TRUE(builder.model().tasks.empty());
}

TEST_F(AnalyzeTest, NothingAnalysableExitsTwo) {
  // Empty file.
  Run empty = RunCli("analyze " + Write("empty", ""));
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("no Spark events"), std::string::npos) << empty.err;
  // Random bytes.
  std::mt19937 engine(7);
  std::string random(1 << 16, '\0');
  for (char& c : random) c = static_cast<char>(engine());
  Run noise = RunCli("analyze " + Write("noise.bin", random));
  EXPECT_EQ(noise.exit_code, 2);
  EXPECT_FALSE(noise.err.empty());
  // Text that is not an event log.
  std::string text;
  for (int i = 0; i < 200; ++i) text += "this is a README line " + std::to_string(i) + "\n";
  Run readme = RunCli("analyze " + Write("README.txt", text));
  EXPECT_EQ(readme.exit_code, 2);
  EXPECT_NE(readme.err.find("not a Spark event log"), std::string::npos) << readme.err;
  // A zip that holds no event log.
  fs::path zip_dir = dir_ / "zipsrc";
  fs::create_directories(zip_dir);
  std::ofstream(zip_dir / "image.png", std::ios::binary) << random;
  std::ofstream(zip_dir / "notes.txt") << text;
  std::string zip = (dir_ / "notlogs.zip").string();
  ASSERT_EQ(std::system(
                ("cd " + zip_dir.string() + " && zip -q " + zip + " image.png notes.txt").c_str()),
            0);
  Run notlog = RunCli("analyze " + zip);
  EXPECT_EQ(notlog.exit_code, 2);
  // A path that does not exist.
  Run missing = RunCli("analyze " + (dir_ / "nope").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope"), std::string::npos);
  // Bad command line.
  EXPECT_EQ(RunCli("analyze --format yaml x").exit_code, 1);
}

#ifdef SPARKPROF_LIBZIP_ON_USE
// libzip (with the libcrypto, libbz2 and liblzma it needs) is loaded only when a zip is read:
// the dynamic loader's own log of the files it opens says so.
TEST_F(AnalyzeTest, LibzipIsLoadedOnlyForZips) {
  const std::string log = Write("app.json", testing::GenerateEventLog(testing::DemoApp()));
  fs::path zip_dir = dir_ / "zipsrc";
  fs::create_directories(zip_dir);
  fs::copy_file(log, zip_dir / "app-1");
  const std::string zip = (dir_ / "logs.zip").string();
  ASSERT_EQ(std::system(("cd " + zip_dir.string() + " && zip -q " + zip + " app-1").c_str()), 0);
  const std::string soname = SPARKPROF_LIBZIP_ON_USE;
  // The test's only thread changes the environment the CLI children (std::system) inherit.
  ASSERT_EQ(::setenv("LD_DEBUG", "files", 1), 0);  // NOLINT(concurrency-mt-unsafe): one thread
  Run plain = RunCli("analyze -q --format json " + log);
  Run zipped = RunCli("analyze -q --format json " + zip);
  ::unsetenv("LD_DEBUG");  // NOLINT(concurrency-mt-unsafe): one thread
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(zipped.exit_code, 0) << zipped.err;
  EXPECT_NE(plain.err.find("file=libsimdjson"), std::string::npos) << "LD_DEBUG had no effect";
  EXPECT_EQ(plain.err.find("file=" + soname), std::string::npos) << plain.err;
  EXPECT_NE(zipped.err.find("file=" + soname), std::string::npos) << zipped.err;
  EXPECT_NE(zipped.out.find("\"application\""), std::string::npos) << zipped.out;
}
#endif

TEST_F(AnalyzeTest, HostileStringsAreEscapedInJson) {
  testing::SyntheticApp app = testing::DemoApp();
  app.app_name = "<script>alert(\"x\")</script>\x1b[31m\xff\xfe";
  app.sql_description = "</script><!-- \u2028 \\ \"";
  std::string path = Write("hostile.json", testing::GenerateEventLog(app));
  Run run = RunCli("analyze --format json " + path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_EQ(parser.parse(run.out).get(report), simdjson::SUCCESS) << "report is not valid JSON";
  std::string_view name;
  ASSERT_EQ(report["application"]["name"].get_string().get(name), simdjson::SUCCESS);
  EXPECT_EQ(name.substr(0, 28), "<script>alert(\"x\")</script>\x1b");
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos);  // escaped as \u001b
  EXPECT_EQ(run.out.find('\xff'), std::string::npos);  // invalid UTF-8 replaced
  Run text = RunCli("analyze " + path);
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos);  // no terminal escapes reach the screen
}

// The application names of a several-application JSON report ("schema" checked), in order.
std::vector<std::string> ApplicationNames(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  std::string_view schema;
  simdjson::dom::array applications;
  std::vector<std::string> names;
  if (parser.parse(json).get(report) != simdjson::SUCCESS ||
      report["schema"].get_string().get(schema) != simdjson::SUCCESS ||
      schema != "sparkprof.report/v1" ||
      report["applications"].get_array().get(applications) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not a several-application report: " << json.substr(0, 200);
    return names;
  }
  for (simdjson::dom::element application : applications) {
    std::string_view name;
    if (application["application"]["name"].get_string().get(name) == simdjson::SUCCESS) {
      names.emplace_back(name);
    }
  }
  return names;
}

TEST_F(AnalyzeTest, DirectoryOfApplicationsGivesOneReportEach) {
  testing::SyntheticApp first = testing::DemoApp();
  testing::SyntheticApp second = testing::DemoApp();
  second.app_id = "application_1700000000000_0043";
  second.app_name = "second";
  fs::create_directories(dir_ / "logs");
  std::ofstream(dir_ / "logs" / "application_1700000000000_0042", std::ios::binary)
      << testing::GenerateEventLog(first);
  std::ofstream(dir_ / "logs" / "application_1700000000000_0043.zstd", std::ios::binary)
      << *codec::Encode(codec::Format::kZstd, testing::GenerateEventLog(second));
  Run run = RunCli("analyze --format json " + (dir_ / "logs").string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(ApplicationNames(run.out), (std::vector<std::string>{"nightly-etl", "second"}));
}

// A directory's report of several applications names the files that gave none, with why, after
// the applications: the first 50 in the directory's order, the rest counted (as input.not_read);
// a rolling log by its folder. Every format; the report of one application stays that alone.
TEST_F(AnalyzeTest, DirectoryReportNamesTheApplicationsNotAnalysed) {
  testing::SyntheticApp second = testing::DemoApp();
  second.app_id = "application_1700000000000_0043";
  second.app_name = "second";
  fs::create_directories(dir_ / "logs" / "eventlog_v2_local-1");
  Write("logs/application_1700000000000_0042", DemoLog());
  Write("logs/application_1700000000000_0043", testing::GenerateEventLog(second));
  Write("logs/eventlog_v2_local-1/events_1_local-1", "not json\n");
  Write("logs/eventlog_v2_local-1/appstatus_local-1", "");
  for (int i = 0; i < 52; ++i) Write("logs/empty_" + std::to_string(100 + i), "");
  const std::string logs = (dir_ / "logs").string();
  Run json = RunCli("analyze -q --format json " + logs);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(ApplicationNames(json.out), (std::vector<std::string>{"nightly-etl", "second"}));
  simdjson::dom::parser parser;
  simdjson::dom::element report = parser.parse(json.out);
  simdjson::dom::array not_analysed = report["not_analysed"];
  ASSERT_EQ(not_analysed.size(), 50u);
  EXPECT_EQ(int64_t(report["not_analysed_left_out"]), 3);  // 53 not analysed in all
  EXPECT_EQ(std::string_view(not_analysed.at(0)["path"]), logs + "/empty_100");
  EXPECT_EQ(std::string_view(not_analysed.at(0)["why"]), "no Spark events could be read: empty");
  // The rolling log sorts after the files: the last not listed. Its why, one level up:
  fs::create_directories(dir_ / "few" / "eventlog_v2_local-1");
  Write("few/eventlog_v2_local-1/events_1_local-1", "not json\n");
  Write("few/eventlog_v2_local-1/appstatus_local-1", "");
  Write("few/application_1700000000000_0042", DemoLog());
  Write("few/application_1700000000000_0043", testing::GenerateEventLog(second));
  const std::string few = (dir_ / "few").string();
  Run few_json = RunCli("analyze -q --format json " + few);
  ASSERT_EQ(few_json.exit_code, 0) << few_json.err;
  simdjson::dom::element few_report = parser.parse(few_json.out);
  simdjson::dom::array rolling = few_report["not_analysed"];
  ASSERT_EQ(rolling.size(), 1u) << few_json.out;
  EXPECT_EQ(std::string_view(rolling.at(0)["path"]), few + "/eventlog_v2_local-1");
  EXPECT_EQ(std::string_view(rolling.at(0)["why"]),
            "no Spark events could be read: 1 line(s), none a Spark event");
  EXPECT_EQ(int64_t(few_report["not_analysed_left_out"]), 0);
  const std::string line = few +
                           "/eventlog_v2_local-1: no Spark events could be read: 1 line(s), "
                           "none a Spark event";
  Run text = RunCli("analyze -q " + few);
  EXPECT_NE(text.out.find("\nNot analysed (no report above)\n  " + line + "\n"), std::string::npos)
      << text.out;
  Run markdown = RunCli("analyze -q --format md " + few);
  EXPECT_NE(markdown.out.find("## Not analysed (no report above)\n\n- "), std::string::npos)
      << markdown.out;
  EXPECT_NE(markdown.out.find("eventlog\\_v2\\_local-1: no Spark events"), std::string::npos)
      << markdown.out;
  Run html = RunCli("analyze -q --format html " + few);
  EXPECT_NE(html.out.find("<li>not analysed: " + line + "</li>"), std::string::npos);
  Run many = RunCli("analyze -q " + logs);
  EXPECT_NE(many.out.find("  3 more not analysed (all on stderr)\n"), std::string::npos);
  // One analysable application: its report alone, as before (stderr names the others).
  fs::remove(dir_ / "few" / "application_1700000000000_0043");
  Run alone = RunCli("analyze -q --format json " + few);
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(alone.out.find("not_analysed"), std::string::npos);
  EXPECT_NE(alone.err.find("eventlog_v2_local-1: no Spark events could be read; not analysed"),
            std::string::npos)
      << alone.err;
}

// Peak resident memory (KiB) of one successful run of `sparkprof ARGS` (its output to /dev/null),
// or -1: the run's own rusage, whatever other tests ran in this process.
int64_t PeakRssKiB(const std::vector<std::string>& args) {
  std::vector<std::string> words = {SPARKPROF_CLI};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  struct rusage usage {};
  if (wait4(pid, &status, 0, &usage) != pid) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? usage.ru_maxrss : -1;
}

// A directory's report is written as its applications finish: memory grows with the
// applications in flight, not with the directory. Before, every application's analysis stayed
// until the end: 200 demo applications took 13-24 MB more than 20 (one thread: no arena noise).
// html keeps each application's rendered section for the page's head: it may grow by the page.
TEST_F(AnalyzeTest, DirectoryMemoryDoesNotGrowWithItsApplications) {
  if (kSanitized) GTEST_SKIP() << "sanitized build (its allocator keeps freed memory)";
  const std::string log =
      *codec::Encode(codec::Format::kZstd, testing::GenerateEventLog(testing::DemoApp()));
  fs::create_directories(dir_ / "few");
  fs::create_directories(dir_ / "many");
  for (int i = 0; i < 200; ++i) {
    const std::string name = "app_" + std::to_string(1000 + i) + ".zstd";
    if (i < 20) std::ofstream(dir_ / "few" / name, std::ios::binary) << log;
    std::ofstream(dir_ / "many" / name, std::ios::binary) << log;
  }
  for (const char* format : {"json", "text", "html"}) {
    const std::string report = (dir_ / "report").string();
    auto peak = [&](const char* dir) {
      return PeakRssKiB({"analyze", "-q", "--threads", "1", "--format", format, "-o", report,
                         (dir_ / dir).string()});
    };
    const int64_t few = peak("few");
    const int64_t many = peak("many");
    ASSERT_GT(few, 0) << format;
    ASSERT_GT(many, 0) << format;
    const int64_t page_kib =
        std::string(format) == "html" ? static_cast<int64_t>(fs::file_size(report) / 1024) : 0;
    EXPECT_LT(many - few, 4 * 1024 + page_kib)
        << format << ": " << few << " KiB for 20, " << many << " KiB for 200 applications";
  }
}

// A directory's report is written application by application (each as soon as the ones before
// it are done): one analysable application among others gives exactly its report alone (an
// application that cannot be analysed is named on stderr, and in a report of several at its end:
// DirectoryReportNamesTheApplicationsNotAnalysed), and a report that cannot be written
// is one message and exit code 1, whatever the format.
TEST_F(AnalyzeTest, DirectoryReportWrittenAsApplicationsFinish) {
  const std::string demo_log = testing::GenerateEventLog(testing::DemoApp());
  fs::create_directories(dir_ / "one");
  std::ofstream(dir_ / "one" / "application_1700000000000_0041", std::ios::binary) << "";
  std::ofstream(dir_ / "one" / "application_1700000000000_0042", std::ios::binary) << demo_log;
  const std::string alone = (dir_ / "one" / "application_1700000000000_0042").string();
  for (const char* format : {"json", "text", "md"}) {
    const std::string args = std::string("analyze -q --format ") + format + " ";
    Run directory = RunCli(args + (dir_ / "one").string());
    Run single = RunCli(args + alone);
    ASSERT_EQ(directory.exit_code, 0) << format << ": " << directory.err;
    EXPECT_EQ(directory.out, single.out) << format;
  }
  // Three applications, the unanalysable one first: two reports, in the directory's order.
  testing::SyntheticApp second = testing::DemoApp();
  second.app_id = "application_1700000000000_0043";
  second.app_name = "second";
  std::ofstream(dir_ / "one" / "application_1700000000000_0043", std::ios::binary)
      << testing::GenerateEventLog(second);
  Run both = RunCli("analyze -q --format json " + (dir_ / "one").string());
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(ApplicationNames(both.out), (std::vector<std::string>{"nightly-etl", "second"}));
  // html: the sections are numbered by their place on the page, not in the directory.
  Run page = RunCli("analyze -q --format html " + (dir_ / "one").string());
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(page.out.find("<title>sparkprof: 2 applications</title>"), std::string::npos);
  EXPECT_NE(page.out.find("<section class=\"application\" id=\"app2\">"), std::string::npos);
  EXPECT_EQ(page.out.find("id=\"app3\""), std::string::npos);
  EXPECT_LT(page.out.find(">nightly-etl</a><a href=\"#app2\">second</a>"), page.out.size());
  for (const char* format : {"json", "text", "md", "html"}) {
    Run full = RunCli(std::string("analyze -q --format ") + format + " " + (dir_ / "one").string(),
                      "> /dev/full");
    EXPECT_EQ(full.exit_code, 1) << format;
    size_t messages = 0;
    for (size_t at = full.err.find("cannot write the report"); at != std::string::npos;
         at = full.err.find("cannot write the report", at + 1)) {
      ++messages;
    }
    EXPECT_EQ(messages, 1u) << format << ": " << full.err;
  }
}

// --fail-on: exit code 3 after the report is written when a finding at or above the severity
// exists; 0 when none does; the other formats are reachable from the command line.
TEST_F(AnalyzeTest, FailOnExitCodesAndReportFormats) {
  std::string demo = Write("demo.json", DemoLog());  // has critical and warning findings
  Run plain = RunCli("analyze " + demo);
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  std::string report_path = (dir_ / "report.txt").string();
  Run critical = RunCli("analyze --fail-on critical -o " + report_path + " " + demo);
  EXPECT_EQ(critical.exit_code, 3) << critical.err;
  EXPECT_GT(fs::file_size(report_path), 1000u) << "the report is written before failing";
  Run warning = RunCli("analyze --fail-on warning --format json " + demo);
  EXPECT_EQ(warning.exit_code, 3);
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  EXPECT_EQ(parser.parse(warning.out).get(report), simdjson::SUCCESS);

  // One short, even stage on executors that are there from the start: nothing critical.
  testing::SyntheticApp mild;
  mild.executor_start_delay_ms = 200;
  mild.driver_gap_ms = 100;
  testing::SyntheticStage stage;
  stage.name = "count at Mild.scala:1";
  stage.tasks = 16;
  mild.stages.push_back(stage);
  std::string mild_path = Write("mild.json", testing::GenerateEventLog(mild));
  report::Analysis analysis = AnalyzeAs(mild_path, "mild.json");
  bool has_critical = false, has_warning = false;
  for (const diagnosis::Finding& f : analysis.findings) {
    has_critical = has_critical || f.severity == diagnosis::Severity::kCritical;
    has_warning = has_warning || f.severity == diagnosis::Severity::kWarning;
  }
  ASSERT_FALSE(has_critical) << report::RenderJson({&analysis});
  EXPECT_EQ(RunCli("analyze --fail-on critical " + mild_path).exit_code, 0);
  EXPECT_EQ(RunCli("analyze --fail-on warning " + mild_path).exit_code, has_warning ? 3 : 0);

  EXPECT_EQ(RunCli("analyze --fail-on error " + demo).exit_code, 1);
  Run markdown = RunCli("analyze --format md " + demo);
  EXPECT_EQ(markdown.exit_code, 0);
  EXPECT_EQ(markdown.out.rfind("# sparkprof report: nightly-etl\n", 0), 0u);
  Run html = RunCli("analyze --format html --fail-on critical " + demo);
  EXPECT_EQ(html.exit_code, 3);
  EXPECT_EQ(html.out.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.out.find("</html>"), std::string::npos);
}

TEST_F(AnalyzeTest, HostileStringsAreEscapedInHtmlAndMarkdown) {
  testing::SyntheticApp app = testing::DemoApp();
  app.app_name = "<script>alert(1)</script>";
  app.sql_description = "</script><script>alert(2)</script>";
  app.stages[0].name = "<script>alert(3)</script>";
  std::string path = Write("hostile.json", testing::GenerateEventLog(app));
  Run html = RunCli("analyze --format html " + path);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_EQ(html.out.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.out.find("</script><script>"), std::string::npos);
  EXPECT_NE(html.out.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  Run markdown = RunCli("analyze --format md " + path);
  ASSERT_EQ(markdown.exit_code, 0) << markdown.err;
  EXPECT_EQ(markdown.out.find("<script"), std::string::npos);
  EXPECT_EQ(markdown.out.find("</script"), std::string::npos);
}

}  // namespace
}  // namespace sparkprof
