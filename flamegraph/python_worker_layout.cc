#include "flamegraph/python_worker_layout.h"

#include <algorithm>
#include <optional>

namespace sparkprof::flamegraph {

DrawnWidths ComputeDrawnWidths(const ProfileModel& model) {
  const size_t count = model.node_count();
  DrawnWidths drawn;
  drawn.width.assign(count, 0.0);
  std::optional<FrameId> worker_frame = model.strings().Find(kPythonWorkerFrame);

  // Top-down (a child's id is larger than its parent's): the subtree each node is in, if any.
  std::vector<uint32_t> subtree_of(count, UINT32_MAX);  // index into python_workers
  for (NodeId id = 1; id < count; ++id) {
    ProfileNode node = model.node(id);
    subtree_of[id] = subtree_of[node.parent];
    if (subtree_of[id] != UINT32_MAX || !worker_frame || node.frame != *worker_frame) continue;
    PythonWorkerSubtree subtree{.node = id, .time = node.total};
    model.ForEachSelfWeight(node.parent, [&](Category category, uint64_t weight) {
      if (category == Category::kPythonWait) subtree.wait = weight;
    });
    subtree.within_wait = subtree.wait > 0 && subtree.time > 0;
    subtree_of[id] = static_cast<uint32_t>(drawn.python_workers.size());
    drawn.python_workers.push_back(subtree);
  }

  // Bottom-up: a node outside the scaled subtrees is as wide as its self weight and its
  // children's widths, a scaled subtree's top adding nothing (it lies in its parent's wait).
  for (NodeId id = static_cast<NodeId>(count); id-- > 0;) {
    ProfileNode node = model.node(id);
    const PythonWorkerSubtree* subtree =
        subtree_of[id] == UINT32_MAX ? nullptr : &drawn.python_workers[subtree_of[id]];
    if (subtree != nullptr && subtree->within_wait) {
      // Shrunk to fit a shorter wait, never stretched: a worker that worked 0.2 s of a 1 s wait
      // is drawn 0.2 s wide (the rest of the wait is the worker waiting for the JVM or idle).
      const double scale =
          std::min(static_cast<double>(subtree->wait) / static_cast<double>(subtree->time), 1.0);
      const double scaled = static_cast<double>(node.total) * scale;
      drawn.width[id] = std::min(scaled, static_cast<double>(subtree->wait));
    } else {
      drawn.width[id] += static_cast<double>(node.self);
    }
    if (id == kRootNode) break;
    bool drawn_within_parent = subtree != nullptr && subtree->node == id && subtree->within_wait;
    if (!drawn_within_parent) drawn.width[node.parent] += drawn.width[id];
  }
  return drawn;
}

}  // namespace sparkprof::flamegraph
