#include "native-agent/code_cache.h"

#include <cstddef>

namespace sparkprof::agent {
namespace {

// A code blob spans at most this many segment-map hops (each up to 254 segments).
constexpr int kMaxSegmentHops = 1 << 12;
constexpr uint8_t kFreeSegment = 0xFF;

}  // namespace

// async-signal-safe: whether the C string at `address` is `literal`.
template <size_t N>
bool NameIs(uintptr_t address, const char (&literal)[N]) {
  if (address == 0) return false;
  for (size_t c = 0; c < N; ++c) {
    if (LoadVm<char>(address + c) != literal[c]) return false;
  }
  return true;
}

// async-signal-safe
bool FindCodeBlob(const HotSpotLayout& layout, uintptr_t pc, CodeBlobInfo* blob) {
  if (pc < LoadVm<uintptr_t>(layout.code_low_bound_address) ||
      pc >= LoadVm<uintptr_t>(layout.code_high_bound_address)) {
    return false;
  }
  const uintptr_t heaps = LoadVm<uintptr_t>(layout.code_heaps_address);
  if (heaps == 0) return false;
  const int32_t count = LoadVm<int32_t>(heaps + layout.array_length_offset);
  const uintptr_t data = LoadVm<uintptr_t>(heaps + layout.array_data_offset);
  if (count < 1 || count > kMaxCodeHeaps || data == 0) return false;
  for (int32_t i = 0; i < count; ++i) {
    const uintptr_t heap = LoadVm<uintptr_t>(data + i * sizeof(uintptr_t));
    if (heap == 0) return false;
    const uintptr_t low =
        LoadVm<uintptr_t>(heap + layout.heap_memory_offset + layout.space_low_offset);
    const uintptr_t high =
        LoadVm<uintptr_t>(heap + layout.heap_memory_offset + layout.space_high_offset);
    if (pc < low || pc >= high) continue;
    const int32_t log2_segment = LoadVm<int32_t>(heap + layout.heap_log2_segment_offset);
    const uintptr_t segment_map =
        LoadVm<uintptr_t>(heap + layout.heap_segment_map_offset + layout.space_low_offset);
    if (log2_segment < kMinLog2Segment || log2_segment > kMaxLog2Segment || segment_map == 0) {
      return false;
    }
    uintptr_t segment = (pc - low) >> log2_segment;
    uint8_t hop = LoadVm<uint8_t>(segment_map + segment);
    if (hop == kFreeSegment) return false;
    for (int hops = 0; hop != 0; ++hops) {
      if (hops == kMaxSegmentHops || hop > segment) return false;
      segment -= hop;
      hop = LoadVm<uint8_t>(segment_map + segment);
    }
    const uintptr_t block = low + (segment << log2_segment);
    if (LoadVm<uint8_t>(block + layout.block_used_offset) == 0) return false;
    const uintptr_t start = block + layout.block_size;
    const int32_t size = LoadVm<int32_t>(start + layout.blob_size_offset);
    if (size <= 0 || pc < start || pc - start >= static_cast<uintptr_t>(size)) return false;
    blob->start = start;
    blob->frame_size_words = LoadVm<int32_t>(start + layout.blob_frame_size_offset);
    const uintptr_t name = LoadVm<uintptr_t>(start + layout.blob_name_offset);
    blob->is_nmethod = NameIs(name, "nmethod");
    blob->is_interpreter = !blob->is_nmethod && NameIs(name, "Interpreter");
    return true;
  }
  return false;
}

}  // namespace sparkprof::agent
