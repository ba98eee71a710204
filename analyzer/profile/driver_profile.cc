#include "analyzer/profile/driver_profile.h"
#include "analyzer/profile/spans.h"

#include <algorithm>
#include <climits>
#include <string_view>

#include "analyzer/profile/stage_profiles.h"

namespace sparkprof::profile {
namespace {

constexpr std::string_view kDriverExecutorId = "driver";
constexpr size_t kMaxThreadBytes = 128;
constexpr size_t kMaxFrameBytes = 512;

bool IsJvmOwnCategory(Category category) {
  return category == Category::kGc || category == Category::kJit || category == Category::kVm;
}

bool IsMarker(std::string_view frame) { return frame.empty() || frame.front() == '['; }

// "function (file.py:12)": the sampler's spelling of a Python frame (spark-plugin's
// sparkprof_pyspark_daemon.py and sparkprof_driver.py).
bool IsPythonFrame(std::string_view frame) {
  const size_t open = frame.rfind(" (");
  return open != std::string_view::npos && frame.back() == ')' &&
         frame.find(".py", open) != std::string_view::npos;
}

bool IsLibraryRuntimeFrame(std::string_view frame) {
  for (std::string_view prefix : {"java.", "javax.", "jdk.", "sun.", "com.sun.", "scala."}) {
    if (frame.starts_with(prefix)) return true;
  }
  return false;
}

std::string Bounded(std::string_view text, size_t limit) {
  return std::string(text.substr(0, std::min(text.size(), limit)));
}

}  // namespace

void DriverProfileBuilder::Receive(void* context, const flamegraph::UntaggedSample& sample) {
  static_cast<DriverProfileBuilder*>(context)->Add(sample);
}

uint32_t DriverProfileBuilder::ActivityOf(const flamegraph::UntaggedSample& sample) {
  DriverActivity activity;
  activity.thread = Bounded(sample.thread, kMaxThreadBytes);
  std::string_view chosen;
  for (auto it = sample.frames.rbegin(); it != sample.frames.rend(); ++it) {
    if (IsMarker(*it)) continue;
    const bool python = IsPythonFrame(*it);
    if (python ? IsPythonApplicationFrame(*it) : IsApplicationFrame(*it)) {
      chosen = *it;
      activity.application = true;
      activity.python = python;
      break;
    }
  }
  if (chosen.empty()) {
    for (auto it = sample.frames.rbegin(); it != sample.frames.rend(); ++it) {
      if (!IsMarker(*it) && !IsLibraryRuntimeFrame(*it)) {
        chosen = *it;
        activity.python = IsPythonFrame(*it);
        break;
      }
    }
  }
  if (chosen.empty() && !sample.frames.empty()) chosen = sample.frames.back();
  activity.frame = activity.python ? PythonFunctionName(chosen) : std::string(chosen);
  activity.frame = Bounded(activity.frame.empty() ? "[no frames]" : activity.frame, kMaxFrameBytes);
  activity.off_cpu = IsOffCpu(sample.category) || sample.category == Category::kPythonOffCpu;
  std::string key = activity.thread + '\t' + activity.frame + (activity.off_cpu ? "\t1" : "\t0");
  if (auto found = activity_index_.find(key); found != activity_index_.end()) {
    return found->second;
  }
  if (profile_.activities.size() >= kMaxDriverActivities) {
    if (overflow_activity_ == UINT32_MAX) {
      overflow_activity_ = static_cast<uint32_t>(profile_.activities.size());
      profile_.activities.push_back({"", "[more activities than kept]", false, false, false});
    }
    profile_.activities_left_out_ns += sample.weight_ns;
    return overflow_activity_;
  }
  const auto index = static_cast<uint32_t>(profile_.activities.size());
  profile_.activities.push_back(std::move(activity));
  activity_index_.emplace(std::move(key), index);
  return index;
}

void DriverProfileBuilder::Add(const flamegraph::UntaggedSample& sample) {
  if (sample.executor_id != kDriverExecutorId || sample.weight_ns == 0) return;
  if (sample.end_epoch_ns <= sample.start_epoch_ns) return;  // no window to place it in
  const std::pair<int64_t, int64_t> key{sample.start_epoch_ns, sample.end_epoch_ns};
  auto found = open_.find(key);
  if (found == open_.end()) {
    if (open_.size() >= kMaxDriverWindows) {
      ++profile_.windows_left_out;
      profile_.ns_left_out += sample.weight_ns;
      return;
    }
    found = open_.emplace(key, OpenWindow{}).first;
  }
  OpenWindow& window = found->second;
  if (IsJvmOwnCategory(sample.category)) {
    window.jvm_ns += sample.weight_ns;
    return;
  }
  if (IsOffCpu(sample.category) || sample.category == Category::kPythonOffCpu) {
    window.off_cpu_ns += sample.weight_ns;
  }
  if (sample.category == Category::kPython) {
    window.python_cpu_ns += sample.weight_ns;
  } else if (sample.category == Category::kPythonOffCpu && !sample.frames.empty() &&
             sample.frames.back() == kPythonRunnableFrame) {
    window.python_run_delay_ns += sample.weight_ns;
  }
  window.by_activity[ActivityOf(sample)] += sample.weight_ns;
}

DriverProfile DriverProfileBuilder::Finish(const std::string& source_name,
                                           flamegraph::ReadReport& report) {
  for (auto& [key, open] : open_) {
    DriverWindow window;
    window.start_epoch_ns = key.first;
    window.end_epoch_ns = key.second;
    window.jvm_ns = open.jvm_ns;
    window.off_cpu_ns = open.off_cpu_ns;
    window.python_cpu_ns = open.python_cpu_ns;
    window.python_run_delay_ns = open.python_run_delay_ns;
    for (const auto& [activity, ns] : open.by_activity) {
      window.threads_ns += ns;
      window.top.push_back({activity, ns});
    }
    std::sort(window.top.begin(), window.top.end(), [](const auto& a, const auto& b) {
      return a.ns != b.ns ? a.ns > b.ns : a.activity < b.activity;
    });
    if (window.top.size() > kTopActivities) {
      for (size_t i = kTopActivities; i < window.top.size(); ++i)
        window.other_ns += window.top[i].ns;
      window.top.resize(kTopActivities);
    }
    profile_.windows.push_back(std::move(window));
  }
  open_.clear();
  if (profile_.windows_left_out > 0) {
    report.Warn(source_name + ": the driver's samples of " +
                std::to_string(profile_.windows_left_out) + " batch window(s) past the first " +
                std::to_string(kMaxDriverWindows) + " are left out of the driver's timeline (" +
                std::to_string(profile_.ns_left_out / 1'000'000) + " ms)");
  }
  if (profile_.activities_left_out_ns > 0) {
    report.Warn(source_name + ": the driver's samples name more than " +
                std::to_string(kMaxDriverActivities) + " thread and frame pairs; " +
                std::to_string(profile_.activities_left_out_ns / 1'000'000) +
                " ms of them are counted without their frame");
  }
  return std::move(profile_);
}

DriverTime DriverProfile::Within(std::span<const std::pair<int64_t, int64_t>> intervals_ms) const {
  DriverTime time;
  std::unordered_map<uint32_t, double> by_activity;
  double threads = 0, jvm = 0, off_cpu = 0, other = 0, python_run_delay = 0;
  // The windows' union, for `covered_ms`: the driver JVM's and the Python driver's windows
  // overlap.
  std::vector<std::pair<int64_t, int64_t>> covered;
  for (const DriverWindow& window : windows) {
    const int64_t overlap = OverlapNs(intervals_ms, window.start_epoch_ns, window.end_epoch_ns);
    if (overlap <= 0) continue;
    covered.push_back({window.start_epoch_ns, window.end_epoch_ns});
    const double length = static_cast<double>(window.end_epoch_ns - window.start_epoch_ns);
    const double share = std::min(static_cast<double>(overlap) / length, 1.0);
    threads += share * static_cast<double>(window.threads_ns);
    jvm += share * static_cast<double>(window.jvm_ns);
    off_cpu += share * static_cast<double>(window.off_cpu_ns);
    other += share * static_cast<double>(window.other_ns);
    python_run_delay += share * static_cast<double>(window.python_run_delay_ns);
    for (const DriverActivityTime& entry : window.top) {
      by_activity[entry.activity] += share * static_cast<double>(entry.ns);
      time.python = time.python || activities[entry.activity].python;
    }
  }
  std::sort(covered.begin(), covered.end());
  int64_t covered_ns = 0, reached = INT64_MIN;
  for (const auto& [from, to] : covered) {
    const int64_t start = std::max(from, reached);
    if (to > start) covered_ns += OverlapNs(intervals_ms, start, to);
    reached = std::max(reached, to);
  }
  time.covered_ms = covered_ns / 1'000'000;
  time.threads_ns = static_cast<uint64_t>(threads);
  time.jvm_ns = static_cast<uint64_t>(jvm);
  time.off_cpu_ns = static_cast<uint64_t>(off_cpu);
  time.other_ns = static_cast<uint64_t>(other);
  time.python_run_delay_ns = static_cast<uint64_t>(python_run_delay);
  for (const auto& [activity, ns] : by_activity) {
    if (ns >= 1.0) time.activities.push_back({activity, static_cast<uint64_t>(ns)});
  }
  std::sort(time.activities.begin(), time.activities.end(), [](const auto& a, const auto& b) {
    return a.ns != b.ns ? a.ns > b.ns : a.activity < b.activity;
  });
  return time;
}

std::vector<ProcessWindow> DriverProfile::PythonWindows() const {
  std::vector<ProcessWindow> python;
  for (const DriverWindow& window : windows) {
    if (window.python_cpu_ns == 0 && window.python_run_delay_ns == 0) continue;
    python.push_back({window.start_epoch_ns, window.end_epoch_ns, window.python_cpu_ns,
                      window.python_run_delay_ns});
  }
  std::sort(python.begin(), python.end(),
            [](const ProcessWindow& a, const ProcessWindow& b) { return a.start_ns < b.start_ns; });
  return python;
}

DriverTime DriverProfile::Total() const {
  const std::pair<int64_t, int64_t> always{INT64_MIN, INT64_MAX};
  return Within(std::span(&always, 1));
}

}  // namespace sparkprof::profile
