#include "flamegraph/profile_model.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace sparkprof::flamegraph {

std::string_view WeightUnitName(WeightUnit unit) {
  return unit == WeightUnit::kNanoseconds ? "nanoseconds" : "samples";
}

ProfileModel::ProfileModel(WeightUnit unit) : ProfileModel(unit, std::make_shared<StringTable>()) {}

ProfileModel::ProfileModel(WeightUnit unit, std::shared_ptr<StringTable> strings)
    : unit_(unit), strings_(std::move(strings)) {
  AppendNode(0, kNoNode);  // the root
}

ProfileNode ProfileModel::node(NodeId id) const {
  const StoredNode& stored = Stored(id);
  ProfileNode result;
  result.frame = stored.frame;
  result.parent = stored.parent;
  result.first_child = stored.first_child;
  result.next_sibling = stored.next_sibling;
  result.depth = stored.depth;
  result.first_self_weight = stored.first_self_weight;
  result.total = stored.total;
  ForEachSelfWeight(
      id, [&](Category, uint64_t weight) { result.self = SaturatingAdd(result.self, weight); });
  return result;
}

NodeId ProfileModel::AppendNode(FrameId frame, NodeId parent) {
  auto id = static_cast<NodeId>(node_count_);
  if ((id & kBlockMask) == 0) {
    node_blocks_.emplace_back();
    node_blocks_.back().reserve(size_t{1} << kBlockBits);
  }
  StoredNode stored{frame, parent, kNoNode, kNoNode, 0, kNoSelfWeight, 0};
  if (parent != kNoNode) {
    stored.depth = Stored(parent).depth + 1;
    stored.next_sibling = Stored(parent).first_child;
  }
  node_blocks_.back().push_back(stored);
  ++node_count_;
  if (parent != kNoNode) Stored(parent).first_child = id;
  return id;
}

NodeId ProfileModel::FindChild(NodeId parent, FrameId frame) const {
  return child_index_.Find(ChildKey(parent, frame), [this](NodeId node) { return KeyOf(node); });
}

NodeId ProfileModel::NewChild(NodeId parent, FrameId frame) {
  NodeId id = AppendNode(frame, parent);
  child_index_.Insert(ChildKey(parent, frame), id);
  return id;
}

NodeId ProfileModel::ChildFor(NodeId parent, FrameId frame) {
  NodeId found = FindChild(parent, frame);
  return found != kNoNode ? found : NewChild(parent, frame);
}

bool ProfileModel::IsMergedMarker(NodeId node) const {
  return std::binary_search(merged_markers_.begin(), merged_markers_.end(), node);
}

void ProfileModel::AddSelfWeight(NodeId node, Category category, uint64_t weight) {
  StoredNode& target = Stored(node);
  for (uint32_t i = target.first_self_weight; i != kNoSelfWeight; i = self_weights_[i].next) {
    if (self_weights_[i].category == category) {
      self_weights_[i].weight = SaturatingAdd(self_weights_[i].weight, weight);
      return;
    }
  }
  self_weights_.push_back({weight, target.first_self_weight, category});
  target.first_self_weight = static_cast<uint32_t>(self_weights_.size() - 1);
}

void ProfileModel::AddSelfWeightsTo(NodeId node, CategoryWeights& weights) const {
  ForEachSelfWeight(node, [&](Category category, uint64_t weight) {
    uint64_t& sum = weights[CategoryIndex(category)];
    sum = SaturatingAdd(sum, weight);
  });
}

void ProfileModel::AddStack(std::span<const FrameId> frames, Category category, uint64_t weight) {
  if (weight == 0) return;
  AddWeight(FindOrInsertPath(frames), category, weight);
}

NodeId ProfileModel::FindOrInsertPath(std::span<const FrameId> frames, size_t max_nodes) {
  // Shortcut: the prefix shared with the previous path is already resolved.
  size_t shared = 0;
  while (shared < frames.size() && shared < last_frames_.size() &&
         frames[shared] == last_frames_[shared]) {
    ++shared;
  }
  last_frames_.resize(shared);
  last_nodes_.resize(shared);
  NodeId node = shared == 0 ? kRootNode : last_nodes_[shared - 1];
  size_t i = shared;
  for (; i < frames.size(); ++i) {
    NodeId child = FindChild(node, frames[i]);
    if (child == kNoNode) break;
    node = child;
    last_frames_.push_back(frames[i]);
    last_nodes_.push_back(node);
  }
  if (i == frames.size()) return node;
  size_t missing = frames.size() - i;
  if (node_count_ > max_nodes || missing > max_nodes - node_count_) return kNoNode;
  // The first missing child was just looked up, and below a new node everything is new.
  for (; i < frames.size(); ++i) {
    node = NewChild(node, frames[i]);
    last_frames_.push_back(frames[i]);
    last_nodes_.push_back(node);
  }
  return node;
}

