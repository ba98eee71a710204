#include "analyzer/report/profile_view.h"

#include <algorithm>
#include <cstdio>

#include "common/human_format.h"

namespace sparkprof::report {

std::vector<StageProfileView> StageProfileViews(const profile::ApplicationProfile& profile) {
  std::vector<StageProfileView> views;
  for (const profile::StageProfile& stage : profile.stages) {
    if (stage.task_ns == 0 && stage.python_ns == 0 && stage.python_off_cpu_ns == 0) continue;
    StageProfileView view;
    view.stage = &stage;
    for (int c = 0; c < kCategoryCount; ++c) {
      const auto category = static_cast<Category>(c);
      if (stage.category_ns[c] == 0 || IsPythonWorker(category)) continue;
      view.categories.push_back({std::string(CategoryName(category)), stage.category_ns[c],
                                 stage.Share(category), IsOffCpu(category)});
    }
    std::stable_sort(view.categories.begin(), view.categories.end(),
                     [](const CategoryShare& a, const CategoryShare& b) { return a.ns > b.ns; });
    views.push_back(std::move(view));
  }
  std::stable_sort(views.begin(), views.end(),
                   [](const StageProfileView& a, const StageProfileView& b) {
                     return a.stage->task_ns > b.stage->task_ns;
                   });
  if (views.size() > kProfileStagesShown) views.resize(kProfileStagesShown);
  return views;
}

std::string CategorySharesText(const StageProfileView& view, size_t count) {
  std::string text;
  size_t shown = 0;
  for (const CategoryShare& share : view.categories) {
    if (share.share < 0.01 || shown++ >= count) break;
    text += (text.empty() ? "" : ", ") + share.name + " " + Percent(share.share);
  }
  return text.empty() ? "-" : text;
}

std::string PythonWorkersText(const profile::StageProfile& stage) {
  const uint64_t worker_ns = stage.python_ns + stage.python_off_cpu_ns;
  if (worker_ns == 0) return "";
  std::string text =
      HumanDurationMs(static_cast<int64_t>(stage.python_ns / 1'000'000)) + " on CPU, " +
      HumanDurationMs(static_cast<int64_t>(stage.python_off_cpu_ns / 1'000'000)) + " off CPU";
  if (!stage.top_python.empty()) {
    const profile::PythonFrameTime& hot = stage.top_python.front();
    text += "; most in " + hot.function + " (" +
            Percent(static_cast<double>(hot.ns) / static_cast<double>(worker_ns)) +
            ", hottest line " + hot.frame + ")";
  }
  return text;
}

std::string SlowestTaskText(const std::vector<diagnosis::StageTaskDecomposition>& decompositions,
                            const profile::StageProfile& stage) {
  const diagnosis::StageTaskDecomposition* tasks =
      diagnosis::FindTaskDecomposition(decompositions, stage.stage_id, stage.stage_attempt);
  return tasks != nullptr ? diagnosis::SlowestVsMedianText(*tasks) : "";
}

std::string ProfileSourceText(const profile::ApplicationProfile& profile) {
  std::string modes;
  for (const std::string& mode : profile.modes) modes += (modes.empty() ? "" : ", ") + mode;
  char text[200];
  std::snprintf(text, sizeof(text), "mode %s every %s, %llu executor(s), %llu batch(es)",
                modes.empty() ? "?" : modes.c_str(),
                HumanDurationMs(profile.interval_ns / 1'000'000).c_str(),
                static_cast<unsigned long long>(profile.executors),
                static_cast<unsigned long long>(profile.batches_read));
  std::string result = text;
  if (profile.batches_skipped > 0) {
    result += ", " + std::to_string(profile.batches_skipped) + " unreadable batch(es) skipped";
  }
  if (!profile.has_off_cpu()) {
    result += "; CPU samples only: time off CPU (waits) is not in this profile";
  }
  return result;
}

}  // namespace sparkprof::report
