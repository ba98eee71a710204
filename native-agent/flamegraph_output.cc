#include "native-agent/flamegraph_output.h"

#include <vector>

#include "flamegraph/html_renderer.h"
#include "flamegraph/profile_model.h"

namespace sparkprof::agent {

Status WriteFlameGraphHtml(const std::string& path, const Drain& drain,
                           const ReportContext& context) {
  flamegraph::ProfileModel model(flamegraph::WeightUnit::kSamples);
  const Profile& profile = drain.cumulative();
  std::vector<flamegraph::FrameId> frames;
  for (const auto& [key, count] : profile.samples()) {
    frames.clear();
    for (uint32_t frame : profile.stacks()[key.stack]) {
      frames.push_back(model.InternFrame(drain.strings().Get(frame)));
    }
    auto category = flamegraph::CategoryFromSchemaValue(static_cast<uint32_t>(count.category));
    model.AddStack(frames, category.value_or(flamegraph::Category::kOther), count.samples);
  }
  // Keep the page small: drop subtrees under 0.05% of all samples.
  flamegraph::ProfileModel pruned = model.Pruned(model.total_weight() / 2000);
  flamegraph::HtmlRenderOptions options;
  options.title = "sparkprof agent profile (pid " + std::to_string(context.pid) + ")";
  options.subtitle = context.mode + " mode, " + std::to_string(context.interval_ns / 1000) +
                     " us interval, " + std::to_string(profile.total_samples()) + " samples";
  std::string html;
  flamegraph::RenderHtml(pruned, options, nullptr, html);
  return WriteFileAtomically(path, html);
}

}  // namespace sparkprof::agent
