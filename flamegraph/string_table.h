// Interned frame names: each distinct name is stored once and named by a dense 32-bit id, so the
// call tree, the HTML string table and the speedscope frame list all share one copy.
//
// The index is an open-addressing table of 8-byte slots (id and 32 bits of the name's hash) over
// the raw bytes, so a reader can hash a frame once, straight from its input buffer, and intern it
// without building a std::string.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace sparkprof::flamegraph {

using StringId = uint32_t;

// A fast 64-bit hash of raw bytes (8 at a time), seeded once per process so that input crafted
// for one run's table does not collide in another's.
uint64_t HashBytes(std::string_view bytes);

class StringTable {
 public:
  StringTable() = default;
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  // Returns the id of `text`, adding it when new. Ids are dense, in order of first appearance.
  StringId Intern(std::string_view text) { return Intern(text, HashBytes(text)); }
  // The same, with `hash` == HashBytes(text) already computed.
  StringId Intern(std::string_view text, uint64_t hash);
  // Starts loading the slot `hash` would probe first (a reader hashes a line's frames, prefetches
  // them all, then interns them, so the cache misses overlap).
  void Prefetch(uint64_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[HomeSlot(static_cast<uint32_t>(hash >> 32))]);
  }
  // The id of `text` if it was interned, without adding it.
  std::optional<StringId> Find(std::string_view text) const;

  std::string_view Get(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }
  // Bytes held by the characters of all strings (not counting the index).
  size_t char_bytes() const { return char_bytes_; }

 private:
  // A slot points at the stored characters, which follow their id (4 bytes, unaligned), so a
  // lookup reads the slot and one place in the character chunks, never `views_`.
  struct Slot {
    const char* chars;  // nullptr: empty slot
    uint32_t size;
    uint32_t tag;  // the hash's high half: most mismatches are rejected without reading the text
  };
  static StringId IdBefore(const char* chars) {
    StringId id;
    std::memcpy(&id, chars - sizeof(StringId), sizeof(StringId));
    return id;
  }
  static bool Holds(const Slot& slot, uint32_t tag, std::string_view text) {
    return slot.tag == tag && slot.size == text.size() &&
           std::memcmp(slot.chars, text.data(), text.size()) == 0;
  }

  // Stores `id` and then the characters of `text`; returns where the characters start.
  const char* Store(StringId id, std::string_view text);
  size_t HomeSlot(uint32_t tag) const { return (uint64_t{tag} * slots_.size()) >> 32; }
  void Grow();

  static constexpr size_t kChunkBytes = 64 * 1024;
  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t chunk_used_ = kChunkBytes;
  size_t char_bytes_ = 0;
  std::vector<std::string_view> views_;
  std::vector<Slot> slots_;
};

}  // namespace sparkprof::flamegraph
