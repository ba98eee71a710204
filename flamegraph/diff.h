// Differential flame graphs ("stage 5 before and after the fix"): the shape and widths come from
// the `after` profile; each node also carries the weight the same call path had `before`.
// Colour follows the normalised change: each side is divided by its own grand total first, so a
// profile with twice the samples does not look twice as hot.
#pragma once

#include <cstdint>
#include <vector>

#include "flamegraph/profile_model.h"

namespace sparkprof::flamegraph {

struct DiffProfile {
  // Indexed by NodeId of the `after` model the diff was computed for.
  std::vector<uint64_t> before_totals;
  uint64_t before_grand_total = 0;
  uint64_t after_grand_total = 0;
  // Weight of `before` under call paths that `after` does not have at all (vanished frames).
  uint64_t before_only_weight = 0;

  // after share minus before share of the grand totals, in [-1, 1]: positive means the path grew.
  double NormalizedDelta(const ProfileModel& after, NodeId node) const;
};

// Matches the nodes of `after` (often already pruned) to `before` by call path (frame names).
DiffProfile ComputeDiff(const ProfileModel& before, const ProfileModel& after);

}  // namespace sparkprof::flamegraph
