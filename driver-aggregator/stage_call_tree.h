// One stage attempt's call tree as the live feed fills it. A 1,000-executor cluster sends the
// stage's same few thousand stacks in every batch, so the cost per stack and per sample matters
// more than anything else on the driver (bench/driver_ingest_bench, bench/RESULTS.md):
//
// - A stack the tree already holds costs one lookup in a table keyed by a 128-bit hash of its
//   frame ids (seeded per process), not one child lookup per frame (50 on average).
// - A sample's weight is summed per (node, category) and added to the tree -- one walk to the root
//   for each sum -- only when the tree is read (model()), or when the sums fill their table.
//
// Identity by hash: two different stacks are taken for one only when both 64-bit halves of their
// hashes, their depths and their innermost frames are equal: ~n^2 / 2^129 for n distinct stacks.
// An executor that forged such a pair gains nothing it could not get by sending the wrong stack
// outright (batches are verified, not trusted for their contents).
//
// Memory: the stack table has at most one entry per tree node plus, once the tree is full, up to
// max_nodes / 4 entries for stacks that folded (24 bytes each, at 3/4 load at most; in practice a
// stage has far fewer distinct stacks than nodes); the weight sums hold at most
// kMaxPendingWeights entries (16 bytes each) before they are added to the tree.
//
// Not thread-safe: the aggregator calls it under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "flamegraph/category.h"
#include "flamegraph/profile_model.h"

namespace sparkprof::driver {

inline constexpr std::string_view kOverflowFrame = "[overflow: stage call tree full]";

class StageCallTree {
 public:
  // A stack's identity in the stack table: its 128-bit hash and innermost frame.
  struct StackKey {
    uint64_t low = 0;
    uint64_t high = 0;  // never 0
    flamegraph::FrameId leaf = 0;
  };

  // Sums of (node, category) held before they are added to the tree.
  static constexpr size_t kMaxPendingWeights = size_t{1} << 16;

  // `max_nodes`: a stack that would take the tree past this many nodes is refused (FindOrInsert
  // returns kNoNode); a stack the tree holds is always found.
  explicit StageCallTree(size_t max_nodes);

  flamegraph::FrameId InternFrame(std::string_view name) { return model_.InternFrame(name); }
  // The node of `frames` (root-first; the root for none), created if missing and within the cap;
  // flamegraph::kNoNode when that would take the tree past max_nodes.
  flamegraph::NodeId FindOrInsert(std::span<const flamegraph::FrameId> frames) {
    return FindOrInsert(frames, KeyOf(frames));
  }
  // The same in steps, so a caller resolving many stacks can hash them all first and have each
  // one's slot fetched (Prefetch) a few stacks before it is looked up (Find): a known stack then
  // costs no wait for memory. `key` must be KeyOf(frames).
  static StackKey KeyOf(std::span<const flamegraph::FrameId> frames);
  void Prefetch(const StackKey& key) const {
    if (!stacks_.empty()) __builtin_prefetch(&stacks_[key.low & (stacks_.size() - 1)]);
  }
  // Whether the table knows the stack; if so, its node in `node` (kNoNode for a stack that folded).
  bool Find(const StackKey& key, flamegraph::NodeId& node) const;
  flamegraph::NodeId FindOrInsert(std::span<const flamegraph::FrameId> frames, const StackKey& key);
  // The "[overflow: stage call tree full]" node under the root, which takes the weight of stacks
  // that did not fit (made even when the tree is full: one node past the cap).
  flamegraph::NodeId OverflowNode();
  // Adds `weight` to `node`'s self weight in `category` (and to its root path's totals, lazily).
  void AddWeight(flamegraph::NodeId node, Category category, uint64_t weight);

  // The tree with every weight added so far.
  const flamegraph::ProfileModel& model();
  size_t node_count() const { return model_.node_count(); }
  // Entries in the stack table (for tests).
  size_t known_stacks() const { return stack_count_; }

 private:
  struct StackSlot {
    uint64_t hash_low = 0;
    uint64_t hash_high = 0;  // never 0 in a used slot: an empty slot has 0 here
    flamegraph::NodeId node = 0;
    flamegraph::FrameId leaf = 0;
  };
  struct PendingSlot {
    uint64_t key = 0;  // node * kCategoryCount + category + 1; 0 = empty
    uint64_t weight = 0;
  };

  void GrowStacks();
  void GrowPending();
  void FlushPending();

  flamegraph::ProfileModel model_{flamegraph::WeightUnit::kNanoseconds};
  const size_t max_nodes_;
  std::vector<StackSlot> stacks_;
  size_t stack_count_ = 0;
  size_t folded_count_ = 0;  // entries of stacks that folded
  flamegraph::NodeId overflow_node_ = flamegraph::kNoNode;
  std::vector<PendingSlot> pending_;
  size_t pending_count_ = 0;
};

}  // namespace sparkprof::driver
