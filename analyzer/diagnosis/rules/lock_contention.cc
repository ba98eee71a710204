// lock-contention: task threads spend a large share of their time blocked on a monitor or a
// java.util.concurrent lock: tasks that run in one executor JVM share its objects, and a lock
// taken per record serialises them. Needs task threads' wall time in the samples (agent mode
// cpu+wall, the default; or wall): a share is of that time.
//
// Two measures of one wait. The samples see every lock (monitors and java.util.concurrent alike)
// but only as the stack says: a parked or blocked thread is lock_wait; a thread spinning before
// it parks, or woken and queued for a CPU on a loaded host, is on CPU in the VM's monitor code or
// cpu_starved -- the lock's time, filed elsewhere. The agent's monitor waits (JVMTI contended
// monitor entry, profile/monitor_waits.h) time every contended entry exactly, from the first
// failed attempt to the acquisition, spin and run delay included, but monitors only. Neither
// holds the other, and both count the same parked time: the stage's lock time is the larger of
// the two, never their sum, and at most the stage's sampled task time (the exact wait is task
// threads' wall time, as that is). Without monitor waits the rule reads the samples alone, as
// before them.
//
// Judgement: profile_judgement.h (the share of a stage's sampled task time, the samples' error;
// no threshold fitted to data). Efficiency 50-90%: removing a lock from the per-record path (a
// per-thread or per-partition instance, a concurrent structure, work done once per partition)
// removes the wait; what stays is the work done inside the lock, now in parallel. Confidence:
// the share's; high outright when the exact wait sets it (every wait timed, not sampled).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "common/human_format.h"

