// Reads Brendan Gregg's collapsed stacks ("frame;frame;...;leaf count", one stack per line, as
// async-profiler, perf/stackcollapse-* and flamegraph.pl use) into a ProfileModel.
//
// Categories: collapsed text carries none, so a line may start with the pseudo-frame
// `[category=NAME]` (NAME as in schema/profile.fbs, e.g. `[category=serialization];a;b 7`).
// Lines without it are classified by `CollapsedReadOptions::classifier`, or count as `other`.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"
#include "flamegraph/category.h"
#include "flamegraph/profile_model.h"
#include "flamegraph/read_report.h"

namespace sparkprof::flamegraph {

// Decides the category of a stack from its root-first frames (the agent's frame classifier plugs
// in here).
using FrameClassifier = std::function<Category(std::span<const std::string_view> frames)>;

inline constexpr size_t kDefaultMaxTreeNodes = size_t{4} << 20;

struct CollapsedReadOptions {
  std::string source_name = "<input>";  // used in messages: "<source_name>:<line>: ..."
  FrameClassifier classifier;           // empty: Category::kOther
  size_t max_line_bytes = 1 << 20;      // longer lines are skipped with a warning
  size_t max_frames_per_stack = 8192;   // deeper stacks are skipped with a warning
  // Nodes of the call tree (distinct stack prefixes); a stack that would add nodes past it is
  // skipped with a warning (a stack already in the tree still counts). docs/limits.md.
  size_t max_tree_nodes = kDefaultMaxTreeNodes;
};

// Adds every valid line of `text` to `model`. Bad lines become warnings in `report`. Fails only
// when `text` is not empty and not a single line could be read.
Status ReadCollapsed(std::string_view text, const CollapsedReadOptions& options,
                     ProfileModel& model, ReadReport& report);

}  // namespace sparkprof::flamegraph
