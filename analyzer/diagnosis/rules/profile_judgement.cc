#include "analyzer/diagnosis/rules/profile_judgement.h"

#include <algorithm>
#include <cmath>

#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/severity.h"

namespace sparkprof::diagnosis::rules {

namespace {

int64_t Ms(uint64_t ns) {
  return static_cast<int64_t>(std::min<uint64_t>(ns / 1'000'000, INT64_MAX));
}

}  // namespace

bool EnoughSamples(const DiagnosisInput& input, const profile::StageProfile& stage) {
  const int64_t interval_ns =
      input.profile->interval_ns > 0 ? input.profile->interval_ns : 10'000'000;
  return stage.task_ns >= static_cast<uint64_t>(kMinSamples * interval_ns);
}

bool WallSampled(const profile::ApplicationProfile& profile) {
  return std::any_of(profile.modes.begin(), profile.modes.end(),
                     [](const std::string& mode) { return mode == "wall" || mode == "cpu+wall"; });
}

uint64_t LockNs(const profile::StageProfile& stage, bool wall_sampled) {
  const uint64_t sampled = stage.category_ns[CategoryIndex(TaskCategory::kLockWait)];
  if (!wall_sampled) return sampled;
  return std::max(sampled, std::min(stage.monitors.wait_ns, stage.task_ns));
}

uint64_t RunDelayInMonitorWaitsNs(const profile::StageProfile& stage, bool wall_sampled) {
  const uint64_t sampled = stage.category_ns[CategoryIndex(TaskCategory::kLockWait)];
  const uint64_t beyond = LockNs(stage, wall_sampled) - sampled;  // LockNs >= sampled
  return std::min(beyond, stage.category_ns[CategoryIndex(TaskCategory::kCpuStarved)]);
}

std::vector<ProfiledCause> CollectCauses(
    const DiagnosisInput& input,
    const std::vector<std::pair<int32_t, profile::StageProfile>>& stages,
    const std::vector<uint64_t>& times) {
  std::vector<ProfiledCause> causes;
  for (size_t i = 0; i < stages.size(); ++i) {
    const profile::StageProfile& stage = stages[i].second;
    if (stage.task_ns == 0) continue;
    const double share = static_cast<double>(times[i]) / static_cast<double>(stage.task_ns);
    if (share < kMinShare) continue;
    ProfiledCause cause;
    cause.stage_id = stages[i].first;
    cause.stage = stage;
    cause.ns = times[i];
    cause.share = share;
    for (const StageStats& stats : input.stages) {
      if (stats.stage_id == cause.stage_id && stats.task_span_ms > 0) {
        cause.task_span_ms += stats.task_span_ms;
      }
    }
    causes.push_back(std::move(cause));
  }
  std::sort(causes.begin(), causes.end(), [](const ProfiledCause& a, const ProfiledCause& b) {
    return a.ns != b.ns ? a.ns > b.ns : a.stage_id < b.stage_id;
  });
  return causes;
}

bool JudgeProfiledCauses(const DiagnosisInput& input, const std::vector<ProfiledCause>& causes,
                         const Efficiency& efficiency, Finding& f, bool report_regardless,
                         const OutsideTasks* outside, const FixReplay* replay) {
  if (causes.empty()) return false;
  const int64_t wall_ms = std::max<int64_t>(input.phases.wall_ms, 1);
  double max_share = 0;
  uint64_t cause_ns = 0;
  for (const ProfiledCause& cause : causes) {
    max_share = std::max(max_share, cause.share);
    cause_ns += cause.ns;
  }
  // The replay with every stage's tasks shortened by share x efficiency.
  bool per_task = false;
  auto scenario_for = [&](double fraction) {
    whatif::Scenario scenario;
    for (const ProfiledCause& cause : causes) {
      scenario.stage_task_time_factor[cause.stage_id] = 1.0 - cause.share * fraction;
      for (const TaskShare& task : cause.task_shares) {
        scenario.task_time_factor[task.task_id] = 1.0 - task.share * fraction;
        per_task = true;
      }
    }
    return scenario;
  };
  // The fix's own replays when it has them, else the tasks shortened; what they change, in words.
  SimulatedSaving low, high;
  std::string replayed;
  if (replay != nullptr && Simulated(input, replay->low, low) &&
      Simulated(input, replay->high, high)) {
    replayed = replay->method;
  } else if (Simulated(input, scenario_for(efficiency.low), low) &&
             Simulated(input, scenario_for(efficiency.high), high)) {
    std::string ids;
    for (const ProfiledCause& cause : causes) {
      ids += (ids.empty() ? "" : ", ") + std::to_string(cause.stage_id);
    }
    replayed = "the tasks of stage(s) " + ids +
               " shortened by the cause's share of their sampled task time" +
               (per_task ? " (each task by its own share)" : "") + " x " +
               Fixed(100 * efficiency.low, 0) + "-" + Fixed(100 * efficiency.high, 0) + "% (" +
               efficiency.source + ")";
  }
  if (!replayed.empty()) {
    f.impact.time_saved_ms_low = std::min(low.saved_ms, high.saved_ms);
    f.impact.time_saved_ms_high = std::max(low.saved_ms, high.saved_ms);
    f.impact.core_hours_saved_low = std::min(low.core_hours_saved, high.core_hours_saved);
    f.impact.core_hours_saved_high = std::max(low.core_hours_saved, high.core_hours_saved);
    f.impact.method = "simulated (what-if replay): " + replayed +
                      "; the model reproduces this run within " +
                      Fixed(100 * high.self_prediction_error, 1) + "%";
  } else {
    // No trustworthy replay: the stages' task spans shortened alike, capped at the wall time.
    double span_low = 0, span_high = 0;
    for (const ProfiledCause& cause : causes) {
      span_low += static_cast<double>(cause.task_span_ms) * cause.share * efficiency.low;
      span_high += static_cast<double>(cause.task_span_ms) * cause.share * efficiency.high;
    }
    f.impact.time_saved_ms_low = std::min<int64_t>(std::llround(span_low), wall_ms);
    f.impact.time_saved_ms_high = std::min<int64_t>(std::llround(span_high), wall_ms);
    f.impact.method = "the stages' task spans x the cause's share x " +
                      Fixed(100 * efficiency.low, 0) + "-" + Fixed(100 * efficiency.high, 0) +
                      "% (" + efficiency.source +
                      "); no what-if replay (it does not reproduce this run within 25%)";
  }
  if (outside != nullptr && outside->high_ms > 0) {
    f.impact.time_saved_ms_low = std::min(wall_ms, f.impact.time_saved_ms_low + outside->low_ms);
    f.impact.time_saved_ms_high = std::min(wall_ms, f.impact.time_saved_ms_high + outside->high_ms);
    f.impact.method += "; plus " + HumanDurationMs(outside->low_ms) + " to " +
                       HumanDurationMs(outside->high_ms) + " outside the tasks (" +
                       outside->source + ")";
  }
  // Core-hours: the cause's sampled task time is executor time; the share that goes.
  if (f.impact.core_hours_saved_high <= 0) {
    f.impact.core_hours_saved_low =
        CoreHours(std::llround(static_cast<double>(Ms(cause_ns)) * efficiency.low), 1);
    f.impact.core_hours_saved_high =
        CoreHours(std::llround(static_cast<double>(Ms(cause_ns)) * efficiency.high), 1);
  }
  f.cost_ms = 0;
  for (const ProfiledCause& cause : causes) {
    f.cost_ms += std::llround(static_cast<double>(cause.task_span_ms) * cause.share);
  }
  f.cost_ms = std::min(f.cost_ms, wall_ms);
  const double high_share = static_cast<double>(f.impact.time_saved_ms_high) / wall_ms;
  if (!report_regardless && high_share < kMinWallShare && max_share < kMinShareAlone) return false;
  f.severity = SeverityForSavingShare(SavingShare(f, wall_ms, HeldCoreHours(*input.model)));
  for (const ProfiledCause& cause : causes) f.stage_ids.push_back(cause.stage_id);
  return true;
}

void SpreadByRunnableCategory(std::vector<ProfiledCause>& causes, TaskCategory category) {
  for (ProfiledCause& cause : causes) {
    SpreadOverTasks(cause, [category](const profile::TaskTime& task) {
      return static_cast<double>(task.category_ns[CategoryIndex(category)]) * task.RunnableFactor();
    });
  }
}

void SpreadByCategory(std::vector<ProfiledCause>& causes, TaskCategory category) {
  for (ProfiledCause& cause : causes) {
    SpreadOverTasks(cause, [category](const profile::TaskTime& task) {
      return task.category_ns[CategoryIndex(category)];
    });
  }
}

std::string TimeAndShare(const ProfiledCause& cause, uint64_t on_cpu_ns) {
  std::string text = HumanDurationMs(Ms(cause.ns)) + " (" + Fixed(100 * cause.share, 0) +
                     "% of stage " + std::to_string(cause.stage_id) + "'s " +
                     HumanDurationMs(Ms(cause.stage.task_ns)) + " of sampled task time";
  const uint64_t starved = cause.stage.category_ns[CategoryIndex(TaskCategory::kCpuStarved)];
  if (on_cpu_ns > 0 && starved > 0 && cause.ns > on_cpu_ns) {
    text += ": " + HumanDurationMs(Ms(on_cpu_ns)) + " on CPU, with its part of the " +
            HumanDurationMs(Ms(starved)) + " the threads waited for a CPU, i.e. x (" +
            HumanDurationMs(Ms(cause.stage.on_cpu_ns)) + " on CPU + " +
            HumanDurationMs(Ms(starved)) + ") / " + HumanDurationMs(Ms(cause.stage.on_cpu_ns));
  }
  return text + ")";
}

std::string SitesText(const profile::StageProfile& stage, TaskCategory category, size_t count) {
  std::string text;
  size_t shown = 0;
  for (const profile::Site* site : stage.SitesOf(category)) {
    if (shown++ >= count) break;
    text += (text.empty() ? "" : ", ") + std::string("`") + site->frame + "`";
    if (!site->application_frame.empty() && site->application_frame != site->frame) {
      text += " under `" + site->application_frame + "`";
    }
    text += " (" + HumanDurationMs(Ms(site->ns)) +
            (site->inlined_callees_unknown
                 ? "; sampled in a VM stub it called: the code it inlined is not known"
                 : "") +
            ")";
  }
  return text;
}

void AddSiteFrames(const ProfiledCause& cause, TaskCategory category, Finding& f, size_t count) {
  size_t shown = 0;
  for (const profile::Site* site : cause.stage.SitesOf(category)) {
    if (shown++ >= count) break;
    f.frames.push_back({cause.stage_id, site->frame, site->application_frame,
                        std::string(::sparkprof::CategoryName(category)),
                        static_cast<double>(site->ns) / 1e6});
  }
}

Confidence ProfileConfidence(const DiagnosisInput& input, const ProfiledCause& cause) {
  const int64_t interval_ns = std::max<int64_t>(input.profile->interval_ns, 1);
  const uint64_t samples = cause.ns / static_cast<uint64_t>(interval_ns);
  const uint64_t stage_samples = cause.stage.task_ns / static_cast<uint64_t>(interval_ns);
  std::string modes;
  for (const std::string& mode : input.profile->modes) modes += (modes.empty() ? "" : ", ") + mode;
  Confidence confidence;
  confidence.level = samples >= 1000 ? ConfidenceLevel::kHigh : ConfidenceLevel::kMedium;
  confidence.reason =
      "measured by the agent's stack samples (mode " + modes + ", every " +
      HumanDurationMs(interval_ns / 1'000'000) + "): ~" + std::to_string(samples) +
      " samples of the cause among ~" + std::to_string(stage_samples) +
      " of the stage; the share's standard error is about " +
      Fixed(100 * std::sqrt(cause.share * (1 - cause.share) /
                            std::max<double>(static_cast<double>(stage_samples), 1)),
            1) +
      " points";
  return confidence;
}

Finding NewProfileFinding(const DiagnosisInput& input, const char* id,
                          const std::vector<ProfiledCause>& causes, std::string_view measure,
                          uint64_t total_ns, std::vector<Evidence> own,
                          std::string_view share_name) {
  const ProfiledCause& top = causes.front();
  Finding f = NewFinding(id);
  f.confidence = ProfileConfidence(input, top);
  f.evidence.reserve(own.size() + 4);
  f.evidence.push_back({std::string(measure) + "_ms", WholeMs(total_ns), "ms"});
  f.evidence.push_back({share_name.empty() ? "top_stage_" + std::string(measure) + "_share"
                                           : std::string(share_name),
                        top.share, "ratio"});
  f.evidence.push_back({"top_stage_sampled_task_ms", WholeMs(top.stage.task_ns), "ms"});
  for (Evidence& evidence : own) f.evidence.push_back(std::move(evidence));
  f.evidence.push_back({"stages", static_cast<double>(causes.size()), "count"});
  return f;
}

profile::DriverRunDelay DriversWaitWhileNoTaskRan(const DiagnosisInput& input,
                                                  const profile::SpansMs& spans, int64_t spans_ms,
                                                  Finding& f, bool with_driver_only_ms) {
  if (input.profile == nullptr || spans.empty() || spans_ms <= 0) return {};
  const std::vector<profile::ProcessWindow> python = input.profile->driver.PythonWindows();
  const profile::DriverRunDelay driver = input.profile->cpu_use.DriverRunDelayDuring(spans, python);
  if (driver.covered_s <= 0) return {};
  if (with_driver_only_ms) {
    f.evidence.push_back({"driver_only_ms", static_cast<double>(spans_ms), "ms"});
  }
  f.evidence.push_back({"driver_only_run_delay_ms", driver.total_ns / 1e6, "ms"});
  f.evidence.push_back({"driver_only_busiest_thread_run_delay_ms", driver.busiest_ns / 1e6, "ms"});
  f.evidence.push_back({"driver_only_other_processes_cpus", driver.others_cpus, "cpus"});
  if (driver.python_sampled) {
    f.evidence.push_back({"driver_only_python_run_delay_ms", driver.python_ns / 1e6, "ms"});
  }
  return driver;
}

}  // namespace sparkprof::diagnosis::rules