void ProfileModel::AddWeight(NodeId node, Category category, uint64_t weight) {
  if (weight == 0) return;
  for (NodeId walk = node; walk != kNoNode;) {
    StoredNode& stored = Stored(walk);
    stored.total = SaturatingAdd(stored.total, weight);
    walk = stored.parent;
  }
  AddSelfWeight(node, category, weight);
  uint64_t& category_total = category_totals_[CategoryIndex(category)];
  category_total = SaturatingAdd(category_total, weight);
}

void ProfileModel::AddStack(std::span<const std::string_view> frames, Category category,
                            uint64_t weight) {
  scratch_frames_.clear();
  for (std::string_view name : frames) scratch_frames_.push_back(strings_->Intern(name));
  std::vector<FrameId> frame_ids;
  frame_ids.swap(scratch_frames_);
  AddStack(frame_ids, category, weight);
  frame_ids.swap(scratch_frames_);
}

void ProfileModel::Merge(const ProfileModel& other) {
  std::vector<FrameId> translated(other.strings().size(), UINT32_MAX);
  std::vector<FrameId> path;
  other.ForEachStack([&](std::span<const FrameId> frames, Category category, uint64_t weight) {
    path.clear();
    for (FrameId frame : frames) {
      if (translated[frame] == UINT32_MAX) {
        translated[frame] = strings_->Intern(other.FrameName(frame));
      }
      path.push_back(translated[frame]);
    }
    AddStack(path, category, weight);
  });
}

ProfileModel ProfileModel::Pruned(uint64_t min_total) const& { return PrunedCopy(min_total); }

ProfileModel ProfileModel::Pruned(uint64_t min_total) && {
  child_index_.Release();  // pruning walks parent links only
  last_frames_.clear();
  last_nodes_.clear();
  return PrunedCopy(min_total);
}

namespace {

// "0.0083%": the threshold as a share of the total, with two significant digits.
std::string ShareText(uint64_t part, uint64_t whole) {
  double percent = whole == 0 ? 0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  char text[32];
  std::snprintf(text, sizeof(text), "%.2g%%", percent);
  return text;
}

}  // namespace

ProfileModel ProfileModel::PrunedCopy(uint64_t min_total) const {
  ProfileModel pruned(unit_, strings_);
  pruned.category_totals_ = category_totals_;
  pruned.Stored(kRootNode).total = total_weight();
  // new_id[old]: the node's id in `pruned`, or, for a dropped node, kDropped | the pruned id of
  // the nearest kept ancestor, whose marker collects the dropped subtree.
  constexpr NodeId kDropped = NodeId{1} << 31;
  std::vector<NodeId> new_id(node_count_, kNoNode);
  new_id[kRootNode] = kRootNode;
  struct Merged {
    uint64_t frames = 0;
    CategoryWeights weights{};
  };
  std::vector<Merged> merged(1);  // by pruned id
  uint64_t removed = 0;
  // Parents have smaller ids than their children, so one pass in id order sees parents first.
  for (NodeId old_id = 0; old_id < node_count_; ++old_id) {
    const StoredNode& old_node = Stored(old_id);
    NodeId target;
    if (old_id == kRootNode) {
      target = kRootNode;
    } else {
      NodeId parent = new_id[old_node.parent];
      if ((parent & kDropped) != 0 || old_node.total < min_total) {
        NodeId anchor = parent & ~kDropped;
        new_id[old_id] = anchor | kDropped;
        ++removed;
        ++merged[anchor].frames;
        AddSelfWeightsTo(old_id, merged[anchor].weights);
        continue;
      }
      target = pruned.ChildFor(parent, old_node.frame);
      pruned.Stored(target).total = old_node.total;
      new_id[old_id] = target;
      merged.resize(pruned.node_count_);
    }
    ForEachSelfWeight(old_id, [&](Category category, uint64_t weight) {
      pruned.AddSelfWeight(target, category, weight);
    });
  }
  new_id = {};
  NodeId kept = static_cast<NodeId>(pruned.node_count_);
  for (NodeId parent = 0; parent < kept; ++parent) {
    if (merged[parent].frames == 0) continue;
    uint64_t weight = 0;
    for (uint64_t part : merged[parent].weights) weight = SaturatingAdd(weight, part);
    if (weight < min_total || weight == 0) continue;  // too narrow to draw: a gap, as before
    std::string name = "[" + std::to_string(merged[parent].frames) + " frame" +
                       (merged[parent].frames == 1 ? "" : "s") + " below " +
                       ShareText(min_total, total_weight()) + " merged]";
    NodeId marker = pruned.ChildFor(parent, pruned.InternFrame(name));
    StoredNode& stored = pruned.Stored(marker);
    stored.total = SaturatingAdd(stored.total, weight);
    for (int i = 0; i < kCategoryCount; ++i) {
      if (merged[parent].weights[i] > 0) {
        pruned.AddSelfWeight(marker, static_cast<Category>(i), merged[parent].weights[i]);
      }
    }
    if (pruned.merged_markers_.empty() || pruned.merged_markers_.back() < marker) {
      pruned.merged_markers_.push_back(marker);
    }
  }
  pruned.pruned_node_count_ = pruned_node_count_ + removed;
  return pruned;
}

