// Reads Brendan Gregg's collapsed stacks ("frame;frame;...;leaf count", one stack per line, as
// async-profiler, perf/stackcollapse-* and flamegraph.pl use) into a ProfileModel.
//
// Categories: collapsed text carries none, so a line may start with the pseudo-frame
// `[category=NAME]` (NAME as in schema/profile.fbs, e.g. `[category=serialization];a;b 7`).
// Lines without it are classified by `CollapsedReadOptions::classifier`, or count as `other`.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "flamegraph/category.h"
#include "flamegraph/profile_model.h"
#include "flamegraph/read_report.h"

namespace sparkprof::flamegraph {

// Decides the category of a stack from its root-first frames (the agent's frame classifier plugs
// in here).
using FrameClassifier = std::function<Category(std::span<const std::string_view> frames)>;

// A classifier that looks at each frame on its own and then combines the results (the agent's
// rules do): the reader calls `classify_frame` once per distinct frame name, keeps its opaque
// result by frame id, and calls `combine` with the results of a stack's frames, innermost first.
// Both must be set to use it.
struct PerFrameClassifier {
  std::function<uint32_t(std::string_view frame)> classify_frame;
  std::function<Category(std::span<const uint32_t> results_innermost_first)> combine;
  explicit operator bool() const { return classify_frame && combine; }
};

inline constexpr size_t kDefaultMaxTreeNodes = size_t{4} << 20;

struct CollapsedReadOptions {
  std::string source_name = "<input>";      // used in messages: "<source_name>:<line>: ..."
  FrameClassifier classifier;               // empty: Category::kOther
  PerFrameClassifier per_frame_classifier;  // when set, used instead of `classifier`
  size_t max_line_bytes = 1 << 20;          // longer lines are skipped with a warning
  size_t max_frames_per_stack = 8192;       // deeper stacks are skipped with a warning
  // Nodes of the call tree (distinct stack prefixes); a stack that would add nodes past it is
  // skipped with a warning (a stack already in the tree still counts). docs/limits.md.
  size_t max_tree_nodes = kDefaultMaxTreeNodes;
  // Only lines of this category reach the model (the others are read and left out).
  std::optional<Category> only_category;
};

// Reads collapsed text as it arrives, in pieces of any size (a file read in chunks): each line
// goes into the call tree as soon as it is complete, so the input is never held whole, and
// nothing is allocated per line. Lines are taken in file order; a frame shared with the same
// position of the previous line (sorted input repeats long prefixes) costs a comparison instead
// of a hash lookup, and the model resolves shared tree paths the same way.
class CollapsedReader {
 public:
  CollapsedReader(const CollapsedReadOptions& options, ProfileModel& model, ReadReport& report);

  void Feed(std::string_view bytes);
  // Reads a last line without a line break. Fails when there was content but not a single line
  // could be read.
  Status Finish();

 private:
  void ReadLine(std::string_view line);
  Category Classify(std::span<const std::string_view> frames);  // frames_ with ids_ set
  std::string Where() const;

  const CollapsedReadOptions& options_;
  ProfileModel& model_;
  ReadReport& report_;
  uint64_t line_number_ = 0;
  uint64_t content_lines_ = 0;
  uint64_t stacks_read_ = 0;
  // A line split between two pieces: its first bytes (at most max_line_bytes + 1 are kept).
  std::string partial_;
  uint64_t partial_bytes_ = 0;
  bool has_partial_ = false;
  // Scratch reused by every line.
  std::vector<std::string_view> frames_;
  std::vector<FrameId> ids_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> frame_results_;  // per_frame_classifier's result by frame id
  std::vector<uint32_t> stack_results_;  // one stack's results, innermost first
  // The previous line's frames, copied (the piece it came from may be gone) with their ids.
  std::string previous_text_;
  std::vector<std::pair<uint32_t, uint32_t>> previous_frames_;  // offset, size in previous_text_
  std::vector<FrameId> previous_ids_;
};

// Adds every valid line of `text` to `model`. Bad lines become warnings in `report`. Fails only
// when `text` is not empty and not a single line could be read.
Status ReadCollapsed(std::string_view text, const CollapsedReadOptions& options,
                     ProfileModel& model, ReadReport& report);

}  // namespace sparkprof::flamegraph
