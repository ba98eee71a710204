// Writes a ProfileModel as collapsed stacks ("frame;frame;...;leaf count"), sorted, one line per
// (stack, category). Categories other than `other` are written as a leading `[category=NAME]`
// pseudo-frame (see collapsed_reader.h), so collapsed -> model -> collapsed keeps them.
#pragma once

#include <string>

#include "flamegraph/profile_model.h"

namespace sparkprof::flamegraph {

enum class CategoryAnnotation : uint8_t {
  kAllButOther,  // `other` is what an unannotated line means, so it needs no annotation
  kAlways,
  kNever,  // plain flamegraph.pl input
};

struct CollapsedWriteOptions {
  CategoryAnnotation annotation = CategoryAnnotation::kAllButOther;
};

// Appends to `out`. A frame name's ';' becomes ':' and line breaks become '_', because the
// format cannot carry them.
void WriteCollapsed(const ProfileModel& model, const CollapsedWriteOptions& options,
                    std::string& out);

}  // namespace sparkprof::flamegraph