ProfileModel ProfileModel::FilteredByCategory(Category category) const {
  ProfileModel filtered(unit_, strings_);
  ForEachStack([&](std::span<const FrameId> frames, Category stack_category, uint64_t weight) {
    if (stack_category == category) filtered.AddStack(frames, category, weight);
  });
  return filtered;
}

std::vector<NodeId> ProfileModel::SortedChildren(NodeId node) const {
  std::vector<NodeId> children;
  for (NodeId child = Stored(node).first_child; child != kNoNode;
       child = Stored(child).next_sibling) {
    children.push_back(child);
  }
  std::sort(children.begin(), children.end(), [this](NodeId a, NodeId b) {
    return strings_->Get(Stored(a).frame) < strings_->Get(Stored(b).frame);
  });
  return children;
}

void ProfileModel::ForEachStack(const StackVisitor& visit) const {
  struct Pending {
    std::vector<NodeId> children;
    size_t next = 0;
  };
  std::vector<FrameId> path;
  std::vector<Pending> pending;
  auto enter = [&](NodeId node) {
    // In category order, not the order the weights came in: reading a written profile back adds
    // them in the written order, and writing it again must give the same text.
    CategoryWeights weights{};
    AddSelfWeightsTo(node, weights);
    for (int i = 0; i < kCategoryCount; ++i) {
      if (weights[i] > 0) visit(path, static_cast<Category>(i), weights[i]);
    }
    pending.push_back({SortedChildren(node), 0});
  };
  enter(kRootNode);
  while (!pending.empty()) {
    Pending& top = pending.back();
    if (top.next == top.children.size()) {
      pending.pop_back();
      if (!path.empty()) path.pop_back();
      continue;
    }
    NodeId child = top.children[top.next++];
    path.push_back(Stored(child).frame);
    enter(child);  // may reallocate `pending`; `top` is not used after this
  }
}

std::vector<Category> ProfileModel::DominantCategories(std::span<const NodeId> drawn_apart) const {
  std::vector<Category> dominant(node_count_, Category::kOther);
  // accumulated[d] holds the category weights of the node currently open at depth d.
  std::vector<CategoryWeights> accumulated;
  std::vector<std::pair<NodeId, bool>> work = {{kRootNode, false}};
  while (!work.empty()) {
    auto [node, leaving] = work.back();
    work.pop_back();
    uint32_t depth = Stored(node).depth;
    if (!leaving) {
      if (accumulated.size() <= depth) accumulated.resize(depth + 1);
      accumulated[depth].fill(0);
      AddSelfWeightsTo(node, accumulated[depth]);
      work.push_back({node, true});
      for (NodeId child = Stored(node).first_child; child != kNoNode;
           child = Stored(child).next_sibling) {
        work.push_back({child, false});
      }
      continue;
    }
    const CategoryWeights& weights = accumulated[depth];
    int best = CategoryIndex(Category::kOther);
    uint64_t best_weight = 0;
    for (int i = 0; i < kCategoryCount; ++i) {
      if (weights[i] > best_weight) {
        best = i;
        best_weight = weights[i];
      }
    }
    dominant[node] = static_cast<Category>(best);
    if (depth > 0 && !std::binary_search(drawn_apart.begin(), drawn_apart.end(), node)) {
      for (int i = 0; i < kCategoryCount; ++i) {
        accumulated[depth - 1][i] = SaturatingAdd(accumulated[depth - 1][i], weights[i]);
      }
    }
  }
  return dominant;
}

std::vector<FrameId> ProfileModel::PathTo(NodeId node) const {
  std::vector<FrameId> path;
  for (NodeId walk = node; walk != kRootNode && walk != kNoNode; walk = Stored(walk).parent) {
    path.push_back(Stored(walk).frame);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace sparkprof::flamegraph
