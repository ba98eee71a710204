// Fuzzes the profile summary the diagnosis reads: arbitrary bytes are refused or summarised per
// stage (every stage's frames, sites, patterns and per-task times walked), never trusted. Low
// per-task and monitor-key limits make the left-out paths reachable from small inputs.
#include <cstdint>
#include <string>
#include <string_view>

#include "analyzer/profile/stage_profiles.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace profile = sparkprof::profile;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  profile::ProfileLoadOptions options;
  options.max_profiled_tasks = 64;
  options.max_monitor_keys = 16;
  sparkprof::Result<profile::ApplicationProfile> loaded =
      profile::ApplicationProfileFromBytes(bytes, "fuzz.sparkprof", options);
  if (!loaded.ok()) return 0;
  uint64_t sum = 0;
  for (const profile::StageProfile& stage : loaded->stages) {
    sum += stage.RunnableNs(stage.on_cpu_ns) + stage.top_self.size() + stage.sites.size();
    for (const profile::PatternTime& pattern : stage.patterns) sum += pattern.ns;
    for (const profile::TaskTime& task : stage.tasks) {
      sum += task.task_ns() + task.on_cpu_ns() + task.off_cpu_ns();
      if (stage.FindTask(task.task_attempt_id) != &task) __builtin_trap();  // sorted, unique
    }
    uint64_t class_waits = 0;
    for (const profile::MonitorTime& monitor : stage.monitors.classes) {
      class_waits += monitor.waits;
      sum += monitor.mean_wait_ns() + monitor.monitor_class.size() + monitor.holder_looks;
      for (const profile::MonitorWaiterSite& site : monitor.waiters) sum += site.frame.size();
      for (const profile::MonitorHolderSite& site : monitor.holders) sum += site.looks;
      if (monitor.waiters.size() > profile::kMonitorSites ||
          monitor.holders.size() > profile::kMonitorSites) {
        __builtin_trap();  // bounded
      }
    }
    if (stage.monitors.classes.size() > profile::kMonitorClassesPerStage) __builtin_trap();
    if (class_waits > stage.monitors.waits) __builtin_trap();  // kept classes within the total
    profile::StageProfile combined = loaded->Combined(stage.stage_id);
    sum += combined.task_ns + combined.monitors.wait_ns;
  }
  if (loaded->task_rows_left_out > 0 && loaded->problem_count == 0) __builtin_trap();  // named
  if (loaded->monitor_wait_ns_left_out > 0 && loaded->problem_count == 0) __builtin_trap();
  volatile uint64_t sink = sum;  // the sums are used: nothing is optimised away
  (void)sink;
  return 0;
}
