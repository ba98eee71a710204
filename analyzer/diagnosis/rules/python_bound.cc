// python-bound: task threads spend a large share of their time waiting on their Python worker
// (PySpark UDFs, pandas UDFs, mapInPandas/applyInPandas, RDD lambdas): the JVM side of a Python
// task is a thread blocked reading the worker's socket, which the event log calls run time.
// Needs off-CPU samples (agent mode cpu+wall, the default; wall mode does not split a sample into
// on and off CPU).
//
// The cause is the JVM's side of the exchange with the workers -- the task threads' time whose
// site (innermost frame outside the JDK) is PySpark's runners, its Python operators or the row
// pickler (profile::StageProfile::python_exchange_ns): the wait for results, and the pickling,
// sending and reading that go with the workers (not their start-up: a fixed cost per worker,
// whatever the rows) -- and the task threads' run delay their Python workers' CPU explains: the
// workers are processes of the application on the same hosts, and a CPU-second a worker used is
// one a runnable task thread could have run in, so at most min(run delay, workers' CPU) of the
// stage's run delay (less what may lie in exact monitor waits, lock-contention's) is theirs; it
// goes with the Python work the fix removes. (cpu-oversubscription counts the workers' CPU as the
// application's, so the two never claim it twice.)
//
// Judgement: profile_judgement.h; each task is shortened by its own part of its stage's cause
// (SpreadOverTasks), in proportion to what that task waited on its worker, the run delay its
// worker's CPU explains and its part of the workers' start: a stage's first tasks start the
// workers and warm the JVM, its later ones mostly wait on the workers, and one share for all
// would shorten the warm-up as much as the wait. The fix follows the frames that waited:
//   * row-at-a-time Python UDFs (BatchEvalPythonExec / PythonUDFRunner): built-in functions run
//     in the JVM on Spark's binary rows with no worker at all -- the round trips, the workers'
//     start (the task threads' time under PySpark's PythonWorkerFactory, which the cause above
//     leaves out) and the run delay the workers' CPU caused all go. Efficiency 90-100% of that:
//     the low end leaves a tenth for the built-in expressions that replace the function. The
//     expected impact is this first recommendation's; the second, Arrow-batched or pandas UDFs,
//     keeps the workers and saves less (Spark's docs and Databricks' measurements put
//     vectorised UDFs 3x-100x ahead of row-at-a-time ones: two thirds of the wait or more), as
//     its words say.
//   * Arrow/pandas already (ArrowPythonRunner, MapInBatch/FlatMapGroupsInPandas): the Python code
//     itself is the cost; the worker's profile names it. Efficiency 10-40% (larger Arrow
//     batches, vectorised code in the function). Except an Arrow-batched row UDF (the plan's
//     ArrowEvalPython with eval type 101, SQL_ARROW_BATCHED_UDF: a plain udf with useArrow, the
//     default for Python UDFs in Spark 4): rows cross in batches, but the function still runs
//     once per row, as the row-at-a-time case above.
//   * RDD lambdas (PythonRunner under PythonRDD): DataFrame operations run without Python.
//     Efficiency 90-100% of the wait and the workers' start, as above.
// With the Python workers' own samples (the plugin's sparkprof daemon), the finding names the
// application's Python function that held most of the workers' time (and its hottest line), and
// says whether that time was on CPU or waiting (its own I/O, or runnable with no CPU free): a UDF
// that waits on a remote service is not made faster by vectorising it. When the function spends
// most of the workers' time waiting in its own code (off CPU, not runnable: a network call, a lock,
// a sleep), the fix is fewer or concurrent waits -- one request per batch (mapInPandas or a
// pandas_udf over a whole batch), a thread pool inside the batch, a cache, no lock shared across
// workers -- and the efficiency is the part of the wait that batching or overlap removes when the
// service itself is not the limit: 30-80% of the wait.
#include <algorithm>
#include <string_view>

#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "common/frame_classifier.h"

