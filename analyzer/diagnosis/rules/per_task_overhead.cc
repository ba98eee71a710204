// per-task-overhead: the PySpark workers spend most of their time on each task's fixed setup
// rather than on the application's Python code: importing modules (the interpreter's import
// machinery; a worker that puts the task's files on sys.path invalidates its import caches and
// reads pyspark.zip's directory again), unpickling the task's function, pyspark's own worker
// loop. The event log calls all of it run time, and counting tasks cannot tell a thousand
// 100 ms tasks that work from a thousand that set up; the workers' own samples can.
//
// Measured (needs the Python workers' samples, the plugin's sparkprof daemon): per stage, the
// workers' setup time = their time on samples without an application Python frame
// (profile::StageProfile::python_application_ns is the rest), as a share of the workers' time.
// Judged when the setup is the larger part (> 50% of the workers' time: the tasks cost more to
// start than to run, whatever their number); the cause's time in task-thread terms is the task
// threads' python_wait x that share (a task thread waits while its worker sets up), judged by
// profile_judgement.h.
// Fix: fewer, larger tasks, so the setup is paid fewer times (coalesce, fewer input partitions,
// larger files per partition); a partition count of 2x the task slots keeps every slot busy.
// Expected impact: the fix's own replay -- the stage re-split into that many tasks, each paying
// the stage's fixed cost per task once and doing its part of the stage's work (the what-if's
// re-split with the fixed part as a share of each task, whatif::Scenario::
// stage_fixed_task_share). Shortening each task by the setup's share instead kept the other
// 1,996 of 2,000 tasks' launches and round trips (the validation's RDD lambda over 2,000
// partitions: 5x the 4 partitions' real wall time predicted). The fixed share, from the
// profile's categories: the work a task's data asks for is the task thread's time on CPU, its
// reads (io_wait, shuffle_fetch_wait) and the workers' time in the application's Python code;
// the rest -- waits for the workers' setup and round trips, run delay, other waits -- does not
// grow with the data (low end: all but that work is fixed). With little data per task the JVM's
// CPU is per-task too (deserialising the task, launching it, its result): high end, all but the
// application's Python code is fixed. Without a replay that reproduces the run: share x efficiency
// 50-90% of the stages' task spans, as every profile rule.
#include <algorithm>
#include <cmath>
#include <string>

#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kSetupMajority = 0.5;

// The setup's share of the stage's Python workers' time; 0 without worker samples.
double SetupShare(const profile::StageProfile& stage) {
  const uint64_t worker = stage.python_ns + stage.python_off_cpu_ns;
  if (worker == 0) return 0;
  const uint64_t setup = worker - std::min(worker, stage.python_application_ns);
  return static_cast<double>(setup) / static_cast<double>(worker);
}
// The share of the stage's sampled task time its data asked for: the task threads on CPU, their
// reads, and the workers in the application's Python code (at most all of it).
double WorkShare(const profile::StageProfile& stage) {
  if (stage.task_ns == 0) return 0;
  const uint64_t work = stage.on_cpu_ns + stage.category_ns[CategoryIndex(TaskCategory::kIoWait)] +
                        stage.category_ns[CategoryIndex(TaskCategory::kShuffleFetchWait)] +
                        stage.python_application_ns;
  return std::min(1.0, static_cast<double>(work) / static_cast<double>(stage.task_ns));
}
}  // namespace

