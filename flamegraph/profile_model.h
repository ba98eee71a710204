// The call tree every input becomes and every output is written from: one node per distinct
// (parent, frame), with total and self weight, and the self weight split by category.
//
// Invariants: node 0 is the root ("all"); a child's id is larger than its parent's; the total of a
// node is its self weight plus the totals of its children. Pruned() drops narrow children and,
// where what it dropped under one parent is itself wide enough to draw, puts one marker child
// "[N frames below X% merged]" in their place holding their weight; narrower leftovers show as
// a gap in their parent, as in flamegraph.pl.
//
// Memory: a node is 32 bytes in fixed-size blocks (growing never copies the tree) plus an 8-byte
// slot of the child index; self weights are kept per category only for nodes that have any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flamegraph/category.h"
#include "flamegraph/child_index.h"
#include "flamegraph/string_table.h"

namespace sparkprof::flamegraph {

using FrameId = StringId;
using NodeId = uint32_t;

inline constexpr NodeId kRootNode = 0;
inline constexpr NodeId kNoNode = UINT32_MAX;
inline constexpr uint32_t kNoSelfWeight = UINT32_MAX;

// What one unit of weight means.
enum class WeightUnit : uint8_t { kSamples, kNanoseconds };
std::string_view WeightUnitName(WeightUnit unit);  // "samples" / "nanoseconds"

// A node as callers see it (ProfileModel::node() assembles it; `self` is the sum of its
// per-category self weights).
struct ProfileNode {
  FrameId frame = 0;  // meaningless for the root
  NodeId parent = kNoNode;
  NodeId first_child = kNoNode;
  NodeId next_sibling = kNoNode;
  uint32_t depth = 0;  // root 0, outermost frame 1
  uint32_t first_self_weight = kNoSelfWeight;
  uint64_t total = 0;
  uint64_t self = 0;
};

// Called once per (stack, category) with a non-zero self weight. `frames` is root-first.
using StackVisitor =
    std::function<void(std::span<const FrameId> frames, Category category, uint64_t weight)>;

class ProfileModel {
 public:
  explicit ProfileModel(WeightUnit unit = WeightUnit::kSamples);
  // A model sharing `strings` (append-only, so ids stay valid for every holder).
  ProfileModel(WeightUnit unit, std::shared_ptr<StringTable> strings);

  WeightUnit unit() const { return unit_; }
  FrameId InternFrame(std::string_view name) { return strings_->Intern(name); }
  std::string_view FrameName(FrameId frame) const { return strings_->Get(frame); }
  const StringTable& strings() const { return *strings_; }
  const std::shared_ptr<StringTable>& shared_strings() const { return strings_; }

  // Adds `weight` along `frames` (root-first). Weights saturate at UINT64_MAX rather than wrap.
  // An empty stack adds to the root's self weight. Consecutive stacks that share a prefix (sorted
  // collapsed input) skip the child lookups for that prefix.
  void AddStack(std::span<const FrameId> frames, Category category, uint64_t weight);
  void AddStack(std::span<const std::string_view> frames, Category category, uint64_t weight);
  // AddStack in two steps, for callers that add many samples to one stack: the node of `frames`
  // (root-first; the root for an empty span), creating the missing nodes — unless that would
  // take the tree past `max_nodes` nodes, in which case nothing is created and kNoNode returned
  // (a stack already in the tree is always found).
  NodeId FindOrInsertPath(std::span<const FrameId> frames, size_t max_nodes = SIZE_MAX);
  // Adds `weight` to `node`'s self weight in `category` and to every total on its root path.
  void AddWeight(NodeId node, Category category, uint64_t weight);

  // Adds every stack of `other` (its strings are interned into this model's table).
  void Merge(const ProfileModel& other);

  // A copy without the subtrees whose total is below `min_total` (merged into marker nodes, see
  // above). Shares this model's strings. The rvalue form frees this model's child index first,
  // for callers that only keep the pruned copy (it lowers the peak memory of a big profile).
  ProfileModel Pruned(uint64_t min_total) const&;
  ProfileModel Pruned(uint64_t min_total) &&;
  // True for a "[N frames below X% merged]" node made by Pruned().
  bool IsMergedMarker(NodeId node) const;
  // A copy holding only the samples of `category`.
  ProfileModel FilteredByCategory(Category category) const;