namespace sparkprof::diagnosis::rules {

namespace {

using profile::CategoryNs;

enum class PythonKind { kRowUdf, kArrow, kRdd, kUnknown };

PythonKind KindOf(const profile::StageProfile& stage) {
  auto ns = [&](profile::Pattern pattern) -> uint64_t {
    const profile::PatternTime* time = stage.FindPattern(pattern);
    return time != nullptr ? time->ns : 0;
  };
  const uint64_t row = ns(profile::Pattern::kPythonRowUdf);
  const uint64_t arrow = ns(profile::Pattern::kPythonArrow);
  const uint64_t rdd = ns(profile::Pattern::kPythonRdd);
  if (row == 0 && arrow == 0 && rdd == 0) return PythonKind::kUnknown;
  if (row >= arrow && row >= rdd) return PythonKind::kRowUdf;
  return arrow >= rdd ? PythonKind::kArrow : PythonKind::kRdd;
}

// True when a SQL plan runs an Arrow-batched row UDF (ArrowEvalPython ..., 101) in `stage_id`.
bool RunsArrowBatchedRowUdf(const DiagnosisInput& input, int32_t stage_id) {
  constexpr std::string_view kRowUdfEvalType = ", 101";  // PythonEvalType.SQL_ARROW_BATCHED_UDF
  for (const SqlPlan& plan : input.plans) {
    for (int32_t n = 0; n < static_cast<int32_t>(plan.nodes().size()); ++n) {
      if (plan.Kind(n) != "ArrowEvalPython" ||
          !std::string_view(plan.node(n).simple_string).ends_with(kRowUdfEvalType)) {
        continue;
      }
      const std::vector<int32_t> stages = plan.Stages(n);
      if (std::find(stages.begin(), stages.end(), stage_id) != stages.end()) return true;
    }
  }
  return false;
}

// The task threads' time starting Python workers (the daemon and its workers): the sites under
// PySpark's worker factory, run delay aside (the workers' CPU accounts for that), by category.
CategoryNs WorkerStartNs(const profile::StageProfile& stage) {
  CategoryNs ns{};
  for (const profile::Site& site : stage.sites) {
    if (site.category == TaskCategory::kCpuStarved || site.category == TaskCategory::kPythonWait ||
        !classifier::IsPySparkWorkerStartFrame(site.frame)) {
      continue;
    }
    ns[CategoryIndex(site.category)] += site.ns;
  }
  return ns;
}

uint64_t Total(const CategoryNs& ns) {
  uint64_t total = 0;
  for (uint64_t v : ns) total += v;
  return total;
}

constexpr const char* kBuiltinsSource =
    "built-in functions run in the JVM: the round trips, the workers' start and the run delay "
    "their CPU caused go; at most a tenth stays for the built-in expressions";

// Built-ins need no Python worker: the time the stages' task threads spent starting them goes
// with the fix, added to each cause and said in the finding.
void AddWorkerStart(std::vector<ProfiledCause>& causes, Finding& f) {
  std::vector<uint64_t> starts;
  uint64_t total = 0;
  for (const ProfiledCause& cause : causes) {
    starts.push_back(cause.stage.task_ns > 0 ? Total(WorkerStartNs(cause.stage)) : 0);
    total += starts.back();
  }
  if (total < 1'000'000) return;  // below what the finding shows: left out, not added unseen
  std::string frame;
  for (size_t i = 0; i < causes.size(); ++i) {
    ProfiledCause& cause = causes[i];
    if (starts[i] == 0) continue;
    cause.ns = std::min(cause.ns + starts[i], cause.stage.task_ns);
    cause.share = static_cast<double>(cause.ns) / static_cast<double>(cause.stage.task_ns);
    if (frame.empty()) {
      for (const profile::Site& site : cause.stage.sites) {
        if (classifier::IsPySparkWorkerStartFrame(site.frame)) {
          frame = site.frame;
          break;
        }
      }
    }
  }
  f.evidence.push_back({"python_worker_start_ms", WholeMs(total), "ms"});
  f.explanation += " Built-in functions need no Python worker: the " +
                   HumanDurationMs(static_cast<int64_t>(total / 1'000'000)) +
                   " the task threads spent starting them (in `" + frame +
                   "`) goes with the UDF, and is counted in the expected impact.";
}

// Each task's own part of its stage's cause, in proportion to what the task itself waited on
// its Python worker, the run delay its worker's CPU explains, and (`with_start`) its part of the
// workers' start -- a stage's first tasks start the workers, its later ones mostly wait on them.
void SpreadPythonOverTasks(std::vector<ProfiledCause>& causes, bool with_start) {
  for (ProfiledCause& cause : causes) {
    const CategoryNs start = with_start ? WorkerStartNs(cause.stage) : CategoryNs{};
    const profile::StageProfile& stage = cause.stage;
    SpreadOverTasks(cause, [&start, &stage](const profile::TaskTime& task) {
      const auto& ns = task.category_ns;
      double weight = static_cast<double>(ns[CategoryIndex(TaskCategory::kPythonWait)]) +
                      static_cast<double>(std::min(ns[CategoryIndex(TaskCategory::kCpuStarved)],
                                                   ns[CategoryIndex(TaskCategory::kPython)]));
      for (size_t c = 0; c < start.size(); ++c) {
        if (start[c] == 0 || stage.category_ns[c] == 0) continue;
        weight += static_cast<double>(ns[c]) * static_cast<double>(start[c]) /
                  static_cast<double>(stage.category_ns[c]);
      }
      return weight;
    });
  }
}

}  // namespace

void PythonBound(const DiagnosisInput& input, std::vector<Finding>& out) {
  const bool wall_sampled = input.profile != nullptr && WallSampled(*input.profile);
  // The task threads' run delay their own Python workers' CPU explains (header).
  auto starved_by_python = [wall_sampled](const profile::StageProfile& stage) -> uint64_t {
    const uint64_t starved = stage.category_ns[CategoryIndex(TaskCategory::kCpuStarved)] -
                             RunDelayInMonitorWaitsNs(stage, wall_sampled);
    return std::min(starved, stage.python_ns);
  };
  // The JVM's side of the exchange (header): the wait, and whatever else its frames held.
  auto exchange = [](const profile::StageProfile& stage) -> uint64_t {
    return std::max(stage.category_ns[CategoryIndex(TaskCategory::kPythonWait)],
                    stage.python_exchange_ns);
  };
  std::vector<ProfiledCause> causes =
      StagesWhere(input, [&starved_by_python, &exchange](const profile::StageProfile& stage) {
        return exchange(stage) + starved_by_python(stage);
      });
  if (causes.empty()) return;
  uint64_t wait = 0, exchanged = 0, starved = 0, python_cpu = 0;
  for (const ProfiledCause& cause : causes) {
    const uint64_t by_python = starved_by_python(cause.stage);
    starved += by_python;
    exchanged += cause.ns - by_python;
    wait += cause.stage.category_ns[CategoryIndex(TaskCategory::kPythonWait)];
    python_cpu += cause.stage.python_ns;
  }
  const ProfiledCause& top = causes.front();
  PythonKind kind = KindOf(top.stage);
  const bool arrow_row_udf =
      kind == PythonKind::kArrow && RunsArrowBatchedRowUdf(input, top.stage_id);
  if (arrow_row_udf) kind = PythonKind::kRowUdf;

  Finding f = NewProfileFinding(input, "python-bound", causes, "python_wait", wait,
                                {{"top_stage_on_cpu_ms", WholeMs(top.stage.on_cpu_ns), "ms"}});
  if (python_cpu > 0) {
    f.evidence.push_back({"python_worker_cpu_ms", WholeMs(python_cpu), "ms"});
  }
  if (starved > 0) f.evidence.push_back({"python_cpu_starved_ms", WholeMs(starved), "ms"});
  if (exchanged > wait) {
    f.evidence.push_back({"python_exchange_ms", WholeMs(exchanged), "ms"});
  }
  for (const ProfiledCause& cause : causes) AddSiteFrames(cause, TaskCategory::kPythonWait, f);
  const profile::PythonFrameTime* hot =
      top.stage.top_python.empty() ? nullptr : &top.stage.top_python.front();
  const uint64_t worker_ns = top.stage.python_ns + top.stage.python_off_cpu_ns;
  std::string in_python;
  bool waits_in_python = false;  // the hot function mostly waits in its own code
  bool waits_on_network = false;
  if (hot != nullptr && worker_ns > 0) {
    const uint64_t off_ns = hot->ns - std::min(hot->ns, hot->on_cpu_ns);
    const uint64_t waiting_ns = off_ns - std::min(off_ns, hot->runnable_ns);
    waits_in_python = 2 * waiting_ns >= worker_ns;
    for (std::string_view network :
         {"socket.py", "ssl.py", "selectors.py", "http", "urllib", "requests", "grpc"}) {
      waits_on_network |= hot->waited_in.find(network) != std::string::npos;
    }
    f.evidence.push_back({"python_worker_off_cpu_ms", WholeMs(top.stage.python_off_cpu_ns), "ms"});
    f.evidence.push_back({"top_python_function_ms", WholeMs(hot->ns), "ms"});
    f.evidence.push_back({"top_python_function_share",
                          static_cast<double>(hot->ns) / static_cast<double>(worker_ns), "ratio"});
    f.frames.push_back({top.stage_id, hot->frame, hot->function,
                        std::string(::sparkprof::CategoryName(TaskCategory::kPython)),
                        static_cast<double>(hot->on_cpu_ns) / 1e6});
    if (off_ns > 0 && !hot->waited_in.empty()) {
      f.frames.push_back({top.stage_id, hot->waited_in, hot->function,
                          std::string(::sparkprof::CategoryName(TaskCategory::kPythonOffCpu)),
                          static_cast<double>(off_ns) / 1e6});
    }
    in_python =
        " In the Python workers (" + HumanDurationMs(static_cast<int64_t>(worker_ns / 1'000'000)) +
        " sampled: " + HumanDurationMs(static_cast<int64_t>(top.stage.python_ns / 1'000'000)) +
        " on CPU), `" + hot->function + "` held " +
        Fixed(100.0 * static_cast<double>(hot->ns) / static_cast<double>(worker_ns), 0) + "% (" +
        HumanDurationMs(static_cast<int64_t>(hot->ns / 1'000'000)) + ", most at `" + hot->frame +
        "`): " + HumanDurationMs(static_cast<int64_t>(hot->on_cpu_ns / 1'000'000)) + " on CPU";
    if (waiting_ns > 0) {
      in_python += ", " + HumanDurationMs(static_cast<int64_t>(waiting_ns / 1'000'000)) +
                   " waiting" +
                   (hot->waited_in.empty() ? "" : " (most in `" + hot->waited_in + "`)");
    }
    if (hot->runnable_ns > 0) {
      in_python += ", " + HumanDurationMs(static_cast<int64_t>(hot->runnable_ns / 1'000'000)) +
                   " runnable with no CPU free";
    }
    in_python += ".";
  }
  const uint64_t top_starved = starved_by_python(top.stage);
  const uint64_t top_wait = top.stage.category_ns[CategoryIndex(TaskCategory::kPythonWait)];
  const uint64_t top_exchange_more =
      top.ns - top_starved - std::min(top.ns - top_starved, top_wait);
  std::string where;
  if (top_exchange_more >= 1'000'000) {
    // The exchange held more than the wait: say what the cause's time is made of.
    where = "Stage " + std::to_string(top.stage_id) + "'s task threads spent " + TimeAndShare(top) +
            " on their Python workers: " + HumanDurationNs(top_wait) + " waiting for them, " +
            HumanDurationNs(top_exchange_more) +
            " more in the JVM's side of the exchange (pickling and sending rows, reading "
            "and unpickling results)" +
            (top_starved > 0 ? " and " + HumanDurationNs(top_starved) +
                                   " of run delay for the CPUs those workers held"
                             : std::string());
  } else {
    where = "Stage " + std::to_string(top.stage_id) + "'s task threads waited " +
            TimeAndShare(top) +
            (top_starved > 0 ? " on their Python workers and for the CPUs those workers held (" +
                                   HumanDurationNs(top.ns - top_starved) + " and " +
                                   HumanDurationNs(top_starved) + " of run delay)"
                             : " on their Python workers");
  }
  const std::string sites = SitesText(top.stage, TaskCategory::kPythonWait);
  if (!sites.empty()) where += ", in " + sites;
  where += "; the JVM side ran on CPU for only " +
           HumanDurationMs(static_cast<int64_t>(top.stage.on_cpu_ns / 1'000'000)) + "." + in_python;
  if (causes.size() > 1) {
    where += " " + std::to_string(causes.size() - 1) +
             " more stage(s) waited >= 10% of their time on Python too.";
  }
  Efficiency efficiency;
  if (waits_in_python) {
    f.title = waits_on_network ? "Tasks wait on Python code that waits on the network"
                               : "Tasks wait on Python code that waits";
    f.explanation =
        where + " The Python function is not slow to compute: it waits, once per call" +
        (waits_on_network ? ", on a remote service (a socket read in its own code)."
                          : " (a lock, a sleep or other blocking call in its own code).") +
        " Vectorising it would not shorten the wait.";
    if (waits_on_network) {
      f.recommendations.push_back(
          {"",
           "call the service once per batch instead of once per row: mapInPandas (or a "
           "pandas_udf) that sends one bulk request per Arrow batch",
           "the round trip is paid per call; a batch of 10,000 rows pays it once"});
      f.recommendations.push_back(
          {"",
           "or overlap the calls: a thread pool inside mapInPandas (the worker waits on many "
           "requests at once), and cache answers that repeat",
           "while one call waits, the others proceed; the service's own capacity is the limit"});
    } else {
      f.recommendations.push_back(
          {"",
           "remove the wait from the per-row path: a lock shared by all workers (a file "
           "lock, a global resource) or a sleep serialises the tasks; give each worker its "
           "own resource, or do the guarded work once per partition",
           "a task's time in this wait is time its slot does nothing"});
    }
    efficiency = {0.30, 0.80, "batched or overlapped waits, when the service is not the limit"};
    SpreadPythonOverTasks(causes, false);
    if (!JudgeProfiledCauses(input, causes, efficiency, f)) return;
    out.push_back(std::move(f));
    return;
  }
  switch (kind) {
    case PythonKind::kArrow:
      f.title = "Tasks wait on vectorised Python code";
      f.explanation = where +
                      " The data already moves in Arrow batches (pandas UDF, mapInPandas or "
                      "applyInPandas): the Python function itself is the cost.";
      f.recommendations.push_back(
          {"",
           "make the Python function vectorised end to end (pandas/NumPy operations on whole "
           "columns, no per-row apply or loops), or express it with built-in functions",
           "row loops inside a pandas UDF run at Python speed, like a row-at-a-time UDF"});
      f.recommendations.push_back(
          {"spark.sql.execution.arrow.maxRecordsPerBatch", "50000",
           "larger Arrow batches (10,000 by default) amortise the per-batch round trip, if the "
           "workers have the memory"});
      efficiency = {0.10, 0.40, "vectorised code or larger batches; the Python work remains"};
      break;
    case PythonKind::kRdd:
      f.title = "Tasks wait on Python RDD functions";
      f.explanation = where +
                      " RDD transformations written in Python (map, filter, flatMap with "
                      "lambdas) send every record through a Python worker and back.";
      f.recommendations.push_back(
          {"", "express the transformation with DataFrame operations and built-in functions",
           "they run in the JVM on Spark's binary rows: no pickling, no worker round trip"});
      efficiency = {0.90, 1.0, kBuiltinsSource};
      break;
    case PythonKind::kRowUdf:
    case PythonKind::kUnknown:
      f.title = "Tasks wait on row-at-a-time Python UDFs";
      f.explanation =
          where + (arrow_row_udf
                       ? " The UDF is Arrow-batched (the plan's ArrowEvalPython, eval type 101: "
                         "useArrow, the default for Python UDFs in Spark 4): rows cross in "
                         "batches, but the function still runs once per row at Python speed."
                       : " Each row crosses to a Python worker and back (pickled), and the "
                         "function runs once per row at Python speed.");
      f.recommendations.push_back(
          {"",
           "replace the UDF with built-in functions (pyspark.sql.functions), which run in "
           "the JVM",
           "no worker round trip and no serialisation per row"});
      if (arrow_row_udf) {
        f.recommendations.push_back(
            {"",
             "if it must stay Python: a vectorised pandas_udf whose code works on whole "
             "pandas Series (no per-element loop or apply)",
             "the rows already cross in Arrow batches; the per-row Python call is what remains "
             "(a smaller saving than built-ins: the workers stay)"});
      } else {
        f.recommendations.push_back(
            {"",
             "if it must stay Python: a vectorised pandas_udf, or @udf(useArrow=True) on "
             "Spark 3.5+ (spark.sql.execution.pythonUDF.arrow.enabled=true for all UDFs)",
             "rows then cross in Arrow batches, and pandas code runs on whole columns: a smaller "
             "saving than built-ins (the workers stay; vectorised UDFs run 3x-100x faster than "
             "row-at-a-time ones, i.e. two thirds of the wait or more)"});
      }
      efficiency = {0.90, 1.0, kBuiltinsSource};
      break;
  }
  if (kind != PythonKind::kArrow) AddWorkerStart(causes, f);
  SpreadPythonOverTasks(causes, kind != PythonKind::kArrow);
  if (!JudgeProfiledCauses(input, causes, efficiency, f)) return;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