void PerTaskOverhead(const DiagnosisInput& input, std::vector<Finding>& out) {
  std::vector<ProfiledCause> causes = StagesWhere(input, [](const profile::StageProfile& stage) {
    const double share = SetupShare(stage);
    if (share <= kSetupMajority) return uint64_t{0};
    const uint64_t wait = stage.category_ns[CategoryIndex(TaskCategory::kPythonWait)];
    return static_cast<uint64_t>(static_cast<double>(wait) * share);
  });
  if (causes.empty()) return;
  const ProfiledCause& top = causes.front();
  const double setup_share = SetupShare(top.stage);
  const uint64_t worker_ns = top.stage.python_ns + top.stage.python_off_cpu_ns;
  int64_t tasks = 0;
  for (const StageStats& stage : input.stages) {
    if (stage.stage_id == top.stage_id) tasks += stage.successful_tasks;
  }
  const int64_t slots = std::max<int64_t>(input.slots(), 1);
  const int64_t target = std::max<int64_t>(2 * slots, 1);

  Finding f = NewFinding("per-task-overhead");
  f.confidence = ProfileConfidence(input, top);
  f.evidence = {
      {"top_stage_python_worker_ms", WholeMs(worker_ns), "ms"},
      {"top_stage_python_setup_share", setup_share, "ratio"},
      {"top_stage_python_application_ms", WholeMs(top.stage.python_application_ns), "ms"},
      {"top_stage_setup_wait_ms", WholeMs(top.ns), "ms"},
      {"stages", static_cast<double>(causes.size()), "count"},
  };
  if (tasks > 0) f.evidence.push_back({"top_stage_tasks", static_cast<double>(tasks), "count"});
  std::string hottest;
  for (const profile::PythonFrameTime& frame : top.stage.top_python) {
    if (profile::IsPythonApplicationFrame(frame.frame)) continue;
    hottest = frame.function;
    f.frames.push_back({top.stage_id, frame.frame, "",
                        std::string(::sparkprof::CategoryName(TaskCategory::kPython)),
                        static_cast<double>(frame.on_cpu_ns) / 1e6});
    break;
  }
  f.title = "Python workers spend most of each task setting it up";
  f.explanation =
      "Stage " + std::to_string(top.stage_id) + "'s Python workers spent " +
      Fixed(100 * setup_share, 0) + "% of their " +
      HumanDurationMs(static_cast<int64_t>(worker_ns / 1'000'000)) +
      " on each task's setup (imports, the task's function, pyspark's own loop) and " +
      HumanDurationMs(static_cast<int64_t>(top.stage.python_application_ns / 1'000'000)) +
      " in the application's Python code" +
      (hottest.empty() ? std::string() : "; most in `" + hottest + "`") +
      ". Their task threads waited " + TimeAndShare(top) +
      " for workers not running the application's code (the setup, and the round trips "
      "around it)" +
      (tasks > 0 ? ", paid once by each of the stage's " + std::to_string(tasks) + " tasks" : "") +
      ".";
  f.recommendations.push_back(
      {"",
       "fewer, larger tasks: about " + std::to_string(target) +
           " partitions for this stage (rdd.coalesce(" + std::to_string(target) +
           "), fewer partitions in parallelize or repartition, larger input splits)",
       "the setup is paid per task; " + std::to_string(target) + " is 2x the " +
           std::to_string(slots) + " task slots, enough to keep every slot busy"});
  Efficiency efficiency{0.50, 0.90, "the per-task setup paid by far fewer tasks"};
  FixReplay replay;
  const FixReplay* fix_replay = nullptr;
  if (tasks > target && top.stage.task_ns > 0) {
    const double work_share = WorkShare(top.stage);
    const double python_share = std::min(1.0, static_cast<double>(top.stage.python_application_ns) /
                                                  static_cast<double>(top.stage.task_ns));
    const double fixed_low = 1.0 - work_share;
    const double fixed_high = std::max(fixed_low, 1.0 - python_share);
    const auto count = static_cast<int32_t>(std::min<int64_t>(target, 100'000));
    replay.low.stage_partitions[top.stage_id] = count;
    replay.low.stage_fixed_task_share[top.stage_id] = fixed_low;
    replay.high.stage_partitions[top.stage_id] = count;
    replay.high.stage_fixed_task_share[top.stage_id] = fixed_high;
    replay.method = "stage " + std::to_string(top.stage_id) + " re-split into " +
                    std::to_string(target) +
                    " tasks, each paying the fixed cost per task once and doing its part of the "
                    "stage's work; fixed: " +
                    Fixed(100 * fixed_low, 0) + "-" + Fixed(100 * fixed_high, 0) +
                    "% of the mean task (all but the " + Fixed(100 * work_share, 0) +
                    "% of the sampled task time on the JVM's CPU, reading, or in the "
                    "application's Python code; up to all but the last, " +
                    Fixed(100 * python_share, 0) +
                    "%, when the JVM's own work per task is fixed too, as with little data)";
    fix_replay = &replay;
  }
  if (!JudgeProfiledCauses(input, causes, efficiency, f, false, nullptr, fix_replay)) return;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