  size_t node_count() const { return node_count_; }
  ProfileNode node(NodeId id) const;
  uint64_t total_weight() const { return Stored(kRootNode).total; }
  const CategoryWeights& category_totals() const { return category_totals_; }
  // Nodes removed by Pruned() on the way to this model (0 for an unpruned model).
  uint64_t pruned_node_count() const { return pruned_node_count_; }

  // The child of `parent` for `frame`, or kNoNode.
  NodeId FindChild(NodeId parent, FrameId frame) const;
  // Children of `node` in alphabetical order of frame name (the flame graph's x-axis order).
  std::vector<NodeId> SortedChildren(NodeId node) const;
  // Calls `visit(category, weight)` for each category in the node's self weight.
  template <typename Visit>
  void ForEachSelfWeight(NodeId node, Visit&& visit) const {
    for (uint32_t i = Stored(node).first_self_weight; i != kNoSelfWeight;
         i = self_weights_[i].next) {
      visit(self_weights_[i].category, self_weights_[i].weight);
    }
  }
  // Every (stack, category, self weight), depth first with children in alphabetical order and
  // a node's categories in category order, so the output of a collapsed writer is sorted like
  // flamegraph.pl's input and the same whatever order its stacks were added in.
  void ForEachStack(const StackVisitor& visit) const;
  // The category holding most of each node's total weight (ties go to the lower index). The
  // subtrees of `drawn_apart` (ascending ids) count for themselves but not for their ancestors:
  // the flame graph draws them within their parent's wait (python_worker_layout.h).
  std::vector<Category> DominantCategories(std::span<const NodeId> drawn_apart = {}) const;
  // Root-first frames from the outermost frame to `node`.
  std::vector<FrameId> PathTo(NodeId node) const;

 private:
  struct SelfWeight {
    uint64_t weight;
    uint32_t next;
    Category category;
  };
  struct StoredNode {
    FrameId frame;
    NodeId parent;
    NodeId first_child;
    NodeId next_sibling;
    uint32_t depth;
    uint32_t first_self_weight;
    uint64_t total;
  };
  static_assert(sizeof(StoredNode) == 32);
  static constexpr int kBlockBits = 12;  // 4096 nodes (128 KiB) per block
  static constexpr NodeId kBlockMask = (NodeId{1} << kBlockBits) - 1;

  StoredNode& Stored(NodeId id) { return node_blocks_[id >> kBlockBits][id & kBlockMask]; }
  const StoredNode& Stored(NodeId id) const {
    return node_blocks_[id >> kBlockBits][id & kBlockMask];
  }
  NodeId AppendNode(FrameId frame, NodeId parent);
  NodeId ChildFor(NodeId parent, FrameId frame);
  NodeId NewChild(NodeId parent, FrameId frame);  // `frame` is not a child of `parent` yet
  ProfileModel PrunedCopy(uint64_t min_total) const;
  void AddSelfWeight(NodeId node, Category category, uint64_t weight);
  // Adds `node`'s self weights into `weights`, by category (saturating).
  void AddSelfWeightsTo(NodeId node, CategoryWeights& weights) const;
  static uint64_t ChildKey(NodeId parent, FrameId frame) {
    return (static_cast<uint64_t>(parent) << 32) | frame;
  }
  uint64_t KeyOf(NodeId node) const { return ChildKey(Stored(node).parent, Stored(node).frame); }

  WeightUnit unit_;
  std::shared_ptr<StringTable> strings_;
  // Blocks of at most 1 << kBlockBits nodes (a std::vector each, so the model stays copyable).
  std::vector<std::vector<StoredNode>> node_blocks_;
  size_t node_count_ = 0;
  std::vector<SelfWeight> self_weights_;
  ChildIndex child_index_;
  std::vector<NodeId> merged_markers_;  // ascending
  CategoryWeights category_totals_{};
  uint64_t pruned_node_count_ = 0;
  // The previous AddStack's path, for the shared-prefix shortcut.
  std::vector<FrameId> last_frames_;
  std::vector<NodeId> last_nodes_;
  std::vector<FrameId> scratch_frames_;
};

// Adds with saturation: weights come from untrusted files.
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

}  // namespace sparkprof::flamegraph
