// Every codec decodes what its encoder wrote, for the shapes that matter: empty, tiny, exactly
// one block, many blocks, incompressible, concatenated streams, short reads from the source.
#include <gtest/gtest.h>

#include "analyzer/codec/codec_test_util.h"
#include "analyzer/codec/encode.h"
#include "analyzer/codec/lz4_block_writer.h"
#include "analyzer/codec/lzf_writer.h"
#include "analyzer/codec/snappy_java_writer.h"
#include "analyzer/codec/zstd_writer.h"

namespace sparkprof::codec {
namespace {

using testing::DecodeAll;
using testing::Drained;

size_t BlockBytes(Format format) {
  switch (format) {
    case Format::kLz4Block:
    case Format::kSnappyJava:
      return 32768;
    case Format::kLzf:
      return 65535;
    default:
      return 100000;
  }
}

class RoundTripTest : public ::testing::TestWithParam<Format> {
 protected:
  void ExpectRoundTrip(const std::string& data, size_t read_bytes = 64 << 10) {
    Result<std::string> encoded = Encode(GetParam(), data);
    ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
    Drained drained = DecodeAll(GetParam(), *encoded, {}, read_bytes);
    ASSERT_TRUE(drained.status.ok()) << drained.status.ToString();
    ASSERT_EQ(drained.bytes.size(), data.size());
    EXPECT_TRUE(drained.bytes == data);
  }
};

TEST_P(RoundTripTest, Empty) { ExpectRoundTrip(""); }
TEST_P(RoundTripTest, OneByte) { ExpectRoundTrip("{"); }
TEST_P(RoundTripTest, Small) { ExpectRoundTrip(testing::SampleEventLogText(1000)); }
TEST_P(RoundTripTest, ExactlyOneBlock) {
  ExpectRoundTrip(testing::SampleEventLogText(BlockBytes(GetParam())));
}
TEST_P(RoundTripTest, OneBlockPlusOneByte) {
  ExpectRoundTrip(testing::SampleEventLogText(BlockBytes(GetParam()) + 1));
}
TEST_P(RoundTripTest, ManyBlocks) { ExpectRoundTrip(testing::SampleEventLogText(3'000'000)); }
TEST_P(RoundTripTest, Incompressible) { ExpectRoundTrip(testing::RandomBytes(200'000, 7)); }
TEST_P(RoundTripTest, TinyReads) { ExpectRoundTrip(testing::SampleEventLogText(100'000), 7); }
TEST_P(RoundTripTest, OneByteReads) { ExpectRoundTrip(testing::SampleEventLogText(20'000), 1); }

TEST_P(RoundTripTest, ConcatenatedStreams) {
  std::string first = testing::SampleEventLogText(50'000);
  std::string second = testing::RandomBytes(40'000, 3);
  std::string third = testing::SampleEventLogText(10);
  std::string encoded = Encode(GetParam(), first).value() + Encode(GetParam(), second).value() +
                        Encode(GetParam(), third).value();
  Drained drained = DecodeAll(GetParam(), encoded);
  ASSERT_TRUE(drained.status.ok()) << drained.status.ToString();
  EXPECT_TRUE(drained.bytes == first + second + third);
}

TEST_P(RoundTripTest, SourceWithShortReads) {
  std::string data = testing::SampleEventLogText(300'000);
  auto decoder = MakeDecoder(
      GetParam(), testing::MakeTrickleInputStream(Encode(GetParam(), data).value(), 1000));
  ASSERT_TRUE(decoder.ok());
  Drained drained = testing::Drain(**decoder);
  ASSERT_TRUE(drained.status.ok()) << drained.status.ToString();
  EXPECT_TRUE(drained.bytes == data);
}

TEST_P(RoundTripTest, OutputLimitStopsWithTooLargeAfterServingTheLimit) {
  std::string data = testing::SampleEventLogText(200'000);
  DecoderLimits limits;
  limits.max_output_bytes = 123'456;
  Drained drained = DecodeAll(GetParam(), Encode(GetParam(), data).value(), limits);
  EXPECT_EQ(drained.status.code(), StatusCode::kTooLarge) << drained.status.ToString();
  EXPECT_NE(drained.status.message().find(FormatName(GetParam())), std::string::npos);
  EXPECT_TRUE(drained.bytes == data.substr(0, limits.max_output_bytes));
  EXPECT_TRUE(drained.error_is_sticky);
}

TEST_P(RoundTripTest, OutputLimitEqualToSizeIsFine) {
  std::string data = testing::SampleEventLogText(70'000);
  DecoderLimits limits;
  limits.max_output_bytes = data.size();
  Drained drained = DecodeAll(GetParam(), Encode(GetParam(), data).value(), limits);
  EXPECT_TRUE(drained.status.ok()) << drained.status.ToString();
  EXPECT_EQ(drained.bytes.size(), data.size());
}

// DecoderLimits::max_block_bytes (docs/limits.md): a block of exactly the limit decodes, one
// byte larger is corrupt before anything is allocated for it. (zstd rounds it to a window size.)
TEST_P(RoundTripTest, BlockAtTheLimitDecodesOneBytePastIsCorrupt) {
  if (GetParam() == Format::kZstd || GetParam() == Format::kGzip) GTEST_SKIP() << "no blocks";
  std::string data = testing::SampleEventLogText(20'000);  // one block in every framing
  DecoderLimits limits;
  limits.max_block_bytes = data.size();
  Drained at = DecodeAll(GetParam(), Encode(GetParam(), data).value(), limits);
  EXPECT_TRUE(at.status.ok()) << at.status.ToString();
  EXPECT_TRUE(at.bytes == data);
  limits.max_block_bytes = data.size() - 1;
  Drained past = DecodeAll(GetParam(), Encode(GetParam(), data).value(), limits);
  EXPECT_EQ(past.status.code(), StatusCode::kCorrupt) << past.status.ToString();
  EXPECT_TRUE(past.bytes.empty());
}

TEST_P(RoundTripTest, OpenDecodedDetectsTheFormatWithoutAHelpfulName) {
  std::string data = testing::SampleEventLogText(100'000);
  auto opened =
      OpenDecoded(MakeMemoryInputStream(Encode(GetParam(), data).value()), "events_1_app");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->format, GetParam());
  Drained drained = testing::Drain(*opened->stream);
  ASSERT_TRUE(drained.status.ok()) << drained.status.ToString();
  EXPECT_TRUE(drained.bytes == data);
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, RoundTripTest,
                         ::testing::Values(Format::kLz4Block, Format::kSnappyJava, Format::kZstd,
                                           Format::kLzf, Format::kGzip),
                         [](const auto& info) { return std::string(FormatName(info.param)); });

TEST(StreamingWriters, FlushEndsSnappyAndLzfChunksButNotLz4Blocks) {
  std::string lz4, snappy, lzf;
  Lz4BlockWriter lz4_writer(&lz4);
  SnappyJavaWriter snappy_writer(&snappy);
  LzfWriter lzf_writer(&lzf);
  for (ChunkWriter* writer :
       std::initializer_list<ChunkWriter*>{&lz4_writer, &snappy_writer, &lzf_writer}) {
    writer->Append("{\"Event\":\"SparkListenerLogStart\"}\n");
    writer->Flush();
  }
  EXPECT_TRUE(lz4.empty());  // syncFlush=false: only a full block or close writes
  EXPECT_EQ(snappy.size(), 16u + 4u + 2u + 34u);  // header, length, varint + literal tag, bytes
  EXPECT_EQ(lzf.size(), 5u + 34u);                // short input is stored
  lz4_writer.Finish();
  EXPECT_EQ(lz4.size(), 21u + 34u + 21u);         // RAW block, then the end block
  EXPECT_EQ(static_cast<uint8_t>(lz4[8]), 0x15);  // RAW | level 5 (32 KiB blocks)
}

TEST(StreamingWriters, ZstdWriterWritesOneFramePerFlush) {
  std::string out;
  ZstdWriter writer(&out);
  std::string part = testing::SampleEventLogText(5000);
  writer.Append(part);
  writer.Flush();
  size_t first_frame_bytes = out.size();
  writer.Append(part);
  writer.Finish();
  EXPECT_GT(out.size(), first_frame_bytes);
  EXPECT_EQ(out.substr(first_frame_bytes, 4), std::string("\x28\xB5\x2F\xFD", 4));
  Drained drained = DecodeAll(Format::kZstd, out);
  EXPECT_TRUE(drained.status.ok());
  EXPECT_TRUE(drained.bytes == part + part);
}

}  // namespace
}  // namespace sparkprof::codec
