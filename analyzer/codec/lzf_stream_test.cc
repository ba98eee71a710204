#include "analyzer/codec/lzf_stream.h"

#include <gtest/gtest.h>

#include "analyzer/codec/byte_order.h"
#include "analyzer/codec/codec_test_util.h"
#include "analyzer/codec/lzf_writer.h"

namespace sparkprof::codec {
namespace {

using testing::Drained;
using testing::ExpectCorrupt;

Drained DecodeLzf(std::string bytes, const DecoderLimits& limits = {}) {
  return testing::DecodeAll(Format::kLzf, std::move(bytes), limits);
}

TEST(LzfStream, ChunkLayoutMatchesCompressLzf) {
  EXPECT_EQ(EncodeLzf("short"), std::string("ZV\0\0\x05short", 10));
  std::string compressible = testing::SampleEventLogText(70'000);
  std::string encoded = EncodeLzf(compressible);
  EXPECT_EQ(encoded.substr(0, 3), std::string("ZV\x01", 3));
  EXPECT_EQ(LoadBigEndian16(encoded.data() + 5), 65535);
  std::string random = testing::RandomBytes(1000, 5);
  EXPECT_EQ(EncodeLzf(random).size(), 5 + random.size());  // stored: did not shrink
}

TEST(LzfStream, TruncatedHeader) {
  ExpectCorrupt(DecodeLzf("ZV"), "truncated chunk header at byte 0");
  ExpectCorrupt(DecodeLzf(std::string("ZV\x01\x00\x10\x00", 6)),
                "truncated chunk header at byte 0");
}

TEST(LzfStream, BadMagicAndType) {
  ExpectCorrupt(DecodeLzf(EncodeLzf("abc") + std::string("ZX\0\0\0", 5)),
                "bad chunk magic at byte 8");
  ExpectCorrupt(DecodeLzf(std::string("ZV\x02\0\0", 5)), "unknown chunk type 2 at byte 0");
}

TEST(LzfStream, TruncatedPayloadServesEarlierChunksFirst) {
  std::string data = testing::SampleEventLogText(100'000);
  std::string encoded = EncodeLzf(data);
  size_t second_chunk = 7 + LoadBigEndian16(encoded.data() + 3);
  Drained drained = DecodeLzf(encoded.substr(0, second_chunk + 20));
  EXPECT_TRUE(drained.bytes == data.substr(0, 65535));
  ExpectCorrupt(drained, "truncated chunk at byte " + std::to_string(second_chunk));
}

TEST(LzfStream, CorruptPayload) {
  std::string encoded = EncodeLzf(testing::SampleEventLogText(20'000));
  for (size_t i = 7; i < 400; i += 2) encoded[i] = static_cast<char>(encoded[i] ^ 0x3C);
  ExpectCorrupt(DecodeLzf(encoded), "at byte 0");
}

TEST(LzfStream, WrongOriginalLength) {
  std::string encoded = EncodeLzf(testing::SampleEventLogText(1000));
  encoded[6] = static_cast<char>(encoded[6] + 1);  // origLen one larger than the data
  ExpectCorrupt(DecodeLzf(encoded), "chunk at byte 0");
}

TEST(LzfStream, BlockLimit) {
  DecoderLimits limits;
  limits.max_block_bytes = 4096;
  ExpectCorrupt(DecodeLzf(EncodeLzf(testing::SampleEventLogText(10'000)), limits),
                "declares 10000 bytes, more than max_block_bytes (4096)");
}

TEST(LzfStream, RandomBytesAreRejected) {
  ExpectCorrupt(DecodeLzf(testing::RandomBytes(5000, 1)), "lzf: bad chunk magic at byte 0");
}

}  // namespace
}  // namespace sparkprof::codec
