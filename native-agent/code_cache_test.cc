// The code cache lookup on a clearly synthetic code cache laid out as HotSpot's (heap list, code
// heaps with segment maps, block headers, blobs); the real one is walked by the agent's JVM tests.
#include "native-agent/code_cache.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sparkprof::agent {
namespace {

struct Space {  // VirtualSpace's first words
  char* low_boundary;
  char* high_boundary;
  char* low;
  char* high;
};
struct Heap {  // CodeHeap
  void* vtable_like;
  Space memory;
  Space segment_map;
  int32_t log2_segment_size;
};
struct HeapList {  // GrowableArray<CodeHeap*>
  int32_t length;
  int32_t capacity;
  Heap** data;
};
struct BlockHeader {  // HeapBlock
  size_t length;
  bool used;
};
struct Blob {  // the CodeBlob fields the lookup reads
  const char* name;
  int32_t size;
  int32_t frame_size;
};

constexpr int kLog2Segment = 6;
constexpr size_t kSegment = size_t{1} << kLog2Segment;
constexpr size_t kSegments = 600;

class SyntheticCodeCache {
 public:
  SyntheticCodeCache() : memory_(kSegments * kSegment / sizeof(uint64_t)), map_(kSegments, 0xFF) {
    char* low = reinterpret_cast<char*>(memory_.data());
    heap_.memory = Space{low, low + kSegments * kSegment, low, low + kSegments * kSegment};
    heap_.segment_map = Space{reinterpret_cast<char*>(map_.data()), nullptr,
                              reinterpret_cast<char*>(map_.data()), nullptr};
    heap_.log2_segment_size = kLog2Segment;
    heaps_[0] = &other_heap_;  // a heap elsewhere, listed first
    heaps_[1] = &heap_;
    list_ = HeapList{2, 2, heaps_};
    list_pointer_ = &list_;
    low_bound_ = reinterpret_cast<uintptr_t>(low) - 4096;
    high_bound_ = reinterpret_cast<uintptr_t>(low) + kSegments * kSegment;
    other_heap_.memory = Space{nullptr, nullptr, reinterpret_cast<char*>(low_bound_),
                               reinterpret_cast<char*>(low_bound_ + 1024)};
    other_heap_.log2_segment_size = kLog2Segment;

    layout_.code_heaps_address = reinterpret_cast<uintptr_t>(&list_pointer_);
    layout_.code_low_bound_address = reinterpret_cast<uintptr_t>(&low_bound_);
    layout_.code_high_bound_address = reinterpret_cast<uintptr_t>(&high_bound_);
    layout_.array_length_offset = offsetof(HeapList, length);
    layout_.array_data_offset = offsetof(HeapList, data);
    layout_.heap_memory_offset = offsetof(Heap, memory);
    layout_.heap_segment_map_offset = offsetof(Heap, segment_map);
    layout_.heap_log2_segment_offset = offsetof(Heap, log2_segment_size);
    layout_.space_low_offset = offsetof(Space, low);
    layout_.space_high_offset = offsetof(Space, high);
    layout_.block_header_offset = 0;
    layout_.block_used_offset = offsetof(BlockHeader, used);
    layout_.block_size = sizeof(BlockHeader);
    layout_.blob_name_offset = offsetof(Blob, name);
    layout_.blob_size_offset = offsetof(Blob, size);
    layout_.blob_frame_size_offset = offsetof(Blob, frame_size);
  }

  // A used block of `segments` segments from `first`, its map marked as HotSpot marks it
  // (0, then 1..254 repeating), holding a blob named `name`.
  Blob* AddBlob(size_t first, size_t segments, const char* name, int32_t frame_size) {
    for (size_t i = 0; i < segments; ++i) map_[first + i] = i == 0 ? 0 : (i - 1) % 254 + 1;
    char* block = heap_.memory.low + first * kSegment;
    auto* header = reinterpret_cast<BlockHeader*>(block);
    header->length = segments;
    header->used = true;
    auto* blob = reinterpret_cast<Blob*>(block + sizeof(BlockHeader));
    blob->name = name;
    blob->size = static_cast<int32_t>(segments * kSegment - sizeof(BlockHeader));
    blob->frame_size = frame_size;
    return blob;
  }
  uintptr_t At(size_t segment, size_t byte = 0) const {
    return reinterpret_cast<uintptr_t>(heap_.memory.low) + segment * kSegment + byte;
  }
  const HotSpotLayout& layout() const { return layout_; }
  void SetMapEntry(size_t segment, uint8_t value) { map_[segment] = value; }

