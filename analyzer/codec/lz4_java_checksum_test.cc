#include "analyzer/codec/lz4_java_checksum.h"

#include <gtest/gtest.h>
#include <lz4frame.h>

#include <string>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "analyzer/codec/byte_order.h"
#include "analyzer/codec/codec_test_util.h"

#if SPARKPROF_HAVE_LZ4_XXH32
extern "C" unsigned int LZ4_XXH32(const void* input, size_t length, unsigned int seed);
#endif

namespace sparkprof::codec {
namespace {

uint32_t Xxh32(std::string_view data, uint32_t seed) {
  // As in Lz4JavaBlockChecksum: xxHash's precondition, told to the static analyzer.
  if (data.data() == nullptr && !data.empty()) __builtin_unreachable();
  return XXH32(data.data(), data.size(), seed);
}

TEST(Xxh32, PublishedVectors) {
  EXPECT_EQ(Xxh32("", 0), 0x02CC5D05u);
  EXPECT_EQ(Xxh32("a", 0), 0x550D7456u);
  EXPECT_EQ(Xxh32("abc", 0), 0x32D153FFu);
  EXPECT_EQ(Xxh32("Nobody inspects the spammish repetition", 0), 0xE2293B2Fu);
}

// An LZ4 frame with a content checksum ends with XXH32(content, seed 0), little-endian.
TEST(Xxh32, MatchesLz4FrameContentChecksum) {
  for (size_t size : {1u, 15u, 16u, 17u, 31u, 1000u, 100003u}) {
    std::string content = testing::RandomBytes(size, static_cast<uint32_t>(size));
    LZ4F_preferences_t preferences{};
    preferences.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    std::string frame(LZ4F_compressFrameBound(content.size(), &preferences), '\0');
    size_t frame_size = LZ4F_compressFrame(frame.data(), frame.size(), content.data(),
                                           content.size(), &preferences);
    ASSERT_FALSE(LZ4F_isError(frame_size));
    EXPECT_EQ(Xxh32(content, 0), LoadLittleEndian32(frame.data() + frame_size - 4)) << size;
  }
}

#if SPARKPROF_HAVE_LZ4_XXH32
TEST(Xxh32, MatchesLiblz4WithTheLz4JavaSeed) {
  for (size_t size = 0; size < 70; ++size) {
    std::string content = testing::RandomBytes(size, 99);
    EXPECT_EQ(Xxh32(content, kLz4JavaChecksumSeed),
              LZ4_XXH32(content.data(), content.size(), kLz4JavaChecksumSeed))
        << size;
  }
}
#endif

TEST(Xxh32, Lz4JavaChecksumKeepsTwentyEightBits) {
  std::string content = testing::SampleEventLogText(5000);
  EXPECT_EQ(Lz4JavaBlockChecksum(content), Xxh32(content, 0x9747b28c) & 0x0FFFFFFF);
  EXPECT_EQ(Lz4JavaBlockChecksum(content) & ~kLz4JavaChecksumMask, 0u);
}

}  // namespace
}  // namespace sparkprof::codec
