#include "analyzer/eventlog/event_log_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "analyzer/codec/encode.h"

namespace sparkprof::eventlog {
namespace {

class CountingSink final : public EventSink {
  void OnEvent(const Event&) override {}
};

const std::string kLine = R"({"Event":"SparkListenerLogStart","Spark Version":"3.5.1"})"
                          "\n";

// One application of one in-memory part whose "compressed" size is `size_bytes`.
source::ApplicationLog OnePart(const std::string& text, uint64_t size_bytes) {
  source::ApplicationLog log;
  log.name = "app";
  source::LogPart part;
  part.display_name = "app.log";
  part.size_bytes = size_bytes;
  part.open = [text]() -> Result<std::unique_ptr<InputStream>> {
    return MakeMemoryInputStream(text);
  };
  log.parts.push_back(part);
  return log;
}

ReadReport Read(const source::ApplicationLog& log, const ReaderOptions& options) {
  CountingSink sink;
  return ReadApplicationLog(log, sink, options);
}

std::string Lines(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += kLine;
  return text;
}

// A few MB of zstd can expand to terabytes: every application has a budget of decoded bytes.
TEST(EventLogReader, DecodedBytesAtTheLimitAreReadOneMoreIsStopped) {
  const std::string text = Lines(10);
  source::ApplicationLog log = OnePart(text, 0);
  log.parts.push_back(log.parts[0]);  // two parts share the budget
  ReaderOptions options;
  options.max_decoded_bytes = 2 * text.size();
  ReadReport at = Read(log, options);
  EXPECT_EQ(at.events, 20);
  EXPECT_TRUE(at.files[1].error.empty()) << at.files[1].error;

  options.max_decoded_bytes = 2 * text.size() - 1;
  std::vector<std::string> problems;
  options.on_problem = [&](const std::string& message, bool) { problems.push_back(message); };
  ReadReport past = Read(log, options);
  EXPECT_EQ(past.events, 19);  // the cut last line is not an event, the rest are analysed
  EXPECT_TRUE(past.files[0].error.empty());
  EXPECT_NE(past.files[1].error.find("decompressed more than"), std::string::npos)
      << past.files[1].error;
  EXPECT_NE(past.files[1].error.find("--max-decompressed-bytes"), std::string::npos);
  EXPECT_NE(past.files[1].error.find("analysed the 9 events before it"), std::string::npos);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.back().rfind("app.log: ", 0), 0u) << problems.back();
}

TEST(EventLogReader, ExpansionRatioAtTheLimitIsReadPastItIsStopped) {
  const std::string text = Lines(100);  // "compressed" to 1/50 of it, say
  ReaderOptions options;
  options.expansion_check_after_bytes = 0;
  options.max_expansion_ratio = 50;
  const uint64_t smallest = (text.size() + 49) / 50;  // 50 x smallest >= text.size()
  ReadReport at = Read(OnePart(text, smallest), options);
  EXPECT_EQ(at.events, 100);
  EXPECT_TRUE(at.files[0].error.empty()) << at.files[0].error;

  ReadReport past = Read(OnePart(text, smallest - 1), options);
  EXPECT_LT(past.events, 100);
  EXPECT_GT(past.events, 90);
  EXPECT_NE(past.files[0].error.find("like a decompression bomb"), std::string::npos)
      << past.files[0].error;

  options.max_expansion_ratio = 0;  // no limit
  EXPECT_EQ(Read(OnePart(text, 1), options).events, 100);
  options.max_decoded_bytes = UINT64_MAX;  // no limit at all: still reads everything
  EXPECT_EQ(Read(OnePart(text, 1), options).events, 100);
  options.max_decoded_bytes = kDefaultMaxDecodedBytes;
  // Below expansion_check_after_bytes a part may expand without limit (tiny files do).
  options.max_expansion_ratio = 50;
  options.expansion_check_after_bytes = text.size();
  EXPECT_EQ(Read(OnePart(text, 1), options).events, 100);
}

TEST(EventLogReader, LeadingGarbageLimitAtAndPastIt) {
  ReaderOptions options;
  options.max_leading_bad_lines = 3;
  ReadReport at = Read(OnePart("x\nx\n" + kLine + "x\nx\nx\nx\n", 0), options);
  EXPECT_EQ(at.events, 1);  // two bad lines before the first event: still a log
  EXPECT_EQ(at.bad_line_count, 6);
  EXPECT_TRUE(at.files[0].error.empty());
  ReadReport past = Read(OnePart("x\nx\nx\n" + kLine, 0), options);
  EXPECT_EQ(past.events, 0);
  EXPECT_NE(past.files[0].error.find("not a Spark event log"), std::string::npos);
}

// A zip compressed with a log codec but named like a log ("x.gz": discovery searches only
// "x.zip.gz") is not read as a log and then called "not a Spark event log": its decompressed
// start is a zip's, and it is named with why and how to have it read. The log's other parts are
// read; a log whose decompressed start is not a zip's is read as before.
TEST(EventLogReader, CompressedZipNamedLikeALogIsNamedNotRead) {
  // A zip's local file header, then what a stored entry would hold: clearly not JSON lines.
  const std::string zip = std::string("PK\x03\x04\x14\0\0\0\0\0", 10) + "app-1" + kLine;
  const std::pair<codec::Format, const char*> formats[] = {
      {codec::Format::kGzip, "gzip, not an event log: rename it x.zip.gz "},
      {codec::Format::kZstd, "zstd, not an event log: rename it x.zip.zstd "},
      {codec::Format::kLz4Block, "lz4, not an event log: rename it x.zip.lz4 "}};
  for (const auto& [format, why] : formats) {
    SCOPED_TRACE(codec::FormatName(format));
    Result<std::string> compressed_zip = codec::Encode(format, zip);
    Result<std::string> compressed_log = codec::Encode(format, Lines(2));
    ASSERT_TRUE(compressed_zip.ok() && compressed_log.ok());
    source::ApplicationLog log = OnePart(*compressed_zip, compressed_zip->size());
    log.parts[0].display_name = "dir/x.gz";
    log.parts.push_back(OnePart(*compressed_log, compressed_log->size()).parts[0]);
    std::vector<std::string> problems;
    ReaderOptions options;
    options.on_problem = [&](const std::string& message, bool) { problems.push_back(message); };
    ReadReport report = Read(log, options);
    ASSERT_EQ(report.files.size(), 2u);
    EXPECT_TRUE(report.files[0].not_read);
    EXPECT_EQ(report.files[0].error,
              std::string("a zip archive compressed as ") + why +
                  "(a compressed file is searched for logs only when .zip is among its "
                  "extensions) or unpack it");
    EXPECT_EQ(report.files[0].lines, 0);
    EXPECT_EQ(report.bad_line_count, 0);  // not one "invalid JSON" line for it
    EXPECT_FALSE(report.files[1].not_read);
    EXPECT_TRUE(report.files[1].error.empty()) << report.files[1].error;
    EXPECT_EQ(report.events, 2);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0], "dir/x.gz: " + report.files[0].error);
  }
  // A plain zip is one discovery opens (or names) before: the reader's old answer stays; a
  // compressed part shorter than a zip's signature is read as it is.
  const std::string& plain_zip = zip;
  ReadReport plain = Read(OnePart(plain_zip, plain_zip.size()), ReaderOptions{});
  EXPECT_FALSE(plain.files[0].not_read);
  EXPECT_NE(plain.files[0].error.find("a zip archive is not a compression codec"),
            std::string::npos)
      << plain.files[0].error;
  Result<std::string> short_part = codec::Encode(codec::Format::kGzip, "PK");
  ASSERT_TRUE(short_part.ok());
  ReadReport shorter = Read(OnePart(*short_part, short_part->size()), ReaderOptions{});
  EXPECT_FALSE(shorter.files[0].not_read);
  EXPECT_EQ(shorter.files[0].lines, 1);  // its two bytes, read as a line
  EXPECT_EQ(shorter.files[0].decoded_bytes, 2u);
}

TEST(EventLogReader, BadLinesKeptAtAndPastTheLimit) {
  ReaderOptions options;
  options.max_bad_lines_kept = 2;
  ReadReport report = Read(OnePart(kLine + "x\ny\nz\n", 0), options);
  EXPECT_EQ(report.bad_line_count, 3);     // all counted
  ASSERT_EQ(report.bad_lines.size(), 2u);  // the first two kept
  EXPECT_EQ(report.bad_lines[1].line, 3);
}

}  // namespace
}  // namespace sparkprof::eventlog
