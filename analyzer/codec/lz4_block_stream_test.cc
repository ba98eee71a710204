#include "analyzer/codec/lz4_block_stream.h"

#include <gtest/gtest.h>

#include "analyzer/codec/byte_order.h"
#include "analyzer/codec/codec_test_util.h"
#include "analyzer/codec/lz4_block_writer.h"
#include "analyzer/codec/lz4_java_checksum.h"

namespace sparkprof::codec {
namespace {

using testing::DecodeAll;
using testing::Drained;
using testing::ExpectCorrupt;

Drained DecodeLz4(std::string bytes, const DecoderLimits& limits = {}) {
  return DecodeAll(Format::kLz4Block, std::move(bytes), limits);
}

std::string Header(uint8_t token, uint32_t compressed, uint32_t decoded, uint32_t checksum) {
  std::string header = "LZ4Block";
  header.push_back(static_cast<char>(token));
  AppendLittleEndian32(&header, compressed);
  AppendLittleEndian32(&header, decoded);
  AppendLittleEndian32(&header, checksum);
  return header;
}

const std::string kEndBlock = Header(0x15, 0, 0, 0);

TEST(Lz4BlockStream, HeaderLayoutMatchesLz4Java) {
  std::string data = testing::SampleEventLogText(1000);
  std::string encoded = EncodeLz4Block(data);
  EXPECT_EQ(encoded.substr(0, 8), "LZ4Block");
  EXPECT_EQ(static_cast<uint8_t>(encoded[8]), 0x25);  // LZ4 | level 5
  EXPECT_EQ(LoadLittleEndian32(encoded.data() + 13), 1000u);
  EXPECT_EQ(LoadLittleEndian32(encoded.data() + 17), Lz4JavaBlockChecksum(data));
  EXPECT_EQ(encoded.substr(encoded.size() - 21), kEndBlock);
}

TEST(Lz4BlockStream, MissingEndBlockIsACleanEndAsInSpark) {
  std::string data = testing::SampleEventLogText(40'000);
  std::string encoded = EncodeLz4Block(data);
  Drained drained = DecodeLz4(encoded.substr(0, encoded.size() - 21));
  EXPECT_TRUE(drained.status.ok()) << drained.status.ToString();
  EXPECT_TRUE(drained.bytes == data);
}

TEST(Lz4BlockStream, TruncatedHeader) {
  ExpectCorrupt(DecodeLz4(EncodeLz4Block("hello").substr(0, 10)),
                "lz4: truncated block header at byte 0");
}

TEST(Lz4BlockStream, TruncatedPayloadServesEarlierBlocksFirst) {
  std::string data = testing::SampleEventLogText(40'000);
  std::string encoded = EncodeLz4Block(data);
  uint32_t first_block_bytes = LoadLittleEndian32(encoded.data() + 9);
  size_t second_header = 21 + first_block_bytes;
  Drained drained = DecodeLz4(encoded.substr(0, second_header + 30));
  EXPECT_TRUE(drained.bytes == data.substr(0, 32768));
  ExpectCorrupt(drained, "truncated block at byte " + std::to_string(second_header));
}

TEST(Lz4BlockStream, WrongChecksumNamesBothValues) {
  std::string data = "{\"Event\":\"SparkListenerLogStart\"}\n";
  std::string encoded = EncodeLz4Block(data);
  encoded[17] ^= 0x01;
  uint32_t good = Lz4JavaBlockChecksum(data);
  char expected[64];
  std::snprintf(expected, sizeof expected, "(expected 0x%08x, got 0x%08x)", good ^ 1, good);
  Drained drained = DecodeLz4(encoded);
  ExpectCorrupt(drained, "checksum mismatch in block at byte 0 " + std::string(expected));
  EXPECT_TRUE(drained.bytes.empty());
}

TEST(Lz4BlockStream, CorruptPayload) {
  std::string encoded = EncodeLz4Block(testing::SampleEventLogText(20'000));
  for (size_t i = 21; i < 200; i += 3) encoded[i] = static_cast<char>(encoded[i] ^ 0x5A);
  Drained drained = DecodeLz4(encoded);
  ExpectCorrupt(drained, "at byte 0");
}

TEST(Lz4BlockStream, BombHeaderIsRejectedBeforeAllocating) {
  // Level 15 allows 32 MiB blocks; 2 GB is beyond any level.
  ExpectCorrupt(DecodeLz4(Header(0x2F, 100, 0x7FFFFFFF, 0)),
                "block at byte 0 declares 2147483647 decompressed bytes, more than allowed");
  // Larger than the block size its level allows (5 -> 32 KiB).
  ExpectCorrupt(DecodeLz4(Header(0x25, 100, 40'000, 0)), "more than allowed (32768)");
  // Within the level, beyond the configured limit.
  DecoderLimits limits;
  limits.max_block_bytes = 1000;
  ExpectCorrupt(DecodeLz4(EncodeLz4Block(testing::SampleEventLogText(5000)), limits),
                "more than allowed (1000)");
  // A compressed length no lz4 block of that size can have.
  ExpectCorrupt(DecodeLz4(Header(0x25, 0x7FFFFFF0, 1000, 0)), "more than lz4 can produce");
  ExpectCorrupt(DecodeLz4(Header(0x25, 0xFFFFFFFF, 1000, 0)), "more than lz4 can produce");
}

TEST(Lz4BlockStream, InvalidHeaders) {
  ExpectCorrupt(DecodeLz4(Header(0x35, 10, 10, 0)), "unknown compression method 0x00000030");
  ExpectCorrupt(DecodeLz4(Header(0x15, 10, 12, 0)),
                "stored block at byte 0 has compressed length 10");
  ExpectCorrupt(DecodeLz4(Header(0x25, 0, 12, 0)), "declares 0 compressed and 12 decompressed");
  ExpectCorrupt(DecodeLz4(Header(0x15, 0, 0, 7)), "end-of-stream block at byte 0 has non-zero");
}

TEST(Lz4BlockStream, BadMagicMidStream) {
  std::string encoded = EncodeLz4Block("abc") + "LZ4Blocc" + std::string(13, '\0');
  Drained drained = DecodeLz4(encoded);
  EXPECT_EQ(drained.bytes, "abc");
  ExpectCorrupt(drained, "bad magic at byte " + std::to_string(21 + 3 + 21));
}

TEST(Lz4BlockStream, RandomBytesAreRejected) {
  ExpectCorrupt(DecodeLz4(testing::RandomBytes(5000, 1)), "bad magic at byte 0");
}

}  // namespace
}  // namespace sparkprof::codec
