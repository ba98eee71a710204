// lock-contention: task threads spend a large share of their time blocked on a monitor or a
// java.util.concurrent lock: tasks that run in one executor JVM share its objects, and a lock
// taken per record serialises them. Needs off-CPU samples (agent mode cpu+wall, the default; wall
// mode does not split a sample into on and off CPU).
//
// Judgement: profile_judgement.h. Efficiency 50-90%: removing a lock from the per-record path
// (a per-thread or per-partition instance, a concurrent structure, work done once per
// partition) removes the wait; what stays is the work done inside the lock, now in parallel.
#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

void LockContention(const DiagnosisInput& input, std::vector<Finding>& out) {
  std::vector<ProfiledCause> causes = StagesWhere(input, [](const profile::StageProfile& stage) {
    return stage.category_ns[CategoryIndex(TaskCategory::kLockWait)];
  });
  if (causes.empty()) return;
  uint64_t wait = 0;
  for (const ProfiledCause& cause : causes) wait += cause.ns;
  const ProfiledCause& top = causes.front();
  bool logging = false;
  for (const profile::Site* site : top.stage.SitesOf(TaskCategory::kLockWait)) {
    if (site->frame.find("log4j") != std::string::npos ||
        site->frame.find("logback") != std::string::npos) {
      logging = true;
    }
  }

  Finding f = NewFinding("lock-contention");
  f.confidence = ProfileConfidence(input, top);
  f.evidence = {
      {"lock_wait_ms", WholeMs(wait), "ms"},
      {"top_stage_lock_wait_share", top.share, "ratio"},
      {"top_stage_sampled_task_ms", WholeMs(top.stage.task_ns), "ms"},
      {"stages", static_cast<double>(causes.size()), "count"},
  };
  for (const ProfiledCause& cause : causes) AddSiteFrames(cause, TaskCategory::kLockWait, f);
  std::string where = "Stage " + std::to_string(top.stage_id) + "'s task threads were blocked " +
                      TimeAndShare(top) + " waiting for locks";
  const std::string sites = SitesText(top.stage, TaskCategory::kLockWait);
  if (!sites.empty()) where += ", in " + sites;
  where += ": the tasks of one executor take turns instead of running side by side.";
  f.title = "Tasks contend on a lock";
  f.explanation = where;
  if (logging) {
    f.explanation += " The lock is the logger's: tasks log per record.";
    f.recommendations.push_back(
        {"", "log less on the per-record path (raise the level, or log once per partition)",
         "synchronous appenders take one lock for every task in the JVM"});
  }
  f.recommendations.push_back(
      {"",
       "take the shared object off the per-record path: one instance per partition "
       "(mapPartitions) or per thread, a concurrent structure, or a broadcast read-only copy",
       "each task then works on its own state without waiting for the others"});
  if (!JudgeProfiledCauses(input, causes,
                           {0.50, 0.90, "the wait goes; the work inside the lock stays"}, f)) {
    return;
  }
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
