// Test helper: the node of `model` at a root-first call path, or kNoNode.
#pragma once

#include <string_view>
#include <vector>

#include "flamegraph/profile_model.h"

namespace sparkprof::flamegraph {

inline NodeId FindPath(const ProfileModel& model, const std::vector<std::string_view>& path) {
  NodeId node = kRootNode;
  for (std::string_view name : path) {
    auto frame = model.strings().Find(name);
    node = frame ? model.FindChild(node, *frame) : kNoNode;
    if (node == kNoNode) return kNoNode;
  }
  return node;
}

}  // namespace sparkprof::flamegraph
