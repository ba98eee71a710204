// Renders a ProfileModel as one self-contained interactive HTML file: data as JSON in a
// <script type="application/json"> block, the viewer's JavaScript and CSS inline, and a
// Content-Security-Policy that forbids every network fetch.
//
// Viewer: click to zoom, reset (button or Escape), substring/regex search with matched share,
// hover tooltip (frame, weight, share of total and of parent, self, category), category colours
// with legend and per-category totals, icicle toggle, colour by category or frame kind. A Python
// worker's "[python worker]" subtree is drawn within the wait it overlaps (python_worker_layout.h).
#pragma once

#include <cstdint>
#include <string>

#include "flamegraph/diff.h"
#include "flamegraph/profile_model.h"

namespace sparkprof::flamegraph {

struct HtmlRenderOptions {
  std::string title = "sparkprof flame graph";
  std::string subtitle;  // e.g. "stage 7 · category serialization"; shown under the title
};

// Appends the page for `model` (prune it first: every node becomes data in the file). With
// `diff` (computed for this same model), colours show the normalised change instead.
void RenderHtml(const ProfileModel& model, const HtmlRenderOptions& options,
                const DiffProfile* diff, std::string& out);

}  // namespace sparkprof::flamegraph