namespace sparkprof::diagnosis::rules {
namespace {

uint64_t SampledLockNs(const profile::StageProfile& stage) {
  return stage.category_ns[CategoryIndex(TaskCategory::kLockWait)];
}

bool IsLoggingName(std::string_view name) {
  return name.find("log4j") != std::string_view::npos ||
         name.find("logback") != std::string_view::npos;
}

std::string Quoted(const std::string& frame, const std::string& application_frame) {
  std::string text = "`" + frame + "`";
  if (!application_frame.empty() && application_frame != frame) {
    text += " under `" + application_frame + "`";
  }
  return text;
}

// The stage's heaviest monitor in words: the class, the exact wait, where the waiters waited and
// where the owner was.
std::string MonitorText(const profile::MonitorTime& monitor) {
  std::string text = std::to_string(monitor.waits) + " waits to enter a monitor of class " +
                     monitor.monitor_class + ", " + HumanDurationNs(monitor.wait_ns) + " in all (" +
                     HumanDurationNs(monitor.mean_wait_ns()) + " each)";
  if (!monitor.waiters.empty()) {
    const profile::MonitorWaiterSite& site = monitor.waiters.front();
    text += ", most in " + Quoted(site.frame, site.application_frame) + " (" +
            HumanDurationNs(site.wait_ns) + ", " + std::to_string(site.waits) + " waits)";
  }
  if (!monitor.holders.empty()) {
    const profile::MonitorHolderSite& site = monitor.holders.front();
    text += "; its owner was in " + Quoted(site.frame, site.application_frame) + " at " +
            std::to_string(site.looks) + " of " + std::to_string(monitor.holder_looks) + " looks";
  }
  if (!monitor.holder_threads.empty()) {
    text += std::string(monitor.holders.empty() ? "; held" : ",") + " by thread " +
            monitor.holder_threads.front().thread;
  }
  return text;
}

// The monitor's waiter sites (their exact wait) and holder sites (their looks) as the finding's
// frames, for the cause's stage's heaviest monitor.
void AddMonitorFrames(const ProfiledCause& cause, Finding& f) {
  if (cause.stage.monitors.classes.empty()) return;
  const profile::MonitorTime& monitor = cause.stage.monitors.classes.front();
  for (const profile::MonitorWaiterSite& site : monitor.waiters) {
    f.frames.push_back({cause.stage_id, site.frame, site.application_frame, "monitor_wait",
                        static_cast<double>(site.wait_ns) / 1e6});
  }
  for (const profile::MonitorHolderSite& site : monitor.holders) {
    diagnosis::FrameEvidence frame{cause.stage_id, site.frame, site.application_frame,
                                   "monitor_holder", 0};
    frame.looks = static_cast<int64_t>(std::min<uint64_t>(site.looks, INT64_MAX));
    f.frames.push_back(std::move(frame));
  }
}

}  // namespace

void LockContention(const DiagnosisInput& input, std::vector<Finding>& out) {
  const bool wall_sampled = input.profile != nullptr && WallSampled(*input.profile);
  std::vector<ProfiledCause> causes = StagesWhere(
      input,
      [wall_sampled](const profile::StageProfile& stage) { return LockNs(stage, wall_sampled); });
  if (causes.empty()) return;
  uint64_t wait = 0, sampled_wait = 0, monitor_wait = 0, monitor_waits = 0, holder_looks = 0;
  for (const ProfiledCause& cause : causes) {
    wait += cause.ns;
    sampled_wait += SampledLockNs(cause.stage);
    if (!wall_sampled) continue;
    monitor_wait += cause.stage.monitors.wait_ns;
    monitor_waits += cause.stage.monitors.waits;
    holder_looks += cause.stage.monitors.holder_looks;
  }
  const ProfiledCause& top = causes.front();
  const profile::MonitorTime* monitor = wall_sampled && !top.stage.monitors.classes.empty()
                                            ? &top.stage.monitors.classes.front()
                                            : nullptr;
  bool logging = monitor != nullptr && IsLoggingName(monitor->monitor_class);
  for (const profile::Site* site : top.stage.SitesOf(TaskCategory::kLockWait)) {
    if (IsLoggingName(site->frame)) logging = true;
  }

  Finding f = NewProfileFinding(input, "lock-contention", causes, "lock_wait", wait, {});
  const uint64_t top_sampled = SampledLockNs(top.stage);
  if (monitor != nullptr && top.ns > top_sampled) {
    const int64_t interval_ns = std::max<int64_t>(input.profile->interval_ns, 1);
    f.confidence.level = ConfidenceLevel::kHigh;
    f.confidence.reason =
        "the JVM timed each of the stage's " + std::to_string(top.stage.monitors.waits) +
        " monitor waits exactly (the agent's contended-entry events), and the stage's sampled "
        "task time they are a share of holds ~" +
        std::to_string(top.stage.task_ns / static_cast<uint64_t>(interval_ns)) + " samples";
  }
  if (monitor_waits > 0) {
    f.evidence.push_back({"sampled_lock_wait_ms", WholeMs(sampled_wait), "ms"});
    f.evidence.push_back({"monitor_wait_ms", WholeMs(monitor_wait), "ms"});
    f.evidence.push_back({"monitor_waits", static_cast<double>(monitor_waits), "count"});
    f.evidence.push_back(
        {"mean_monitor_wait_ms",
         static_cast<double>(monitor_wait) / 1e6 / static_cast<double>(monitor_waits), "ms"});
    f.evidence.push_back({"holder_looks", static_cast<double>(holder_looks), "count"});
    f.evidence.push_back({"top_stage_sampled_lock_wait_ms", WholeMs(top_sampled), "ms"});
    f.evidence.push_back({"top_stage_monitor_wait_ms", WholeMs(top.stage.monitors.wait_ns), "ms"});
  }
  for (const ProfiledCause& cause : causes) {
    AddSiteFrames(cause, TaskCategory::kLockWait, f);
    if (wall_sampled) AddMonitorFrames(cause, f);
  }
  std::string where = "Stage " + std::to_string(top.stage_id) + "'s task threads were blocked " +
                      TimeAndShare(top) + " waiting for locks";
  const std::string sites = SitesText(top.stage, TaskCategory::kLockWait);
  if (!sites.empty()) where += ", in " + sites;
  where += ": the tasks of one executor take turns instead of running side by side.";
  if (monitor != nullptr) {
    where += " The JVM timed the monitor waits exactly: " + MonitorText(*monitor) + ".";
    if (top.ns > top_sampled) {
      where += " The samples filed only " + HumanDurationNs(top_sampled) +
               " of it as lock_wait (a thread spinning for a monitor is on CPU, and a woken "
               "waiter on a loaded host queues for a CPU: cpu_starved); the share is the exact "
               "wait's.";
    }
  }
  f.title = monitor != nullptr ? "Tasks contend on a monitor of class " + monitor->monitor_class
                               : "Tasks contend on a lock";
  f.explanation = where;
  if (logging) {
    f.explanation += " The lock is the logger's: tasks log per record.";
    f.recommendations.push_back(
        {"", "log less on the per-record path (raise the level, or log once per partition)",
         "synchronous appenders take one lock for every task in the JVM"});
  }
  f.recommendations.push_back(
      {"",
       "take the shared object" +
           (monitor != nullptr ? " (the " + monitor->monitor_class + " the tasks lock)"
                               : std::string()) +
           " off the per-record path: one instance per partition (mapPartitions) or per thread, "
           "a concurrent structure, or a broadcast read-only copy",
       "each task then works on its own state without waiting for the others"});
  if (!JudgeProfiledCauses(input, causes,
                           {0.50, 0.90, "the wait goes; the work inside the lock stays"}, f)) {
    return;
  }
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
