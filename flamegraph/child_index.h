// (parent node, frame) -> child node: the hottest lookup while building a call tree (once per
// frame of every stack not shared with the previous one). An open-addressing table of 8-byte
// slots: the child's id and 32 bits of the key's hash. The key itself is not stored: the caller
// tells the index how to read it back from a child (its parent and frame), which it does only
// when the hash bits match, so a lookup costs one slot and, on a hit, the child it returns.
//
// The slot for a key is picked from its 32 hash bits alone (multiply-shift), so growing the
// table re-places slots without touching a single node, and the capacity can grow by 1.5x
// rather than 2x (the table is a large share of a big profile's memory).
#pragma once

#include <cstdint>
#include <vector>

namespace sparkprof::flamegraph {

class ChildIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  // The value stored for `key`, or kAbsent. `key_of(value)` returns the key a value was stored
  // under.
  template <typename KeyOf>
  uint32_t Find(uint64_t key, const KeyOf& key_of) const {
    if (slots_.empty()) return kAbsent;
    uint32_t tag = Tag(key);
    for (size_t i = HomeSlot(tag);; i = Next(i)) {
      const Slot& slot = slots_[i];
      if (slot.value == kAbsent) return kAbsent;
      if (slot.tag == tag && key_of(slot.value) == key) return slot.value;
    }
  }

  // Stores `value` under `key`, which must not be present yet.
  void Insert(uint64_t key, uint32_t value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    uint32_t tag = Tag(key);
    size_t i = HomeSlot(tag);
    while (slots_[i].value != kAbsent) i = Next(i);
    slots_[i] = {value, tag};
    ++size_;
  }

  size_t size() const { return size_; }
  size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }
  void Release() {
    slots_ = {};
    size_ = 0;
  }

 private:
  struct Slot {
    uint32_t value;
    uint32_t tag;
  };

  static uint32_t Tag(uint64_t key) {
    key ^= key >> 29;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 32;
    return static_cast<uint32_t>(key);
  }
  size_t HomeSlot(uint32_t tag) const { return (uint64_t{tag} * slots_.size()) >> 32; }
  size_t Next(size_t i) const { return i + 1 == slots_.size() ? 0 : i + 1; }

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    size_t capacity = old.empty() ? 64 : old.size() + old.size() / 2;
    slots_.assign(capacity, Slot{kAbsent, 0});
    for (const Slot& slot : old) {
      if (slot.value == kAbsent) continue;
      size_t i = HomeSlot(slot.tag);
      while (slots_[i].value != kAbsent) i = Next(i);
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace sparkprof::flamegraph
