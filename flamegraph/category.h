// Categories of task time in the flame graph code: the project-wide enum (common/category.h)
// under flamegraph:: names, plus the collapsed-text spelling of a category.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "common/category.h"

namespace sparkprof::flamegraph {

using ::sparkprof::Category;
using ::sparkprof::CategoryFromSchemaValue;
using ::sparkprof::CategoryIndex;
using ::sparkprof::CategoryName;
using ::sparkprof::kCategoryCount;
using ::sparkprof::ParseCategory;

// Collapsed stacks carry a category as a leading pseudo-frame "[category=NAME]".
inline constexpr std::string_view kCategoryFramePrefix = "[category=";

// Weights per category, indexed by CategoryIndex.
using CategoryWeights = std::array<uint64_t, kCategoryCount>;

}  // namespace sparkprof::flamegraph
