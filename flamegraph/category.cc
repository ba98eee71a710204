#include "flamegraph/category.h"

namespace sparkprof::flamegraph {
namespace {

constexpr std::array<std::string_view, kCategoryCount> kCategoryNames = {
    "compute",      "serialization", "s3a_write", "s3a_read", "shuffle_write",
    "shuffle_read", "spill",         "file_io",   "gc",       "other",
};

}  // namespace

std::string_view CategoryName(Category category) {
  int index = CategoryIndex(category);
  return index >= 0 && index < kCategoryCount ? kCategoryNames[index] : "other";
}

std::optional<Category> ParseCategory(std::string_view name) {
  for (int i = 0; i < kCategoryCount; ++i) {
    if (kCategoryNames[i] == name) return static_cast<Category>(i);
  }
  return std::nullopt;
}

std::optional<Category> CategoryFromSchemaValue(uint32_t value) {
  if (value >= static_cast<uint32_t>(kCategoryCount)) return std::nullopt;
  return static_cast<Category>(value);
}

}  // namespace sparkprof::flamegraph
