#include "driver-aggregator/stage_diff.h"

#include <cstdio>
#include <memory>

#include "flamegraph/diff.h"
#include "flamegraph/html_renderer.h"
#include "flamegraph/profile_file_reader.h"
#include "flamegraph/string_table.h"

namespace sparkprof::driver {
namespace {

std::string Name(StageAttempt stage) {
  return "stage " + std::to_string(stage.stage_id) + " (attempt " + std::to_string(stage.attempt) +
         ")";
}

// The two attempts' models, sharing one string table; every other attempt's samples are dropped.
struct TwoStages {
  StageAttempt before_id;
  StageAttempt after_id;
  std::shared_ptr<flamegraph::StringTable> strings = std::make_shared<flamegraph::StringTable>();
  flamegraph::ProfileModel before{flamegraph::WeightUnit::kNanoseconds, strings};
  flamegraph::ProfileModel after{flamegraph::WeightUnit::kNanoseconds, strings};

  static flamegraph::ProfileModel* Select(void* context, int32_t stage_id, int32_t attempt) {
    auto* self = static_cast<TwoStages*>(context);
    if (stage_id == self->after_id.stage_id && attempt == self->after_id.attempt) {
      return &self->after;
    }
    if (stage_id == self->before_id.stage_id && attempt == self->before_id.attempt) {
      return &self->before;
    }
    return nullptr;
  }
};

}  // namespace

Result<std::string> RenderStageDiff(const flamegraph::ProfileModel& before, StageAttempt before_id,
                                    const flamegraph::ProfileModel& after, StageAttempt after_id) {
  for (const auto& [model, id] : {std::pair{&before, before_id}, std::pair{&after, after_id}}) {
    if (model->total_weight() == 0) return NotFound("no samples of " + Name(id));
  }
  // As the stage pages: subtrees under 0.05% of the drawn attempt's time are merged.
  flamegraph::ProfileModel pruned = after.Pruned(after.total_weight() / 2000);
  const flamegraph::DiffProfile diff = flamegraph::ComputeDiff(before, pruned);
  flamegraph::HtmlRenderOptions render;
  render.title = "sparkprof diff: " + Name(before_id) + " → " + Name(after_id);
  char subtitle[160];
  std::snprintf(subtitle, sizeof(subtitle),
                "%.3f s sampled task time before, %.3f s after; red grew, blue shrank "
                "(shares of each side's total)",
                static_cast<double>(before.total_weight()) / 1e9,
                static_cast<double>(after.total_weight()) / 1e9);
  render.subtitle = subtitle;
  std::string html;
  flamegraph::RenderHtml(pruned, render, &diff, html);
  return html;
}

Result<std::string> RenderStageDiffFromProfile(std::string_view profile_bytes,
                                               const std::string& source_name,
                                               StageAttempt before_id, StageAttempt after_id) {
  if (!flamegraph::LooksLikeProfileFile(profile_bytes)) {
    return InvalidArgument(source_name + ": not a sparkprof profile");
  }
  TwoStages stages;
  stages.before_id = before_id;
  stages.after_id = after_id;
  flamegraph::ProfileFileReadOptions options;
  options.source_name = source_name;
  options.weight = flamegraph::WeightUnit::kNanoseconds;
  uint64_t untagged_ns = 0;
  flamegraph::ReadReport report;
  SPARKPROF_RETURN_IF_ERROR(flamegraph::ReadProfileFileByStage(
      profile_bytes, options, &TwoStages::Select, &stages, untagged_ns, report, nullptr));
  return RenderStageDiff(stages.before, before_id, stages.after, after_id);
}

}  // namespace sparkprof::driver
