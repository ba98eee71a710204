// The two standard formats: only their framing around libzstd/zlib is ours to test.
#include <gtest/gtest.h>
#include <zstd.h>

#include "analyzer/codec/codec_test_util.h"
#include "analyzer/codec/gzip_writer.h"
#include "analyzer/codec/zstd_writer.h"

namespace sparkprof::codec {
namespace {

using testing::DecodeAll;
using testing::Drained;
using testing::ExpectError;

TEST(ZstdStream, TruncatedLastFrameServesEverythingDecodableFirst) {
  std::string first = testing::SampleEventLogText(50'000);
  std::string second = testing::SampleEventLogText(80'000);
  std::string first_frame = EncodeZstd(first);
  std::string second_frame = EncodeZstd(second);
  std::string cut = first_frame + second_frame.substr(0, second_frame.size() / 2);
  Drained drained = DecodeAll(Format::kZstd, cut, {}, 4096);
  ExpectError(drained, StatusCode::kCorrupt,
              "zstd: truncated zstd frame at byte " + std::to_string(first_frame.size()));
  ASSERT_GE(drained.bytes.size(), first.size());
  EXPECT_TRUE(drained.bytes == (first + second).substr(0, drained.bytes.size()));
}

TEST(ZstdStream, TruncatedInsideTheFrameHeader) {
  std::string frame = EncodeZstd("hello");
  ExpectError(DecodeAll(Format::kZstd, frame + frame.substr(0, 3)), StatusCode::kCorrupt,
              "truncated zstd frame at byte " + std::to_string(frame.size()));
}

TEST(ZstdStream, CorruptFrameAndTrailingGarbage) {
  std::string frame = EncodeZstd(testing::SampleEventLogText(20'000));
  std::string corrupt = frame;
  for (size_t i = 20; i < 200; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x55);
  ExpectError(DecodeAll(Format::kZstd, corrupt), StatusCode::kCorrupt, "in frame at byte 0");
  Drained garbage = DecodeAll(Format::kZstd, frame + "garbage!");
  EXPECT_EQ(garbage.bytes.size(), 20'000u);
  ExpectError(garbage, StatusCode::kCorrupt, "in frame at byte " + std::to_string(frame.size()));
}

TEST(ZstdStream, SkippableFramesAreSkipped) {
  std::string skippable(
      "\x50\x2A\x4D\x18\x03\x00\x00\x00"
      "abc",
      11);
  Drained drained = DecodeAll(Format::kZstd, skippable + EncodeZstd("x") + skippable);
  EXPECT_TRUE(drained.status.ok()) << drained.status.ToString();
  EXPECT_EQ(drained.bytes, "x");
}

TEST(ZstdStream, HugeWindowIsRefused) {
  // Frame header: no content size, window descriptor 0xA0 = 2^30 bytes.
  std::string frame("\x28\xB5\x2F\xFD\x00\xA0", 6);
  frame += std::string(16, '\0');
  Drained drained = DecodeAll(Format::kZstd, frame);
  ExpectError(drained, StatusCode::kCorrupt, "in frame at byte 0");
  EXPECT_TRUE(drained.bytes.empty());
}

TEST(ZstdStream, WindowBoundFollowsMaxBlockBytes) {
  // A streamed frame with a 2^22 window and no content size in its header.
  std::string data = testing::RandomBytes(5 << 20, 11);
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, 22);
  ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 0);
  std::string frame(ZSTD_compressBound(data.size()), '\0');
  size_t size = ZSTD_compress2(context, frame.data(), frame.size(), data.data(), data.size());
  ZSTD_freeCCtx(context);
  ASSERT_FALSE(ZSTD_isError(size));
  frame.resize(size);
  DecoderLimits small;
  small.max_block_bytes = 1 << 20;
  ExpectError(DecodeAll(Format::kZstd, frame, small), StatusCode::kCorrupt, "in frame at byte 0");
  EXPECT_TRUE(DecodeAll(Format::kZstd, frame).status.ok());
}

TEST(ZstdStream, RandomBytesAndEmpty) {
  ExpectError(DecodeAll(Format::kZstd, testing::RandomBytes(1000, 4)), StatusCode::kCorrupt,
              "zstd: ");
  Drained empty = DecodeAll(Format::kZstd, "");
  EXPECT_TRUE(empty.status.ok());
  EXPECT_TRUE(empty.bytes.empty());
}

TEST(GzipStream, TruncatedMemberServesWhatInflated) {
  std::string data = testing::SampleEventLogText(300'000);
  std::string first = EncodeGzip("first member\n");
  std::string second = EncodeGzip(data);
  Drained drained = DecodeAll(Format::kGzip, first + second.substr(0, second.size() / 2), {}, 4096);
  ExpectError(drained, StatusCode::kCorrupt,
              "gzip: truncated gzip member at byte " + std::to_string(first.size()));
  EXPECT_GT(drained.bytes.size(), 13u + 100'000u);
  EXPECT_TRUE(drained.bytes == ("first member\n" + data).substr(0, drained.bytes.size()));
}

TEST(GzipStream, CorruptMember) {
  std::string encoded = EncodeGzip(testing::SampleEventLogText(20'000));
  for (size_t i = 30; i < 100; ++i) encoded[i] = static_cast<char>(encoded[i] ^ 0x21);
  ExpectError(DecodeAll(Format::kGzip, encoded), StatusCode::kCorrupt, "in member at byte 0");
  ExpectError(DecodeAll(Format::kGzip, testing::RandomBytes(1000, 4)), StatusCode::kCorrupt,
              "gzip: ");
}

TEST(GzipStream, BadChecksumInTrailer) {
  std::string encoded = EncodeGzip("hello world\n");
  encoded[encoded.size() - 6] ^= 1;  // CRC32 in the trailer
  Drained drained = DecodeAll(Format::kGzip, encoded);
  ExpectError(drained, StatusCode::kCorrupt, "incorrect data check");
}

}  // namespace
}  // namespace sparkprof::codec
