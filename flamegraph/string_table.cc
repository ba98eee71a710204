#include "flamegraph/string_table.h"

#include <cstring>

namespace sparkprof::flamegraph {

std::string_view StringTable::Store(std::string_view text) {
  if (text.empty()) return {};
  char* destination;
  if (text.size() > kChunkBytes / 4) {
    // A long name gets its own allocation so it does not waste the rest of a chunk.
    chunks_.emplace_back(new char[text.size()]);
    destination = chunks_.back().get();
    // Keep the current chunk the last one we bump-allocate from.
    if (chunks_.size() >= 2) std::swap(chunks_[chunks_.size() - 1], chunks_[chunks_.size() - 2]);
  } else {
    if (chunk_used_ + text.size() > kChunkBytes) {
      chunks_.emplace_back(new char[kChunkBytes]);
      chunk_used_ = 0;
    }
    destination = chunks_.back().get() + chunk_used_;
    chunk_used_ += text.size();
  }
  std::memcpy(destination, text.data(), text.size());
  char_bytes_ += text.size();
  return {destination, text.size()};
}

StringId StringTable::Intern(std::string_view text) {
  auto found = index_.find(text);
  if (found != index_.end()) return found->second;
  std::string_view stored = Store(text);
  auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

std::optional<StringId> StringTable::Find(std::string_view text) const {
  auto found = index_.find(text);
  if (found == index_.end()) return std::nullopt;
  return found->second;
}

}  // namespace sparkprof::flamegraph
