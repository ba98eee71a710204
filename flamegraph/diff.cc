#include "flamegraph/diff.h"

namespace sparkprof::flamegraph {

double DiffProfile::NormalizedDelta(const ProfileModel& after, NodeId node) const {
  double after_share = after_grand_total == 0
                           ? 0.0
                           : static_cast<double>(after.node(node).total) / after_grand_total;
  double before_share =
      before_grand_total == 0 ? 0.0 : static_cast<double>(before_totals[node]) / before_grand_total;
  return after_share - before_share;
}

DiffProfile ComputeDiff(const ProfileModel& before, const ProfileModel& after) {
  DiffProfile diff;
  diff.before_grand_total = before.total_weight();
  diff.after_grand_total = after.total_weight();
  diff.before_totals.assign(after.node_count(), 0);
  // matched[n]: the `before` node with the same call path as `after` node n, or kNoNode.
  std::vector<NodeId> matched(after.node_count(), kNoNode);
  matched[kRootNode] = kRootNode;
  diff.before_totals[kRootNode] = before.total_weight();
  // after frame id -> before frame id (kNoNode when `before` never saw the name).
  constexpr FrameId kUnknown = UINT32_MAX - 1;
  std::vector<FrameId> translated(after.strings().size(), kUnknown);
  uint64_t matched_child_weight_sum = 0;
  // Parents precede children in id order, so one pass sees each parent's match first.
  for (NodeId node = 1; node < after.node_count(); ++node) {
    NodeId before_parent = matched[after.node(node).parent];
    if (before_parent == kNoNode) continue;
    if (after.IsMergedMarker(node)) continue;  // compared with what `before` has left, below
    FrameId frame = after.node(node).frame;
    if (translated[frame] == kUnknown) {
      auto found = before.strings().Find(after.FrameName(frame));
      translated[frame] = found ? *found : kNoNode;
    }
    if (translated[frame] == kNoNode) continue;
    NodeId before_node = before.FindChild(before_parent, translated[frame]);
    if (before_node == kNoNode) continue;
    matched[node] = before_node;
    diff.before_totals[node] = before.node(before_node).total;
  }
  // Vanished weight: children of matched `before` nodes that no `after` node matched.
  std::vector<bool> before_matched(before.node_count(), false);
  for (NodeId node = 0; node < after.node_count(); ++node) {
    if (matched[node] != kNoNode) before_matched[matched[node]] = true;
  }
  for (NodeId node = 1; node < before.node_count(); ++node) {
    if (!before_matched[node] && before_matched[before.node(node).parent]) {
      matched_child_weight_sum = SaturatingAdd(matched_child_weight_sum, before.node(node).total);
    }
  }
  diff.before_only_weight = matched_child_weight_sum;
  // A "[N frames ... merged]" marker stands for the narrow children of its parent: compare it
  // with what `before` has under the same parent beyond the matched children and its own self.
  for (NodeId node = 1; node < after.node_count(); ++node) {
    if (!after.IsMergedMarker(node)) continue;
    NodeId parent = after.node(node).parent;
    if (matched[parent] == kNoNode) continue;
    ProfileNode before_parent = before.node(matched[parent]);
    uint64_t accounted = before_parent.self;
    for (NodeId child = after.node(parent).first_child; child != kNoNode;
         child = after.node(child).next_sibling) {
      if (child != node) accounted = SaturatingAdd(accounted, diff.before_totals[child]);
    }
    diff.before_totals[node] =
        before_parent.total > accounted ? before_parent.total - accounted : 0;
  }
  return diff;
}

}  // namespace sparkprof::flamegraph
