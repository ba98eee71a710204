#include "analyzer/codec/snappy_java_stream.h"

#include <gtest/gtest.h>

#include "analyzer/codec/byte_order.h"
#include "analyzer/codec/codec_test_util.h"
#include "analyzer/codec/snappy_java_writer.h"

namespace sparkprof::codec {
namespace {

using testing::Drained;
using testing::ExpectCorrupt;

Drained DecodeSnappy(std::string bytes, const DecoderLimits& limits = {}) {
  return testing::DecodeAll(Format::kSnappyJava, std::move(bytes), limits);
}

const std::string kStreamHeader = EncodeSnappyJava("");

TEST(SnappyJavaStream, HeaderLayoutMatchesSnappyJava) {
  EXPECT_EQ(kStreamHeader, std::string("\x82SNAPPY\0\0\0\0\x01\0\0\0\x01", 16));
  std::string encoded = EncodeSnappyJava(testing::SampleEventLogText(40'000));
  uint32_t first_chunk = LoadBigEndian32(encoded.data() + 16);
  EXPECT_LT(first_chunk, 32768u);
  EXPECT_GT(encoded.size(), 16 + 4 + first_chunk + 4);  // a second chunk follows
}

TEST(SnappyJavaStream, EmptyFileIsEmpty) {
  Drained drained = DecodeSnappy("");
  EXPECT_TRUE(drained.status.ok());
  EXPECT_TRUE(drained.bytes.empty());
}

TEST(SnappyJavaStream, TruncatedHeader) {
  ExpectCorrupt(DecodeSnappy(kStreamHeader.substr(0, 5)), "truncated stream header at byte 0");
}

TEST(SnappyJavaStream, BadHeader) {
  ExpectCorrupt(DecodeSnappy(std::string("\x82SNAPPX\0", 8) + kStreamHeader.substr(8)),
                "snappy: bad stream header at byte 0");
}

TEST(SnappyJavaStream, TruncatedChunkLength) {
  ExpectCorrupt(DecodeSnappy(kStreamHeader + std::string("\0\0", 2)),
                "truncated chunk length at byte 16");
}

TEST(SnappyJavaStream, TruncatedPayloadServesEarlierChunksFirst) {
  std::string data = testing::SampleEventLogText(40'000);
  std::string encoded = EncodeSnappyJava(data);
  size_t second_chunk = 16 + 4 + LoadBigEndian32(encoded.data() + 16);
  Drained drained = DecodeSnappy(encoded.substr(0, second_chunk + 100));
  EXPECT_TRUE(drained.bytes == data.substr(0, 32768));
  ExpectCorrupt(drained, "truncated chunk at byte " + std::to_string(second_chunk));
}

TEST(SnappyJavaStream, CorruptPayload) {
  std::string encoded = EncodeSnappyJava(testing::SampleEventLogText(20'000));
  for (size_t i = 30; i < 300; i += 2) encoded[i] = static_cast<char>(encoded[i] ^ 0x77);
  ExpectCorrupt(DecodeSnappy(encoded), "at byte 16");
}

TEST(SnappyJavaStream, BombIsRejectedBeforeAllocating) {
  // A 10-byte chunk whose snappy length varint says 2 GB.
  std::string bomb = kStreamHeader;
  AppendBigEndian32(&bomb, 10);
  bomb += std::string("\x80\x80\x80\x80\x08", 5) + std::string(5, '\0');
  ExpectCorrupt(DecodeSnappy(bomb),
                "declares 2147483648 decompressed bytes, more than max_block_bytes");
  // A chunk length of almost 2 GB in front of a tiny block.
  std::string huge_chunk = kStreamHeader;
  AppendBigEndian32(&huge_chunk, 0x7FFFFFF0);
  huge_chunk += std::string("\x05hello", 6);
  ExpectCorrupt(DecodeSnappy(huge_chunk), "more than snappy can produce from 5");
  std::string negative = kStreamHeader;
  AppendBigEndian32(&negative, 0xFFFFFFF0);
  ExpectCorrupt(DecodeSnappy(negative), "declares invalid length -16");
}

TEST(SnappyJavaStream, ConcatenatedHeaderMidStream) {
  std::string encoded =
      EncodeSnappyJava("first ") + EncodeSnappyJava("") + EncodeSnappyJava("second");
  Drained drained = DecodeSnappy(encoded);
  EXPECT_TRUE(drained.status.ok()) << drained.status.ToString();
  EXPECT_EQ(drained.bytes, "first second");
}

TEST(SnappyJavaStream, RandomBytesAreRejected) {
  ExpectCorrupt(DecodeSnappy(testing::RandomBytes(5000, 1)), "snappy: bad stream header at byte 0");
  ExpectCorrupt(DecodeSnappy(kStreamHeader + testing::RandomBytes(5000, 2)), "at byte 16");
}

}  // namespace
}  // namespace sparkprof::codec
