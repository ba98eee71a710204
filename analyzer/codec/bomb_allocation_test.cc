// Headers that declare huge sizes must be rejected before anything that large is allocated.
// This binary replaces the global operator new to record the largest single request.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "analyzer/codec/byte_order.h"
#include "analyzer/codec/codec_test_util.h"
#include "analyzer/codec/snappy_java_writer.h"

namespace {
std::atomic<size_t> largest_allocation_bytes{0};

void* Allocate(size_t size) {
  size_t seen = largest_allocation_bytes.load(std::memory_order_relaxed);
  while (size > seen && !largest_allocation_bytes.compare_exchange_weak(seen, size)) {
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t size) { return Allocate(size); }
void* operator new[](size_t size) { return Allocate(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace sparkprof::codec {
namespace {

constexpr size_t kSmallBytes = 1 << 20;  // the 256 KiB input buffer and friends fit in this

size_t LargestAllocationDecoding(Format format, const std::string& bytes) {
  auto decoder = MakeDecoder(format, MakeMemoryInputStream(bytes));
  EXPECT_TRUE(decoder.ok());
  largest_allocation_bytes = 0;
  testing::Drained drained = testing::Drain(**decoder);
  EXPECT_FALSE(drained.status.ok());
  return largest_allocation_bytes.load();
}

TEST(BombAllocation, Lz4HeaderDeclaringTwoGigabytes) {
  std::string header = "LZ4Block";
  header.push_back(static_cast<char>(0x2F));
  AppendLittleEndian32(&header, 1000);
  AppendLittleEndian32(&header, 0x7FFFFFFF);
  AppendLittleEndian32(&header, 0);
  EXPECT_LT(LargestAllocationDecoding(Format::kLz4Block, header + std::string(1000, 'x')),
            kSmallBytes);
}

TEST(BombAllocation, SnappyChunkDeclaringTwoGigabytes) {
  std::string bomb = EncodeSnappyJava("");
  AppendBigEndian32(&bomb, 100);
  bomb += std::string("\x80\x80\x80\x80\x08", 5) + std::string(95, 'x');
  EXPECT_LT(LargestAllocationDecoding(Format::kSnappyJava, bomb), kSmallBytes);
  std::string long_chunk = EncodeSnappyJava("");
  AppendBigEndian32(&long_chunk, 0x7FFFFFF0);
  long_chunk += std::string("\x05hello", 6);
  EXPECT_LT(LargestAllocationDecoding(Format::kSnappyJava, long_chunk), kSmallBytes);
}

TEST(BombAllocation, LimitsBoundTheBlockBuffer) {
  // A valid 8 MiB lz4-java block (level 13) is refused under a 1 MiB block limit.
  std::string big_block = testing::SampleEventLogText(8 << 20);
  std::string header = "LZ4Block";
  header.push_back(static_cast<char>(0x10 | 13));
  AppendLittleEndian32(&header, static_cast<uint32_t>(big_block.size()));
  AppendLittleEndian32(&header, static_cast<uint32_t>(big_block.size()));
  AppendLittleEndian32(&header, 0);
  DecoderLimits limits;
  limits.max_block_bytes = 1 << 20;
  auto decoder = MakeDecoder(Format::kLz4Block, MakeMemoryInputStream(header + big_block), limits);
  ASSERT_TRUE(decoder.ok());
  largest_allocation_bytes = 0;
  char buffer[4096];
  EXPECT_EQ((*decoder)->Read(buffer, sizeof buffer).status().code(), StatusCode::kCorrupt);
  EXPECT_LT(largest_allocation_bytes.load(), kSmallBytes);
}

}  // namespace
}  // namespace sparkprof::codec
