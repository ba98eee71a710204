#include "analyzer/codec/format_detect.h"

#include <gtest/gtest.h>

#include "analyzer/codec/codec_test_util.h"
#include "analyzer/codec/encode.h"

namespace sparkprof::codec {
namespace {

std::string Head(Format format) {
  return Encode(format, testing::SampleEventLogText(1000))->substr(0, kSniffBytes);
}

TEST(DetectFormat, MagicBytesWinOverMisleadingNames) {
  for (Format format :
       {Format::kLz4Block, Format::kSnappyJava, Format::kZstd, Format::kLzf, Format::kGzip}) {
    EXPECT_EQ(DetectFormat(Head(format), "app-1.lz4"), format) << FormatName(format);
    EXPECT_EQ(DetectFormat(Head(format), "events_1_app.snappy.inprogress"), format);
    EXPECT_EQ(DetectFormat(Head(format), "local-1234"), format);
  }
  EXPECT_EQ(DetectFormat("{\"Event\":\"SparkListenerLogStart\"", "app.zstd"), Format::kPlain);
}

TEST(DetectFormat, OtherMagics) {
  EXPECT_EQ(DetectFormat(std::string("PK\x03\x04\x14\0", 6), "x"), Format::kZip);
  EXPECT_EQ(DetectFormat(std::string("PK\x05\x06\0\0", 6), "x.gz"), Format::kZip);
  EXPECT_EQ(DetectFormat(std::string("\x5E\x2A\x4D\x18\0\0\0\0", 8), "x"), Format::kZstd);
  EXPECT_EQ(DetectFormat(std::string("ZV\0\0\x05hello", 10), "x"), Format::kLzf);
  EXPECT_EQ(DetectFormat(std::string("ZV\x02\0\x05hello", 10), "x"), Format::kUnknownBinary);
  EXPECT_EQ(DetectFormat(std::string("ZVhello", 7), "x"), Format::kPlain);
}

TEST(DetectFormat, TextIsPlain) {
  EXPECT_EQ(DetectFormat("{\"Event\":", "x"), Format::kPlain);
  EXPECT_EQ(DetectFormat("\n\n  \t{\"Ev", "x"), Format::kPlain);
  EXPECT_EQ(DetectFormat("\xEF\xBB\xBF{\"Event\"", "x"), Format::kPlain);
  EXPECT_EQ(DetectFormat("Spark Command: ", "x"), Format::kPlain);
  EXPECT_EQ(DetectFormat("{\"App Name\":\"\xC3\xA9t\xC3\xA9", "x"), Format::kPlain);
}

TEST(DetectFormat, BinaryIsUnknown) {
  EXPECT_EQ(DetectFormat(std::string("\0\0\0\x01\x02", 5), "x.json"), Format::kUnknownBinary);
  EXPECT_EQ(DetectFormat(std::string("\x7F"
                                     "ELF\x02\x01",
                                     6),
                         "x"),
            Format::kUnknownBinary);
}

TEST(DetectFormat, NamesBreakTiesForEmptyAndCutOffFiles) {
  EXPECT_EQ(DetectFormat("", "app-1.lz4"), Format::kLz4Block);
  EXPECT_EQ(DetectFormat("", "events_2_app-1.zstd.inprogress"), Format::kZstd);
  EXPECT_EQ(DetectFormat("", "events_5_app-1.snappy.compact"), Format::kSnappyJava);
  EXPECT_EQ(DetectFormat("", "dir.name/app-1.lzf"), Format::kLzf);
  EXPECT_EQ(DetectFormat("", "app-1.inprogress"), Format::kPlain);
  EXPECT_EQ(DetectFormat("", "app-1"), Format::kPlain);
  EXPECT_EQ(DetectFormat("LZ4", "app-1.lz4"), Format::kLz4Block);
  EXPECT_EQ(DetectFormat("LZ4", "app-1"), Format::kPlain);  // text without a hint
  EXPECT_EQ(DetectFormat(std::string("\x28\xB5", 2), "app.zstd"), Format::kZstd);
  EXPECT_EQ(DetectFormat(std::string("\x82SNA", 4), "app.snappy"), Format::kSnappyJava);
  EXPECT_EQ(DetectFormat("{\"E", "app.lz4"), Format::kPlain);  // not a prefix of LZ4Block
}

TEST(FormatFromFileName, SparkCodecNames) {
  EXPECT_EQ(FormatFromFileName("a/b/events_1_x.zstd.compact"), Format::kZstd);
  EXPECT_EQ(FormatFromFileName("archive.zip!dir/app.LZ4"), Format::kLz4Block);
  EXPECT_EQ(FormatFromFileName("log.json.gz"), Format::kGzip);
  EXPECT_EQ(FormatFromFileName("local-1623876083964"), std::nullopt);
  EXPECT_EQ(FormatFromFileName("application_1_0001.inprogress"), std::nullopt);
}

TEST(FormatName, ShortNames) {
  EXPECT_STREQ(FormatName(Format::kLz4Block), "lz4");
  EXPECT_STREQ(FormatName(Format::kSnappyJava), "snappy");
  EXPECT_STREQ(FormatName(Format::kUnknownBinary), "binary");
}

TEST(OpenDecoded, PlainPassesThroughAndEmptyIsEmpty) {
  std::string text = testing::SampleEventLogText(3000);
  auto plain = OpenDecoded(MakeMemoryInputStream(text), "app-1");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->format, Format::kPlain);
  EXPECT_TRUE(testing::Drain(*plain->stream, 100).bytes == text);
  for (const char* name :
       {"app-1", "app-1.lz4", "app.zstd.inprogress", "a.snappy", "a.lzf", "a.gz"}) {
    auto empty = OpenDecoded(MakeMemoryInputStream(""), name);
    ASSERT_TRUE(empty.ok()) << name;
    testing::Drained drained = testing::Drain(*empty->stream);
    EXPECT_TRUE(drained.status.ok()) << name << ": " << drained.status.ToString();
    EXPECT_TRUE(drained.bytes.empty());
  }
}

TEST(OpenDecoded, ZipAndBinaryAreUnsupported) {
  auto zip = OpenDecoded(MakeMemoryInputStream(std::string("PK\x03\x04rest", 8)), "logs.zip");
  EXPECT_EQ(zip.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(zip.status().message().find("logs.zip"), std::string::npos);
  auto binary = OpenDecoded(MakeMemoryInputStream(testing::RandomBytes(100, 2) + '\0'), "x");
  EXPECT_EQ(binary.status().code(), StatusCode::kUnsupported);
}

TEST(OpenDecoded, SniffingAShortReadSourceDoesNotLoseBytes) {
  std::string data = testing::SampleEventLogText(50'000);
  auto opened =
      OpenDecoded(testing::MakeTrickleInputStream(Encode(Format::kLz4Block, data).value(), 3), "x");
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->format, Format::kLz4Block);
  EXPECT_TRUE(testing::Drain(*opened->stream).bytes == data);
}

}  // namespace
}  // namespace sparkprof::codec