 private:
  std::vector<uint64_t> memory_;
  std::vector<uint8_t> map_;
  Heap heap_{};
  Heap other_heap_{};
  Heap* heaps_[2] = {};
  HeapList list_{};
  HeapList* list_pointer_ = nullptr;
  uintptr_t low_bound_ = 0, high_bound_ = 0;
  HotSpotLayout layout_;
};

TEST(CodeCacheTest, FindsTheBlobThatHoldsAnAddress) {
  SyntheticCodeCache cache;
  Blob* stub = cache.AddBlob(2, 4, "_new_instance_Java", 6);
  Blob* method = cache.AddBlob(6, 300, "nmethod", 12);  // more than one hop back to its start
  CodeBlobInfo found;
  ASSERT_TRUE(FindCodeBlob(cache.layout(), cache.At(4, 10), &found));
  EXPECT_EQ(found.start, reinterpret_cast<uintptr_t>(stub));
  EXPECT_EQ(found.frame_size_words, 6);
  EXPECT_FALSE(found.is_nmethod);
  EXPECT_FALSE(found.holds_java_frames());
  for (size_t segment : {6, 7, 260, 261, 305}) {
    ASSERT_TRUE(FindCodeBlob(cache.layout(), cache.At(segment, 63), &found)) << segment;
    EXPECT_EQ(found.start, reinterpret_cast<uintptr_t>(method)) << segment;
    EXPECT_TRUE(found.is_nmethod);
    EXPECT_TRUE(found.holds_java_frames());
    EXPECT_EQ(found.frame_size_words, 12);
  }
  cache.AddBlob(400, 20, "Interpreter", 0);
  ASSERT_TRUE(FindCodeBlob(cache.layout(), cache.At(410), &found));
  EXPECT_TRUE(found.is_interpreter);
  EXPECT_TRUE(found.holds_java_frames());
}

TEST(CodeCacheTest, AddressesOutsideBlobsAreNotFound) {
  SyntheticCodeCache cache;
  cache.AddBlob(2, 4, "nmethods are not named by prefix", 6);
  CodeBlobInfo found;
  EXPECT_TRUE(FindCodeBlob(cache.layout(), cache.At(2, sizeof(BlockHeader)), &found));
  EXPECT_FALSE(found.is_nmethod);
  cache.AddBlob(6, 4, "Interpreter, or not", 6);
  EXPECT_TRUE(FindCodeBlob(cache.layout(), cache.At(7), &found));
  EXPECT_FALSE(found.is_interpreter);
  EXPECT_FALSE(FindCodeBlob(cache.layout(), cache.At(2, 0), &found));       // the block header
  EXPECT_FALSE(FindCodeBlob(cache.layout(), cache.At(10), &found));         // a free segment
  EXPECT_FALSE(FindCodeBlob(cache.layout(), cache.At(kSegments), &found));  // past the cache
  EXPECT_FALSE(FindCodeBlob(cache.layout(), 0, &found));
}

TEST(CodeCacheTest, ImplausibleMapsAndHeadersAreRefused) {
  SyntheticCodeCache cache;
  Blob* blob = cache.AddBlob(2, 4, "stub", 6);
  CodeBlobInfo found;
  cache.SetMapEntry(3, 7);  // steps back before the heap's start
  EXPECT_FALSE(FindCodeBlob(cache.layout(), cache.At(3), &found));
  cache.SetMapEntry(3, 1);
  EXPECT_TRUE(FindCodeBlob(cache.layout(), cache.At(3), &found));
  blob->size = 0;
  EXPECT_FALSE(FindCodeBlob(cache.layout(), cache.At(3), &found));
  blob->size = 32;  // ends before the address
  EXPECT_FALSE(FindCodeBlob(cache.layout(), cache.At(3), &found));
  blob->size = 4 * 64 - 16;
  reinterpret_cast<BlockHeader*>(cache.At(2))->used = false;
  EXPECT_FALSE(FindCodeBlob(cache.layout(), cache.At(3), &found));
}

}  // namespace
}  // namespace sparkprof::agent
