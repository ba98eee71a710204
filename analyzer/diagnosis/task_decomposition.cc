#include "analyzer/diagnosis/task_decomposition.h"

#include <algorithm>
#include <utility>

#include "analyzer/diagnosis/diagnosis_input.h"

namespace sparkprof::diagnosis {

namespace {

// Task time's categories (diagnosis::Category is a finding's).
using TimeCategory = ::sparkprof::Category;

struct Candidate {
  int64_t duration_ms;
  int64_t task_id;
  const model::TaskAttempt* task;
};

bool Slower(const Candidate& a, const Candidate& b) {
  return a.duration_ms != b.duration_ms ? a.duration_ms > b.duration_ms : a.task_id < b.task_id;
}

DecomposedTask Decompose(const model::ApplicationModel& model, const model::TaskAttempt& task,
                         const profile::StageProfile& stage) {
  DecomposedTask out;
  out.task_id = task.task_id;
  out.index = task.index;
  out.attempt = task.attempt;
  if (task.executor != model::kNone) out.executor = model.strings.Get(task.executor);
  out.duration_ms = std::max<int64_t>(task.duration_ms(), 0);
  if (const profile::TaskTime* time = stage.FindTask(task.task_id)) {
    out.sampled = true;
    out.time = *time;
  } else {
    out.time.task_attempt_id = task.task_id;
  }
  return out;
}

std::string Ms(uint64_t ns) { return HumanDurationMs(static_cast<int64_t>(ns / 1'000'000)); }

// "task 412 (executor 3)"
std::string TaskName(const DecomposedTask& task) {
  std::string name = "task " + std::to_string(task.task_id);
  if (!task.executor.empty()) name += " (executor " + task.executor + ")";
  return name;
}

uint64_t PythonWorkerNs(const DecomposedTask& task) {
  const profile::CategoryNs& ns = task.time.category_ns;
  return flamegraph::SaturatingAdd(ns[CategoryIndex(TimeCategory::kPython)],
                                   ns[CategoryIndex(TimeCategory::kPythonOffCpu)]);
}

}  // namespace

std::vector<StageTaskDecomposition> DecomposeTasks(const model::ApplicationModel& model,
                                                   const profile::ApplicationProfile& profile) {
  std::vector<StageTaskDecomposition> out;
  std::vector<Candidate> candidates;
  for (const profile::StageProfile& stage : profile.stages) {
    auto found = model.stages.find({stage.stage_id, stage.stage_attempt});
    if (found == model.stages.end()) continue;
    candidates.clear();
    auto [begin, end] = model.TasksOf(found->second);
    for (const uint32_t* it = begin; it != end; ++it) {
      const model::TaskAttempt& task = model.tasks[*it];
      if (task.end != model::TaskEndKind::kSuccess) continue;
      candidates.push_back({std::max<int64_t>(task.duration_ms(), 0), task.task_id, &task});
    }
    if (candidates.empty()) continue;
    StageTaskDecomposition decomposition;
    decomposition.stage_id = stage.stage_id;
    decomposition.stage_attempt = stage.stage_attempt;
    decomposition.successful_tasks = static_cast<int64_t>(candidates.size());
    decomposition.profile_left_tasks_out = profile.task_rows_left_out > 0;
    // The median: nearest rank ceil(n / 2) in ascending order = position n - ceil(n / 2) in
    // descending order (Slower), selected in linear time.
    const size_t n = candidates.size();
    const size_t median_position = n - (n + 1) / 2;
    std::nth_element(candidates.begin(),
                     candidates.begin() + static_cast<ptrdiff_t>(median_position), candidates.end(),
                     Slower);
    decomposition.median = Decompose(model, *candidates[median_position].task, stage);
    const size_t shown = std::min(kSlowestTasksShown, n);
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(shown),
                      candidates.end(), Slower);
    for (size_t i = 0; i < shown; ++i) {
      decomposition.slowest.push_back(Decompose(model, *candidates[i].task, stage));
    }
    out.push_back(std::move(decomposition));
  }
  return out;
}

