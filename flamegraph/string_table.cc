#include "flamegraph/string_table.h"

#include <random>

namespace sparkprof::flamegraph {
namespace {

constexpr uint64_t kMultiplier = 0x9e3779b97f4a7c15ull;

uint64_t Mix(uint64_t value) {
  value ^= value >> 31;
  value *= 0xbf58476d1ce4e5b9ull;
  value ^= value >> 29;
  return value;
}

uint64_t ProcessSeed() {
  static const uint64_t seed = [] {
    std::random_device device;
    return (uint64_t{device()} << 32) ^ device();
  }();
  return seed;
}

}  // namespace

uint64_t HashBytes(std::string_view bytes) {
  uint64_t hash = ProcessSeed() ^ (bytes.size() * kMultiplier);
  const char* data = bytes.data();
  size_t left = bytes.size();
  for (; left >= 8; data += 8, left -= 8) {
    uint64_t word;
    std::memcpy(&word, data, 8);
    hash = (hash ^ word) * kMultiplier;
    hash ^= hash >> 32;
  }
  if (left > 0) {
    uint64_t word = 0;
    std::memcpy(&word, data, left);
    hash = (hash ^ word) * kMultiplier;
  }
  return Mix(hash);
}

const char* StringTable::Store(StringId id, std::string_view text) {
  size_t record_bytes = sizeof(StringId) + text.size();
  char* destination;
  if (record_bytes > kChunkBytes / 4) {
    // A long name gets its own allocation so it does not waste the rest of a chunk.
    chunks_.emplace_back(new char[record_bytes]);
    destination = chunks_.back().get();
    // Keep the current chunk the last one we bump-allocate from.
    if (chunks_.size() >= 2) std::swap(chunks_[chunks_.size() - 1], chunks_[chunks_.size() - 2]);
  } else {
    if (chunk_used_ + record_bytes > kChunkBytes) {
      chunks_.emplace_back(new char[kChunkBytes]);
      chunk_used_ = 0;
    }
    destination = chunks_.back().get() + chunk_used_;
    chunk_used_ += record_bytes;
  }
  std::memcpy(destination, &id, sizeof(StringId));
  char* chars = destination + sizeof(StringId);
  if (!text.empty()) std::memcpy(chars, text.data(), text.size());
  char_bytes_ += text.size();
  return chars;
}

void StringTable::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{nullptr, 0, 0});
  size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.chars == nullptr) continue;
    size_t i = HomeSlot(slot.tag);
    while (slots_[i].chars != nullptr) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

StringId StringTable::Intern(std::string_view text, uint64_t hash) {
  if ((views_.size() + 1) * 4 > slots_.size() * 3) Grow();
  auto tag = static_cast<uint32_t>(hash >> 32);
  size_t mask = slots_.size() - 1;
  size_t i = HomeSlot(tag);
  for (; slots_[i].chars != nullptr; i = (i + 1) & mask) {
    if (Holds(slots_[i], tag, text)) return IdBefore(slots_[i].chars);
  }
  auto id = static_cast<StringId>(views_.size());
  const char* chars = Store(id, text);
  views_.emplace_back(chars, text.size());
  slots_[i] = {chars, static_cast<uint32_t>(text.size()), tag};
  return id;
}

std::optional<StringId> StringTable::Find(std::string_view text) const {
  if (slots_.empty()) return std::nullopt;
  auto tag = static_cast<uint32_t>(HashBytes(text) >> 32);
  size_t mask = slots_.size() - 1;
  for (size_t i = HomeSlot(tag); slots_[i].chars != nullptr; i = (i + 1) & mask) {
    if (Holds(slots_[i], tag, text)) return IdBefore(slots_[i].chars);
  }
  return std::nullopt;
}

}  // namespace sparkprof::flamegraph
