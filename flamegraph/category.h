// Categories of task time. Same names and order as `enum Category` in schema/profile.fbs, so a
// schema value converts with a static_cast after a range check.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sparkprof::flamegraph {

enum class Category : uint8_t {
  kCompute = 0,
  kSerialization = 1,
  kS3aWrite = 2,
  kS3aRead = 3,
  kShuffleWrite = 4,
  kShuffleRead = 5,
  kSpill = 6,
  kFileIo = 7,
  kGc = 8,
  kOther = 9,
};

inline constexpr int kCategoryCount = 10;

// Collapsed stacks carry a category as a leading pseudo-frame "[category=NAME]".
inline constexpr std::string_view kCategoryFramePrefix = "[category=";

// "compute", "serialization", "s3a_write", ... (the schema's spelling).
std::string_view CategoryName(Category category);

// Inverse of CategoryName; nullopt for an unknown name.
std::optional<Category> ParseCategory(std::string_view name);

// Category from a raw schema value; nullopt when out of range (a newer writer or a corrupt file).
std::optional<Category> CategoryFromSchemaValue(uint32_t value);

constexpr int CategoryIndex(Category category) { return static_cast<int>(category); }

// Weights per category, indexed by CategoryIndex.
using CategoryWeights = std::array<uint64_t, kCategoryCount>;

}  // namespace sparkprof::flamegraph
