// Interned frame names: each distinct name is stored once and named by a dense 32-bit id, so the
// call tree, the HTML string table and the speedscope frame list all share one copy.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sparkprof::flamegraph {

using StringId = uint32_t;

class StringTable {
 public:
  StringTable() = default;
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  // Returns the id of `text`, adding it when new. Ids are dense, in order of first appearance.
  StringId Intern(std::string_view text);
  // The id of `text` if it was interned, without adding it.
  std::optional<StringId> Find(std::string_view text) const;

  std::string_view Get(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }
  // Bytes held by the characters of all strings (not counting the index).
  size_t char_bytes() const { return char_bytes_; }

 private:
  std::string_view Store(std::string_view text);

  static constexpr size_t kChunkBytes = 64 * 1024;
  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t chunk_used_ = kChunkBytes;
  size_t char_bytes_ = 0;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StringId> index_;
};

}  // namespace sparkprof::flamegraph
