// cpu-oversubscription: task threads were runnable but not running for a large share of their
// time (the kernel's run delay, /proc/<pid>/task/<tid>/schedstat, sampled by the agent in mode
// cpu+wall): more busy threads than CPUs -- task slots above the cores the executor really has
// (spark.executor.cores over the container's CPU quota or the host's cores), other processes on
// the host, or the JVM's own GC and JIT threads competing.
//
// Which of them, from the JVMs' CPU use while the top stage ran (the agent's Batch.cpu,
// analyzer/profile/cpu_use.h; the application's Python workers, outside the JVMs, counted as
// the application's by their sampled time on CPU in the stage), by first principles:
//   * a CPU-second another process (or the hypervisor: steal) used on the host is one a waiting
//     task thread could have run in, so at most min(run delay, others' CPU time) of the run
//     delay is theirs: `external = min(1, (others + steal) x span / run delay)`;
//   * a throttled cgroup's threads wait while it is throttled: at most min(run delay, throttled
//     time) is the quota's: `quota = min(1, throttled time / run delay)`;
//   * the rest is this application's own threads queueing for the CPUs it has.
// Run delay that may lie inside the JVM's exact monitor waits (what they hold beyond the sampled
// lock_wait, profile_judgement.h) is lock-contention's and left out here: one wait, one claim.
// Judgement: profile_judgement.h. Efficiency, with CPU use: what the application gains when the
// CPUs others held and the quota withheld are its own. Its JVMs used `cur` CPUs while the stage
// ran; its threads wanted `wanted = cur + run delay / span` (each waiting thread would have run);
// others (and steal) held `others`, and while a quota throttled it the hosts' idle CPUs were
// withheld too (`freed = others + steal + idle if throttled`: idle CPUs beside waiting threads
// without throttling are not the application's to take -- a cpuset, another host). Given back,
// it runs at `then = min(cur + freed, wanted)` (at least `cur`), and a
// CPU-bound stage's work goes faster by then / cur: the task threads' runnable time (on CPU + run
// delay) shrinks by cur / then -- never below their CPU time, which is the work itself. The
// share of the run delay that goes is the high end; the low end gives back half the CPUs gained
// (a host of its own still runs its daemons; a raised quota may still share the host). Its own
// queueing gains nothing: with no others and no throttling, cur is already what the hosts have
// (fewer slots only reorder the work); CPUs given back that round to none at the hundredths the
// finding prints (under 0.005: a daemon's tick) are none too, so no "+ the 0.00 freed" is
// claimed. Without CPU use (agents before Batch.cpu) 0-50%, as the
// profile cannot tell the two apart.
// The driver too: while no task runs (the phase breakdown's driver-only spans: planning,
// collecting, the gaps between jobs) the application's wall time is the driver's, and a driver
// whose threads wait for CPUs others hold is slower by that wait. The agent on the driver polls
// every thread's run delay (CpuUse.run_delay_steps, about every 250 ms); in the spans, the part
// other processes explain -- window by window of the driver's CpuUse, at most what the driver
// host's other processes and steal used there plus its cgroup's throttled time, as above -- comes
// back as wall time when the fix gives the CPUs back: at most the threads' summed wait (one waits
// after another) and never more than the spans, at least half the longest-waiting thread's (one
// thread on the critical path, half the CPUs back). A PySpark driver program sampled by
// sparkprof-python (sparkprof_driver.py: its main thread's CPU and run delay) is the driver too:
// its CPU is the application's, not others', and its main thread's run delay joins the threads'
// wait (summed, and as one more thread for the longest). Not sampled, its CPU counts as another
// process's: an overstatement only when it and the JVM queue for the same CPUs. The replay keeps
// driver-only gaps as they were, so this is added to its saving as it is. Executors' core-hours
// held in those gaps are not counted (no claim on them). Found only beside a stage's run delay: a
// driver that alone waits is driver-bound's.
#include <algorithm>
#include <cmath>

#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "common/human_format.h"

