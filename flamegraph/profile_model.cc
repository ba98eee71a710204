#include "flamegraph/profile_model.h"

#include <algorithm>

namespace sparkprof::flamegraph {

std::string_view WeightUnitName(WeightUnit unit) {
  return unit == WeightUnit::kNanoseconds ? "nanoseconds" : "samples";
}

ProfileModel::ProfileModel(WeightUnit unit) : ProfileModel(unit, std::make_shared<StringTable>()) {}

ProfileModel::ProfileModel(WeightUnit unit, std::shared_ptr<StringTable> strings)
    : unit_(unit), strings_(std::move(strings)) {
  nodes_.emplace_back();  // the root
}

NodeId ProfileModel::FindChild(NodeId parent, FrameId frame) const {
  return child_index_.Find(ChildKey(parent, frame));
}

NodeId ProfileModel::ChildFor(NodeId parent, FrameId frame) {
  auto id = static_cast<NodeId>(nodes_.size());
  bool inserted = false;
  NodeId found = child_index_.FindOrInsert(ChildKey(parent, frame), id, inserted);
  if (!inserted) return found;
  ProfileNode child;
  child.frame = frame;
  child.parent = parent;
  child.depth = nodes_[parent].depth + 1;
  child.next_sibling = nodes_[parent].first_child;
  nodes_.push_back(child);
  nodes_[parent].first_child = id;
  return id;
}

void ProfileModel::AddSelfWeight(NodeId node, Category category, uint64_t weight) {
  ProfileNode& target = nodes_[node];
  target.self = SaturatingAdd(target.self, weight);
  for (uint32_t i = target.first_self_weight; i != kNoSelfWeight; i = self_weights_[i].next) {
    if (self_weights_[i].category == category) {
      self_weights_[i].weight = SaturatingAdd(self_weights_[i].weight, weight);
      return;
    }
  }
  self_weights_.push_back({weight, target.first_self_weight, category});
  target.first_self_weight = static_cast<uint32_t>(self_weights_.size() - 1);
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
  if (nodes_.size() > max_nodes || missing > max_nodes - nodes_.size()) return kNoNode;
  for (; i < frames.size(); ++i) {
    node = ChildFor(node, frames[i]);
    last_frames_.push_back(frames[i]);
    last_nodes_.push_back(node);
  }
  return node;
}

void ProfileModel::AddWeight(NodeId node, Category category, uint64_t weight) {
  if (weight == 0) return;
  for (NodeId walk = node; walk != kNoNode; walk = nodes_[walk].parent) {
    nodes_[walk].total = SaturatingAdd(nodes_[walk].total, weight);
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

ProfileModel ProfileModel::Pruned(uint64_t min_total) const {
  ProfileModel pruned(unit_, strings_);
  pruned.category_totals_ = category_totals_;
  pruned.nodes_[kRootNode].total = nodes_[kRootNode].total;
  std::vector<NodeId> new_id(nodes_.size(), kNoNode);
  new_id[kRootNode] = kRootNode;
  uint64_t removed = 0;
  // Parents have smaller ids than their children, so one pass in id order sees parents first.
  for (NodeId old_id = 0; old_id < nodes_.size(); ++old_id) {
    const ProfileNode& old_node = nodes_[old_id];
    NodeId target;
    if (old_id == kRootNode) {
      target = kRootNode;
    } else {
      NodeId new_parent = new_id[old_node.parent];
      if (new_parent == kNoNode || old_node.total < min_total) {
        ++removed;
        continue;
      }
      target = pruned.ChildFor(new_parent, old_node.frame);
      pruned.nodes_[target].total = old_node.total;
      new_id[old_id] = target;
    }
    ForEachSelfWeight(old_id, [&](Category category, uint64_t weight) {
      pruned.AddSelfWeight(target, category, weight);
    });
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
  for (NodeId child = nodes_[node].first_child; child != kNoNode;
       child = nodes_[child].next_sibling) {
    children.push_back(child);
  }
  std::sort(children.begin(), children.end(), [this](NodeId a, NodeId b) {
    return strings_->Get(nodes_[a].frame) < strings_->Get(nodes_[b].frame);
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
    ForEachSelfWeight(node, [&](Category category, uint64_t weight) {
      if (weight > 0) visit(path, category, weight);
    });
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
    path.push_back(nodes_[child].frame);
    enter(child);  // may reallocate `pending`; `top` is not used after this
  }
}

std::vector<Category> ProfileModel::DominantCategories() const {
  std::vector<Category> dominant(nodes_.size(), Category::kOther);
  // accumulated[d] holds the category weights of the node currently open at depth d.
  std::vector<CategoryWeights> accumulated;
  std::vector<std::pair<NodeId, bool>> work = {{kRootNode, false}};
  while (!work.empty()) {
    auto [node, leaving] = work.back();
    work.pop_back();
    uint32_t depth = nodes_[node].depth;
    if (!leaving) {
      if (accumulated.size() <= depth) accumulated.resize(depth + 1);
      accumulated[depth].fill(0);
      ForEachSelfWeight(node, [&](Category category, uint64_t weight) {
        accumulated[depth][CategoryIndex(category)] += weight;
      });
      work.push_back({node, true});
      for (NodeId child = nodes_[node].first_child; child != kNoNode;
           child = nodes_[child].next_sibling) {
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
    if (depth > 0) {
      for (int i = 0; i < kCategoryCount; ++i) {
        accumulated[depth - 1][i] = SaturatingAdd(accumulated[depth - 1][i], weights[i]);
      }
    }
  }
  return dominant;
}

std::vector<FrameId> ProfileModel::PathTo(NodeId node) const {
  std::vector<FrameId> path;
  for (NodeId walk = node; walk != kRootNode && walk != kNoNode; walk = nodes_[walk].parent) {
    path.push_back(nodes_[walk].frame);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace sparkprof::flamegraph
