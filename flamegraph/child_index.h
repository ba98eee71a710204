// (parent node, frame) -> child node: the hottest lookup while building a call tree (once per
// frame of every stack), so an open-addressing table of plain 16-byte slots instead of a
// node-per-entry std::unordered_map.
#pragma once

#include <cstdint>
#include <vector>

namespace sparkprof::flamegraph {

class ChildIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  // The value stored for `key`, or kAbsent.
  uint32_t Find(uint64_t key) const {
    if (slots_.empty()) return kAbsent;
    for (size_t i = SlotFor(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == kEmptyKey) return kAbsent;
    }
  }

  // The value for `key`; when absent, stores `value_if_absent` and returns it with inserted=true.
  uint32_t FindOrInsert(uint64_t key, uint32_t value_if_absent, bool& inserted) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    for (size_t i = SlotFor(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) {
        inserted = false;
        return slots_[i].value;
      }
      if (slots_[i].key == kEmptyKey) {
        slots_[i] = {key, value_if_absent};
        ++size_;
        inserted = true;
        return value_if_absent;
      }
    }
  }

  size_t size() const { return size_; }

 private:
  // Keys are (parent << 32 | frame) and no parent is UINT32_MAX, so this key never occurs.
  static constexpr uint64_t kEmptyKey = UINT64_MAX;
  struct Slot {
    uint64_t key;
    uint32_t value;
  };

  size_t SlotFor(uint64_t key) const {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> 32) & mask_;
  }

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    size_t capacity = old.empty() ? 64 : old.size() * 2;
    slots_.assign(capacity, Slot{kEmptyKey, 0});
    mask_ = capacity - 1;
    size_ = 0;
    bool inserted;
    for (const Slot& slot : old) {
      if (slot.key != kEmptyKey) FindOrInsert(slot.key, slot.value, inserted);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace sparkprof::flamegraph
