// Categories of task time, shared by the agent's frame classifier, the driver aggregator and the
// flame graph code. Same names and values as `enum Category` in schema/profile.fbs, so a schema
// value converts with a static_cast after a range check (CategoryFromSchemaValue).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sparkprof {

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
  // The JVM's own threads (JIT compilers; the VM thread and its helpers): executor CPU, never a
  // task's. gc covers GC threads' CPU as well as the pauses that stop tasks.
  kJit = 10,
  kVm = 11,
};

inline constexpr int kCategoryCount = 12;

inline constexpr std::array<std::string_view, kCategoryCount> kCategoryNames = {
    "compute",      "serialization", "s3a_write", "s3a_read", "shuffle_write", "shuffle_read",
    "spill",        "file_io",       "gc",        "other",    "jit",           "vm",
};

constexpr int CategoryIndex(Category category) { return static_cast<int>(category); }

// "compute", "serialization", "s3a_write", ... (the schema's spelling); "other" when out of range.
constexpr std::string_view CategoryName(Category category) {
  int index = CategoryIndex(category);
  return index >= 0 && index < kCategoryCount ? kCategoryNames[index] : "other";
}

// Inverse of CategoryName; nullopt for an unknown name.
constexpr std::optional<Category> ParseCategory(std::string_view name) {
  for (int i = 0; i < kCategoryCount; ++i) {
    if (kCategoryNames[i] == name) return static_cast<Category>(i);
  }
  return std::nullopt;
}

// Category from a raw schema value; nullopt when out of range (a newer writer or a corrupt file).
constexpr std::optional<Category> CategoryFromSchemaValue(uint32_t value) {
  if (value >= static_cast<uint32_t>(kCategoryCount)) return std::nullopt;
  return static_cast<Category>(value);
}

}  // namespace sparkprof
