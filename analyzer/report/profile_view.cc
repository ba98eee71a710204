#include "analyzer/report/profile_view.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

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

namespace {

std::string WaitsText(uint64_t waits) {
  return std::to_string(waits) + (waits == 1 ? " wait" : " waits");
}

// "frame", or "frame under application_frame" when the user's frame beneath it is another.
std::string SiteText(const std::string& frame, const std::string& application_frame) {
  if (application_frame.empty() || application_frame == frame) return frame;
  return frame + " under " + application_frame;
}

}  // namespace

std::vector<std::string> MonitorLines(const profile::StageProfile& stage) {
  std::vector<std::string> lines;
  uint64_t shown_waits = 0, shown_ns = 0;
  for (const profile::MonitorTime& monitor : stage.monitors.classes) {
    if (lines.size() == kMonitorLinesShown) break;
    shown_waits += monitor.waits;
    shown_ns += monitor.wait_ns;
    std::string line = monitor.monitor_class + ": " + WaitsText(monitor.waits) + ", " +
                       HumanDurationNs(monitor.wait_ns) + " waiting (" +
                       HumanDurationNs(monitor.mean_wait_ns()) + " each)";
    if (!monitor.waiters.empty()) {
      line += ", in " +
              SiteText(monitor.waiters.front().frame, monitor.waiters.front().application_frame);
    }
    if (!monitor.holders.empty()) {
      const profile::MonitorHolderSite& holder = monitor.holders.front();
      line += "; held in " + SiteText(holder.frame, holder.application_frame) + " (" +
              std::to_string(holder.looks) + " of " + std::to_string(monitor.holder_looks) +
              " looks)";
    }
    if (!monitor.holder_threads.empty()) {
      const profile::MonitorHolderThread& thread = monitor.holder_threads.front();
      line += std::string(monitor.holders.empty() ? "; held" : ",") + " by " + thread.thread +
              " (" + std::to_string(thread.looks) + " of " + std::to_string(monitor.holder_looks) +
              " looks)";
    }
    lines.push_back(std::move(line));
  }
  if (stage.monitors.waits > shown_waits || stage.monitors.wait_ns > shown_ns) {
    lines.push_back("other classes: " + WaitsText(stage.monitors.waits - shown_waits) + ", " +
                    HumanDurationNs(stage.monitors.wait_ns - shown_ns) + " waiting");
  }
  return lines;
}

std::string FrameAmountText(const diagnosis::FrameEvidence& frame) {
  if (frame.looks >= 0) return std::to_string(frame.looks) + " looks";
  return HumanDurationMs(SaturatingInt64(frame.ms));
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
  const uint64_t agent_ns = profile.cpu_use.agent_cpu_ns();
  const uint64_t jvms_ns = profile.cpu_use.agent_measured_process_cpu_ns();
  if (agent_ns > 0 && jvms_ns > 0) {
    std::snprintf(text, sizeof(text), "%.2f%%",
                  100.0 * static_cast<double>(agent_ns) / static_cast<double>(jvms_ns));
    result += "; the agents' own CPU " + HumanDurationNs(agent_ns) + " (" + text +
              " of their JVMs' " + HumanDurationNs(jvms_ns) + ")";
  }
  return result;
}

std::vector<std::string> MemoryLines(const profile::ApplicationProfile& profile) {
  std::vector<const profile::JvmMemory*> jvms;
  for (const profile::JvmMemory& jvm : profile.memory_use.jvms()) jvms.push_back(&jvm);
  // The driver first, then executors by id (numerically where both are numbers).
  auto rank = [](const profile::JvmMemory* jvm) {
    const std::string& id = jvm->executor_id;
    const bool numeric =
        !id.empty() && id.size() < 10 &&
        std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; });
    return std::make_tuple(id != "driver", !numeric, numeric ? std::stoll(id) : 0LL, id,
                           jvm->last.time_ms);
  };
  std::sort(
      jvms.begin(), jvms.end(),
      [&](const profile::JvmMemory* a, const profile::JvmMemory* b) { return rank(a) < rank(b); });
  auto bytes = [](uint64_t value) { return HumanBytes(static_cast<int64_t>(value)); };
  std::vector<std::string> lines;
  for (size_t i = 0; i < jvms.size() && i < kMemoryJvmsShown; ++i) {
    const profile::JvmMemory& jvm = *jvms[i];
    std::vector<std::string> parts;
    if (jvm.jvm_accounts) {
      std::string heap = "heap at most " + bytes(jvm.max_heap_used_bytes);
      if (jvm.last.heap_max_bytes > 0) heap += " of " + bytes(jvm.last.heap_max_bytes);
      if (jvm.max_heap_after_gc_bytes > 0) {
        heap += " (after GC at most " + bytes(jvm.max_heap_after_gc_bytes);
        if (jvm.max_old_after_gc_bytes > 0) {
          heap += ", old generation " + bytes(jvm.max_old_after_gc_bytes);
        }
        heap += ")";
      }
      parts.push_back(heap);
    }
    if (jvm.max_rss_bytes > 0) parts.push_back("resident set at most " + bytes(jvm.max_rss_bytes));
    // Without a limit the memory cgroup is the host's or a service's, not a container's.
    if (jvm.max_container_bytes > 0 && jvm.last.container_limit_bytes > 0) {
      parts.push_back("container at most " + bytes(jvm.max_container_bytes) + " of its " +
                      bytes(jvm.last.container_limit_bytes) + " limit");
    }
    if (jvm.max_direct_buffer_bytes > 0) {
      std::string direct = "direct buffers " + bytes(jvm.max_direct_buffer_bytes);
      if (jvm.last.direct_buffer_max_bytes > 0) {
        direct += " of " + bytes(jvm.last.direct_buffer_max_bytes);
      }
      parts.push_back(direct);
    }
    if (jvm.max_mapped_buffer_bytes > 0) {
      parts.push_back("mapped buffers " + bytes(jvm.max_mapped_buffer_bytes));
    }
    if (jvm.max_metaspace_bytes > 0) parts.push_back("metaspace " + bytes(jvm.max_metaspace_bytes));
    if (jvm.max_python_rss_bytes > 0) {
      parts.push_back("Python workers " + bytes(jvm.max_python_rss_bytes));
    }
    if (jvm.max_spark_execution_bytes > 0 || jvm.max_spark_storage_bytes > 0) {
      parts.push_back("Spark execution memory " + bytes(jvm.max_spark_execution_bytes) +
                      ", storage " + bytes(jvm.max_spark_storage_bytes));
    }
    std::string line = (jvm.executor_id == "driver" ? "driver" : "executor " + jvm.executor_id) +
                       " (" + std::to_string(jvm.readings) + " readings): ";
    for (size_t p = 0; p < parts.size(); ++p) line += (p > 0 ? ", " : "") + parts[p];
    lines.push_back(std::move(line));
  }
  if (jvms.size() > kMemoryJvmsShown) {
    lines.push_back(std::to_string(jvms.size() - kMemoryJvmsShown) + " more JVMs (report.json)");
  }
  return lines;
}

}  // namespace sparkprof::report