namespace sparkprof::diagnosis::rules {

namespace {

// The driver's wait for CPUs while no task ran (header): its threads' run delay in the
// driver-only spans, the part other processes (and steal, and a throttling quota) explain given
// back as wall time -- at most the gaps, at least half the longest-waiting thread's.
void AddDriversWaitBetweenTasks(const DiagnosisInput& input, Finding& f, OutsideTasks& outside) {
  const profile::DriverRunDelay driver = DriversWaitWhileNoTaskRan(
      input, input.phases.driver_only_spans, input.phases.driver_only_ms, f, true);
  const double waited = driver.total_ns + driver.python_ns;
  if (driver.covered_s <= 0 || waited < 1e6) return;
  const double external = std::min(1.0, driver.others_ns / waited);
  f.evidence.push_back({"driver_only_run_delay_external_share", external, "ratio"});
  f.explanation += " While no task ran (" + HumanDurationMs(input.phases.driver_only_ms) +
                   " driver only), the driver's threads waited " +
                   HumanDurationNs(std::llround(driver.total_ns)) +
                   " for a CPU together (the longest-waiting thread of each moment " +
                   HumanDurationNs(std::llround(driver.busiest_ns)) + ")" +
                   (driver.python_ns >= 1e6 ? " and the Python driver program's main thread " +
                                                  HumanDurationNs(std::llround(driver.python_ns))
                                            : std::string()) +
                   "; other processes on its host used " + Fixed(driver.others_cpus, 2) +
                   " CPUs then, which explains " + Fixed(100 * external, 0) + "% of that wait.";
  const double covered_ns = driver.covered_s * 1e9;
  const double high = std::min(waited, covered_ns) * external;
  const double low = std::max(driver.busiest_ns, driver.python_ns) * external / 2;
  if (high < 1e6) return;
  outside.low_ms = std::llround(low / 1e6);
  outside.high_ms = std::llround(high / 1e6);
  outside.source = "the driver's threads' wait for a CPU while no task ran, x the " +
                   Fixed(100 * external, 0) +
                   "% other processes explain; at most the driver-only time, at least half the "
                   "longest-waiting thread's";
}

}  // namespace

void CpuOversubscription(const DiagnosisInput& input, std::vector<Finding>& out) {
  const bool wall_sampled = input.profile != nullptr && WallSampled(*input.profile);
  std::vector<ProfiledCause> causes =
      StagesWhere(input, [wall_sampled](const profile::StageProfile& stage) {
        return stage.category_ns[CategoryIndex(TaskCategory::kCpuStarved)] -
               RunDelayInMonitorWaitsNs(stage, wall_sampled);
      });
  if (causes.empty()) return;
  uint64_t starved = 0;
  for (const ProfiledCause& cause : causes) starved += cause.ns;
  const ProfiledCause& top = causes.front();

  Finding f = NewProfileFinding(input, "cpu-oversubscription", causes, "cpu_starved", starved,
                                {{"top_stage_on_cpu_ms", WholeMs(top.stage.on_cpu_ns), "ms"},
                                 {"peak_task_slots", static_cast<double>(input.slots()), "count"}});
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
  const int64_t cores = input.IntProperty("spark.executor.cores", 0);
  const double on_cpu = static_cast<double>(top.stage.on_cpu_ns);
  const double runnable = on_cpu + static_cast<double>(top.ns);

  // The top stage's run (every attempt, submission to completion) and what the CPUs did in it.
  int64_t first_ms = -1, last_ms = -1;
  for (const StageStats& stats : input.stages) {
    if (stats.stage_id != top.stage_id || stats.submission_ms < 0 || stats.completion_ms < 0) {
      continue;
    }
    first_ms = first_ms < 0 ? stats.submission_ms : std::min(first_ms, stats.submission_ms);
    last_ms = std::max(last_ms, stats.completion_ms);
  }
  profile::CpuDuring cpu;
  if (input.profile != nullptr && first_ms >= 0)
    cpu = input.profile->cpu_use.During(first_ms, last_ms);
  const double starved_ns = static_cast<double>(top.ns);
  // The application's own Python workers are processes of their own, outside its JVMs' CPU: the
  // stage's sampled Python on-CPU time over its span is theirs, not "other processes'" (at most
  // all of what the JVMs did not use).
  const double span_ns = cpu.span_s * 1e9;
  const double python_cpus =
      span_ns > 0 ? std::min(cpu.others_cpus(), static_cast<double>(top.stage.python_ns) / span_ns)
                  : 0.0;
  const double others_cpus = cpu.others_cpus() - python_cpus;
  const double application_cpus = cpu.application_cpus() + python_cpus;
  double external = 0, quota = 0;
  if (cpu.has_hosts() && starved_ns > 0) {
    external = std::min(1.0, (others_cpus + cpu.steal_cpus()) * span_ns / starved_ns);
    quota = std::min(1.0, cpu.throttled_ns / starved_ns);
    if (cpu.throttled_periods > 0 && cpu.executor_jvms > 0 &&
        cpu.executors_with_quota == cpu.executor_jvms) {
      // Every executor under a quota: together they never run more than quota x span, so the
      // runnable time beyond it waits whatever else the hosts do.
      const double beyond = runnable - cpu.quota_cpus * span_ns;
      quota = std::max(quota, std::min(1.0, std::max(0.0, beyond) / starved_ns));
    }
    // While a cgroup is throttled its threads cannot run, whoever holds the CPUs: the others'
    // part is at most what the quota leaves.
    external = std::min(external, 1.0 - quota);
    f.evidence.push_back({"host_cpus", static_cast<double>(cpu.cpus()), "count"});
    f.evidence.push_back({"host_busy_cpus", cpu.busy_cpus(), "cpus"});
    f.evidence.push_back({"application_cpus", application_cpus, "cpus"});
    if (python_cpus > 0) f.evidence.push_back({"python_workers_cpus", python_cpus, "cpus"});
    f.evidence.push_back({"other_processes_cpus", others_cpus, "cpus"});
    f.evidence.push_back({"steal_cpus", cpu.steal_cpus(), "cpus"});
    f.evidence.push_back({"top_stage_span_ms", cpu.span_s * 1000, "ms"});
    f.evidence.push_back({"run_delay_external_share", external, "ratio"});
    std::string hosts = cpu.hosts.size() == 1
                            ? "the host's " + std::to_string(cpu.cpus()) + " CPUs"
                            : "the " + std::to_string(cpu.hosts.size()) + " hosts' " +
                                  std::to_string(cpu.cpus()) + " CPUs";
    f.explanation = "Stage " + std::to_string(top.stage_id) +
                    "'s task threads were ready to run but had no CPU for " + TimeAndShare(top) +
                    " (the kernel's run delay). While it ran (" +
                    HumanDurationMs(std::llround(cpu.span_s * 1000)) + "), " + hosts +
                    " were busy " + Fixed(cpu.busy_cpus(), 2) +
                    " on average: this application's "
                    "JVMs used " +
                    Fixed(cpu.application_cpus(), 2) +
                    (python_cpus >= 0.005 ? " and its Python workers " + Fixed(python_cpus, 2) +
                                                " (their sampled time on CPU)"
                                          : "") +
                    ", other processes " + Fixed(others_cpus, 2) +
                    (cpu.steal_cpus() >= 0.005
                         ? ", and the hypervisor took " + Fixed(cpu.steal_cpus(), 2) + " (steal)"
                         : "") +
                    ". The run had up to " + std::to_string(input.slots()) + " task slots.";
  }
  if (cpu.cgroup_jvms > 0) {
    f.evidence.push_back({"cgroup_throttled_ms", cpu.throttled_ns / 1e6, "ms"});
    f.evidence.push_back(
        {"cgroup_throttled_periods", static_cast<double>(cpu.throttled_periods), "count"});
    f.evidence.push_back({"cgroup_periods", static_cast<double>(cpu.periods), "count"});
    if (cpu.min_quota_millicpus > 0) {
      f.evidence.push_back({"cgroup_quota_cpus", cpu.min_quota_millicpus / 1000.0, "cpus"});
    }
    if (cpu.executor_jvms > 0 && cpu.executors_with_quota == cpu.executor_jvms) {
      f.evidence.push_back({"executors_quota_cpus", cpu.quota_cpus, "cpus"});
    }
    if (cpu.throttled_periods > 0) {
      f.explanation += " The containers' CPU quota" +
                       (cpu.min_quota_millicpus > 0
                            ? " (" + Fixed(cpu.min_quota_millicpus / 1000.0, 2) + " CPUs at least)"
                            : std::string()) +
                       " throttled " + std::to_string(cpu.throttled_jvms) + " of " +
                       std::to_string(cpu.cgroup_jvms) + " JVMs in " +
                       std::to_string(cpu.throttled_periods) + " of " +
                       std::to_string(cpu.periods) + " periods (" +
                       HumanDurationMs(std::llround(cpu.throttled_ns / 1e6)) + " throttled).";
    }
  }
  // Run delay inside exact monitor waits is lock-contention's (profile_judgement.h).
  const uint64_t in_monitors = RunDelayInMonitorWaitsNs(top.stage, wall_sampled);
  if (in_monitors > 0) {
    f.evidence.push_back({"top_stage_run_delay_in_monitor_waits_ms", WholeMs(in_monitors), "ms"});
    f.explanation += " Another " + HumanDurationNs(in_monitors) +
                     " of its run delay is left to lock-contention: the JVM's exact monitor "
                     "waits hold that much more than the samples filed as lock_wait, and a "
                     "woken waiter queueing for a CPU is still waiting for the lock.";
  }
  const bool told_apart = cpu.has_hosts();
  const double outside = std::min(1.0, external + quota);
  if (told_apart) {
    f.evidence.push_back({"run_delay_quota_share", quota, "ratio"});
    if (outside < 0.25) {
      f.explanation +=
          " The run delay is this application's own threads queueing for the CPUs it has: fewer "
          "slots would only reorder the work; more cores (executors or larger hosts) shorten it.";
    } else if (quota >= external) {
      f.explanation += " Most of the run delay is the quota's: the executors' threads wanted " +
                       Fixed(runnable / std::max(1.0, cpu.span_s * 1e9), 2) +
                       " CPUs on average and their containers allow " +
                       (cpu.quota_cpus > 0 ? Fixed(cpu.quota_cpus, 2) : std::string("fewer")) +
                       "; they wait while throttled, whatever else the host runs.";
    } else {
      f.explanation +=
          " Most of the run delay is theirs: other processes held CPUs the task "
          "threads wanted.";
    }
  }
  if (!told_apart && cores > 1 && runnable > 0 && input.Manager() != ClusterManager::kLocal) {
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
  if (told_apart && quota >= 0.25) {
    const std::string key = input.Manager() == ClusterManager::kKubernetes
                                ? "spark.kubernetes.executor.limit.cores"
                                : "";
    if (!key.empty() && cores > 0) {
      f.recommendations.push_back({key, std::to_string(cores),
                                   "a CPU limit below the task slots throttles the pod: its "
                                   "threads wait for the next period"});
    } else {
      f.recommendations.push_back(
          {"",
           "raise the executors' container CPU limit to their task slots, or lower "
           "spark.executor.cores to the limit",
           "a throttled container's threads wait for the next period whatever the host has free"});
    }
  }
  if (!told_apart || external >= 0.25) {
    f.recommendations.push_back(
        {"",
         "give the executors hosts (or CPU quotas) of their own: check what else runs on the "
         "hosts while the stage runs",
         "CPU taken by other processes shows as run delay of the task threads"});
  }
  if (told_apart && outside < 0.25) {
    f.recommendations.push_back(
        {"", "add cores (more executors, or hosts with more CPUs) if the stage must be faster",
         "the stage's threads wanted " + Fixed(runnable / std::max(1.0, cpu.span_s * 1e9), 1) +
             " CPUs on average while the hosts had " + std::to_string(cpu.cpus())});
  }
  Efficiency efficiency{0.0, 0.50,
                        "none when the run fills its own CPUs; up to half when others take them"};
  const double cur = told_apart ? application_cpus : 0;
  if (cur > 0 && span_ns > 0 && starved_ns > 0) {
    // The CPUs given back (header): the runnable time shrinks by cur / then, never below on CPU.
    const double wanted = cur + starved_ns / span_ns;
    // What others held, and the hosts' idle CPUs when a quota kept the threads off them (idle
    // CPUs beside waiting threads without throttling are not theirs: a cpuset, another host).
    const double idle = std::max(0.0, cpu.cpus() - cpu.busy_cpus());
    const double freed = others_cpus + cpu.steal_cpus() + (cpu.throttled_periods > 0 ? idle : 0.0);
    const double then = std::max(cur, std::min(cur + freed, wanted));
    auto gone = [&](double cpus_then) {
      const double runnable_then = std::max(on_cpu, runnable * cur / cpus_then);
      return std::clamp((runnable - runnable_then) / starved_ns, 0.0, 1.0);
    };
    const double half = cur + (then - cur) / 2;
    constexpr double kLeastCpusShown = 0.005;  // prints as 0.01 (header)
    if (then - cur < kLeastCpusShown) {
      efficiency = {0.0, 0.0,
                    "nothing to give back: no other process held CPUs and no quota throttled "
                    "it, so its threads queue for the CPUs it has (fewer slots only reorder "
                    "the work)"};
    } else {
      efficiency = {
          gone(half), gone(then),
          "with the CPUs others held and the quota withheld given back, the application "
          "runs at " +
              Fixed(then, 2) + " CPUs (" + Fixed(cur, 2) + " + the " + Fixed(freed, 2) +
              " freed, at most the " + Fixed(wanted, 2) + " its threads wanted) instead of " +
              Fixed(cur, 2) + ": stage " + std::to_string(top.stage_id) +
              "'s runnable task time (" + HumanDurationNs(std::llround(runnable)) +
              " on CPU or waiting for one) shrinks by " + Fixed(cur, 2) + "/" + Fixed(then, 2) +
              ", never below its " + HumanDurationNs(std::llround(on_cpu)) +
              " on CPU; the low end gains half as many CPUs (" + Fixed(half, 2) + ")"};
    }
    f.evidence.push_back({"application_cpus_wanted", wanted, "cpus"});
    f.evidence.push_back({"application_cpus_given_back", then, "cpus"});
  }
  OutsideTasks driver;
  if (told_apart) AddDriversWaitBetweenTasks(input, f, driver);
  if (!JudgeProfiledCauses(input, causes, efficiency, f, false, &driver)) return;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