const StageTaskDecomposition* FindTaskDecomposition(
    const std::vector<StageTaskDecomposition>& decompositions, int32_t stage_id,
    int32_t stage_attempt) {
  // DecomposeTasks keeps the profile's order: by (stage id, attempt).
  auto it = std::lower_bound(
      decompositions.begin(), decompositions.end(), std::make_pair(stage_id, stage_attempt),
      [](const StageTaskDecomposition& d, const std::pair<int32_t, int32_t>& wanted) {
        return std::make_pair(d.stage_id, d.stage_attempt) < wanted;
      });
  return it != decompositions.end() && it->stage_id == stage_id &&
                 it->stage_attempt == stage_attempt
             ? &*it
             : nullptr;
}

std::vector<CategoryExcess> LargestExcess(const DecomposedTask& slow, const DecomposedTask& median,
                                          size_t count) {
  std::vector<CategoryExcess> excess;
  for (int c = 0; c < kCategoryCount; ++c) {
    const auto category = static_cast<TimeCategory>(c);
    if (IsPythonWorker(category)) continue;
    const uint64_t slow_ns = slow.time.category_ns[c];
    const uint64_t median_ns = median.time.category_ns[c];
    if (slow_ns > median_ns) excess.push_back({category, slow_ns - median_ns});
  }
  std::stable_sort(
      excess.begin(), excess.end(),
      [](const CategoryExcess& a, const CategoryExcess& b) { return a.extra_ns > b.extra_ns; });
  std::vector<CategoryExcess> shown;
  for (const CategoryExcess& item : excess) {
    if (shown.size() >= count) break;
    if (!shown.empty() && item.extra_ns < shown.front().extra_ns / 4) break;
    shown.push_back(item);
  }
  return shown;
}

std::string SlowestVsMedianText(const StageTaskDecomposition& d) {
  if (d.slowest.empty()) return "";
  const DecomposedTask& slow = d.slowest.front();
  const DecomposedTask& median = d.median;
  if (slow.task_id == median.task_id || slow.duration_ms <= median.duration_ms) return "";
  std::string text = TaskName(slow) + " ran " + HumanDurationMs(slow.duration_ms) +
                     " against a median of " + HumanDurationMs(median.duration_ms) + " (task " +
                     std::to_string(median.task_id) + ")";
  if (!slow.sampled) {
    return text + "; the profile holds no samples of it" +
           (d.profile_left_tasks_out ? " (some tasks are beyond its per-task limit)" : "");
  }
  const std::vector<CategoryExcess> excess = LargestExcess(slow, median);
  if (excess.empty()) {
    text += ": no category holds more of its sampled time than the median task's";
  } else {
    for (size_t i = 0; i < excess.size(); ++i) {
      text += (i == 0 ? ": " : ", ") + Ms(excess[i].extra_ns) +
              (i == 0 ? " more of it in " : " more in ") +
              std::string(::sparkprof::CategoryName(excess[i].category));
    }
  }
  const uint64_t slow_python = PythonWorkerNs(slow), median_python = PythonWorkerNs(median);
  if (slow_python > median_python &&
      (excess.empty() || excess.front().category == TimeCategory::kPythonWait)) {
    text += "; its Python worker ran " + Ms(slow_python - median_python) + " more";
  }
  if (!median.sampled) text += " (the median task has no samples)";
  return text;
}

std::string TaskCategoriesText(const DecomposedTask& task, size_t count) {
  if (!task.sampled) return "no samples";
  std::vector<std::pair<uint64_t, TimeCategory>> categories;
  for (int c = 0; c < kCategoryCount; ++c) {
    const auto category = static_cast<TimeCategory>(c);
    if (IsPythonWorker(category) || task.time.category_ns[c] == 0) continue;
    categories.push_back({task.time.category_ns[c], category});
  }
  std::stable_sort(categories.begin(), categories.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text;
  for (size_t i = 0; i < categories.size() && i < count; ++i) {
    text += (i == 0 ? "" : ", ") + std::string(::sparkprof::CategoryName(categories[i].second)) +
            " " + Ms(categories[i].first);
  }
  const uint64_t python = PythonWorkerNs(task);
  if (python > 0) text += std::string(text.empty() ? "" : "; ") + "Python worker " + Ms(python);
  return text.empty() ? "no samples" : text;
}

}  // namespace sparkprof::diagnosis
