#include "flamegraph/html_renderer.h"

#include <charconv>
#include <vector>

#include "flamegraph/escaping.h"
#include "flamegraph/frame_names.h"
#include "flamegraph/python_worker_layout.h"

namespace sparkprof::flamegraph {

// Generated at build time from flamegraph/assets/ (see flamegraph/CMakeLists.txt).
extern const char kFlamegraphViewerJs[];
extern const char kFlamegraphViewerCss[];

namespace {

// A drawn width: at most three decimals, trailing zeros dropped.
void AppendWidth(double width, std::string& out) {
  char buffer[64];
  auto [end, error] =
      std::to_chars(buffer, buffer + sizeof buffer, width, std::chars_format::fixed, 3);
  if (error != std::errc()) {
    out.push_back('0');
    return;
  }
  std::string_view text(buffer, static_cast<size_t>(end - buffer));
  while (text.ends_with('0')) text.remove_suffix(1);
  if (text.ends_with('.')) text.remove_suffix(1);
  out.append(text);
}

// Everything the viewer needs, as compact JSON. Nodes are in depth-first order (children in
// alphabetical order) as five numbers each: name index, category, total, self, child count; the
// viewer rebuilds positions from that, which keeps the file small. Where a node is drawn at
// another width than its total (python_worker_layout.h), "drawn" holds [node, width] pairs and
// "pythonWorkers" [node, wait, 1 within the wait / 0 beside] triples, by index in "nodes".
void AppendProfileJson(const ProfileModel& model, const HtmlRenderOptions& options,
                       const DiffProfile* diff, std::string& out) {
  DrawnWidths drawn = ComputeDrawnWidths(model);
  std::vector<NodeId> drawn_within_waits;
  for (const PythonWorkerSubtree& subtree : drawn.python_workers) {
    if (subtree.within_wait) drawn_within_waits.push_back(subtree.node);
  }
  // A frame's colour is its own time's: the worker time drawn within its wait is not in it.
  std::vector<Category> dominant = model.DominantCategories(drawn_within_waits);
  std::vector<uint32_t> name_index(model.strings().size(), UINT32_MAX);
  std::vector<FrameId> used_frames;
  std::string nodes;
  std::string before;
  std::string drawn_widths;
  std::string python_workers;
  std::vector<const PythonWorkerSubtree*> worker_at(model.node_count(), nullptr);
  for (const PythonWorkerSubtree& subtree : drawn.python_workers) {
    worker_at[subtree.node] = &subtree;
  }
  uint64_t emitted = 0;
  nodes.reserve(model.node_count() * 16);
  int categories_present = 0;
  for (uint64_t weight : model.category_totals()) categories_present += weight > 0 ? 1 : 0;

  struct Pending {
    std::vector<NodeId> children;
    size_t next = 0;
  };
  std::vector<Pending> pending;
  auto emit = [&](NodeId node) {
    std::vector<NodeId> children = model.SortedChildren(node);
    uint32_t name;
    if (node == kRootNode) {
      name = 0;  // "all" is names[0]
    } else {
      FrameId frame = model.node(node).frame;
      if (name_index[frame] == UINT32_MAX) {
        name_index[frame] = static_cast<uint32_t>(used_frames.size() + 1);
        used_frames.push_back(frame);
      }
      name = name_index[frame];
    }
    if (!nodes.empty()) nodes.push_back(',');
    AppendDecimal(name, nodes);
    nodes.push_back(',');
    AppendDecimal(static_cast<uint64_t>(dominant[node]), nodes);
    nodes.push_back(',');
    AppendDecimal(model.node(node).total, nodes);
    nodes.push_back(',');
    AppendDecimal(model.node(node).self, nodes);
    nodes.push_back(',');
    AppendDecimal(children.size(), nodes);
    if (diff != nullptr) {
      if (!before.empty()) before.push_back(',');
      AppendDecimal(diff->before_totals[node], before);
    }
    if (drawn.width[node] != static_cast<double>(model.node(node).total)) {
      if (!drawn_widths.empty()) drawn_widths.push_back(',');
      AppendDecimal(emitted, drawn_widths);
      drawn_widths.push_back(',');
      AppendWidth(drawn.width[node], drawn_widths);
    }
    if (const PythonWorkerSubtree* subtree = worker_at[node]) {
      if (!python_workers.empty()) python_workers.push_back(',');
      AppendDecimal(emitted, python_workers);
      python_workers.push_back(',');
      AppendDecimal(subtree->wait, python_workers);
      python_workers.append(subtree->within_wait ? ",1" : ",0");
    }
    ++emitted;
    pending.push_back({std::move(children), 0});
  };
  emit(kRootNode);
  while (!pending.empty()) {
    Pending& top = pending.back();
    if (top.next == top.children.size()) {
      pending.pop_back();
      continue;
    }
    NodeId child = top.children[top.next++];
    emit(child);
  }

  out.append("{\"version\":1,\"title\":");
  AppendJsonString(options.title, out);
  out.append(",\"subtitle\":");
  AppendJsonString(options.subtitle, out);
  out.append(",\"unit\":");
  AppendJsonString(WeightUnitName(model.unit()), out);
  out.append(",\"colorMode\":");
  AppendJsonString(diff != nullptr ? "diff" : categories_present > 1 ? "category" : "kind", out);
  out.append(",\"prunedNodes\":");
  AppendDecimal(model.pruned_node_count(), out);
  out.append(",\"categories\":[");
  for (int i = 0; i < kCategoryCount; ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonString(CategoryName(static_cast<Category>(i)), out);
  }
  out.append("],\"categoryTotals\":[");
  for (int i = 0; i < kCategoryCount; ++i) {
    if (i > 0) out.push_back(',');
    AppendDecimal(model.category_totals()[i], out);
  }
  out.append("],\"kinds\":[");
  for (int i = 0; i < kFrameKindCount; ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonString(FrameKindName(static_cast<FrameKind>(i)), out);
  }
  out.append("],\"names\":[\"all\"");
  for (FrameId frame : used_frames) {
    out.push_back(',');
    AppendJsonString(ReadableFrameName(model.FrameName(frame)), out);
  }
  out.append("],\"nameKinds\":[0");
  for (FrameId frame : used_frames) {
    out.push_back(',');
    AppendDecimal(static_cast<uint64_t>(ClassifyFrameKind(model.FrameName(frame))), out);
  }
  out.append("],\"nodes\":[");
  out.append(nodes);
  out.push_back(']');
  if (!python_workers.empty()) {
    out.append(",\"drawn\":[");
    out.append(drawn_widths);
    out.append("],\"pythonWorkers\":[");
    out.append(python_workers);
    out.push_back(']');
  }
  if (diff != nullptr) {
    out.append(",\"diff\":{\"beforeTotal\":");
    AppendDecimal(diff->before_grand_total, out);
    out.append(",\"beforeOnly\":");
    AppendDecimal(diff->before_only_weight, out);
    out.append(",\"before\":[");
    out.append(before);
    out.append("]}");
  }
  out.push_back('}');
}

constexpr const char kPageHead[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    // No network at all: everything the page needs is in this file.
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";

constexpr const char kPageBody[] = R"html(
<header>
  <h1 id="title"></h1>
  <div id="subtitle"></div>
  <div id="summary"></div>
</header>
<div id="controls">
  <button id="reset" type="button" disabled>Reset zoom</button>
  <label><input id="inverted" type="checkbox"> Icicle (root at top)</label>
  <label>Colour by <select id="color-mode">
    <option value="category">category</option>
    <option value="kind">frame kind</option>
    <option value="diff">change (diff)</option>
  </select></label>
  <span id="search-box">
    <input id="search" type="search" placeholder="Search frames (Ctrl+F)" spellcheck="false">
    <label><input id="regex" type="checkbox"> regex</label>
    <label><input id="ignore-case" type="checkbox" checked> ignore case</label>
  </span>
  <span id="match-info" aria-live="polite"></span>
</div>
<div id="legend"></div>
<div id="breadcrumb"></div>
<div id="chart"><canvas id="flame"></canvas></div>
<div id="tooltip" hidden></div>
<script type="application/json" id="profile-data">)html";

}  // namespace

void RenderHtml(const ProfileModel& model, const HtmlRenderOptions& options,
                const DiffProfile* diff, std::string& out) {
  out.append(kPageHead);
  AppendHtmlText(options.title, out);
  out.append("</title>\n<style>\n");
  out.append(kFlamegraphViewerCss);
  out.append("</style>\n</head>\n<body>");
  out.append(kPageBody);
  AppendProfileJson(model, options, diff, out);
  out.append("</script>\n<script>\n");
  out.append(kFlamegraphViewerJs);
  out.append("</script>\n</body>\n</html>\n");
}

}  // namespace sparkprof::flamegraph
