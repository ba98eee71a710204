// How wide the flame graph draws each node when a Python worker's samples hang in the tree.
//
// The agent puts a PySpark worker's stacks below a frame "[python worker]" under the JVM frame in
// which the task waited on the worker. The worker's time overlaps that frame's python_wait time
// (the thread waits while the worker works), so drawn at its real width the subtree would make
// the frame, and every frame above it, as wide as the wait *plus* the worker's time. Instead the
// subtree is drawn within the wait: it adds nothing to its ancestors' widths and each of its frames
// is drawn `its time x min(wait / subtree time, 1)` wide (shrunk to fit the wait, never
// stretched beyond its real time), in the gap the
// wait leaves as the frame's self time. A frame with no python_wait time of its own has no wait
// to draw within: its worker subtree is drawn at its real width beside, as before.
//
// Only the drawing changes: the model, its totals and every non-graphical output (collapsed text,
// speedscope, reports) keep the real weights, and so do the viewer's tooltips and legend.
#pragma once

#include <cstdint>
#include <vector>

#include "flamegraph/profile_model.h"

namespace sparkprof::flamegraph {

// One "[python worker]" subtree and where it is drawn.
struct PythonWorkerSubtree {
  NodeId node = kNoNode;     // the "[python worker]" node
  uint64_t wait = 0;         // its parent's own python_wait weight
  uint64_t time = 0;         // the subtree's real total (python + python_off_cpu)
  bool within_wait = false;  // drawn to scale within `wait`; false: at its real width beside
};

struct DrawnWidths {
  // Per node id, in weight units: the real total outside worker subtrees less the worker time
  // drawn within waits below it; inside a subtree drawn within its wait, the scaled width.
  std::vector<double> width;
  std::vector<PythonWorkerSubtree> python_workers;  // in node id order
};

DrawnWidths ComputeDrawnWidths(const ProfileModel& model);

}  // namespace sparkprof::flamegraph
