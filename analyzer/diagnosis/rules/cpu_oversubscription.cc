// cpu-oversubscription: task threads were runnable but not running for a large share of their
// time (the kernel's run delay, /proc/<pid>/task/<tid>/schedstat, sampled by the agent in mode
// cpu+wall): more busy threads than CPUs -- task slots above the cores the executor really has
// (spark.executor.cores over the container's CPU quota or the host's cores), other processes on
// the host, or the JVM's own GC and JIT threads competing.
//
// Judgement: profile_judgement.h. Efficiency 0-50%: when this application's own threads fill
// every CPU, fewer slots only reorder the work (nothing saved); when other processes take the
// CPUs, the starved time is what a host of its own gives back (at most half is taken, since the
// log cannot tell the two apart).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

void CpuOversubscription(const DiagnosisInput& input, std::vector<Finding>& out) {
  std::vector<ProfiledCause> causes = StagesWhere(input, [](const profile::StageProfile& stage) {
    return stage.category_ns[CategoryIndex(TaskCategory::kCpuStarved)];
  });
  if (causes.empty()) return;
  uint64_t starved = 0;
  for (const ProfiledCause& cause : causes) starved += cause.ns;
  const ProfiledCause& top = causes.front();

  Finding f = NewFinding("cpu-oversubscription");
  f.confidence = ProfileConfidence(input, top);
  f.evidence = {
      {"cpu_starved_ms", static_cast<double>(starved / 1'000'000), "ms"},
      {"top_stage_cpu_starved_share", top.share, "ratio"},
      {"top_stage_sampled_task_ms", static_cast<double>(top.stage.task_ns / 1'000'000), "ms"},
      {"top_stage_on_cpu_ms", static_cast<double>(top.stage.on_cpu_ns / 1'000'000), "ms"},
      {"peak_task_slots", static_cast<double>(input.slots()), "count"},
      {"stages", static_cast<double>(causes.size()), "count"},
  };
  f.title = "Task threads wait for a CPU";
  f.explanation =
      "Stage " + std::to_string(top.stage_id) +
      "'s task threads were ready to run but had no "
      "CPU for " +
      TimeAndShare(top) +
      " (the kernel's run delay): more threads wanted the "
      "CPUs than there were. The run had up to " +
      std::to_string(input.slots()) +
      " task slots. Either the slots outnumber the cores the executors really get (a container "
      "quota, a shared host), or other processes on the hosts take the CPUs.";
  const int64_t cores = std::atoll(input.Property("spark.executor.cores", "0").c_str());
  const double on_cpu = static_cast<double>(top.stage.on_cpu_ns);
  const double runnable = on_cpu + static_cast<double>(top.ns);
  if (cores > 1 && runnable > 0 && input.Manager() != ClusterManager::kLocal) {
    // The cores the slots really got: the on-CPU part of the time they wanted to run.
    const int64_t fitting = std::max<int64_t>(1, std::llround(cores * on_cpu / runnable));
    if (fitting < cores) {
      f.recommendations.push_back({"spark.executor.cores", std::to_string(fitting),
                                   "the slots ran " + Fixed(100 * on_cpu / runnable, 0) +
                                       "% of the time they wanted to: " + std::to_string(cores) +
                                       " slots got about " + std::to_string(fitting) +
                                       " CPUs' worth"});
    }
  }
  f.recommendations.push_back(
      {"",
       "give the executors hosts (or CPU quotas) of their own: check what else runs on the "
       "hosts while the stage runs",
       "CPU taken by other processes shows as run delay of the task threads"});
  if (!JudgeProfiledCauses(
          input, causes,
          {0.0, 0.50, "none when the run fills its own CPUs; up to half when others take them"},
          f)) {
    return;
  }
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
