// python-bound: task threads spend a large share of their time waiting on their Python worker
// (PySpark UDFs, pandas UDFs, mapInPandas/applyInPandas, RDD lambdas): the JVM side of a Python
// task is a thread blocked reading the worker's socket, which the event log calls run time.
// Needs off-CPU samples (agent mode cpu+wall, the default; wall mode does not split a sample into on and off CPU).
//
// Judgement: profile_judgement.h. The fix follows the frames that waited:
//   * row-at-a-time Python UDFs (BatchEvalPythonExec / PythonUDFRunner): built-in functions run
//     in the JVM on Spark's binary rows with no worker round trip, and Arrow-batched UDFs
//     (pandas_udf; useArrow=True since Spark 3.5) move rows in columnar batches; Spark's docs
//     and Databricks' measurements put vectorised UDFs 3x-100x ahead of row-at-a-time ones.
//     Efficiency 50-90% of the wait.
//   * Arrow/pandas already (ArrowPythonRunner, MapInBatch/FlatMapGroupsInPandas): the Python code
//     itself is the cost; the worker's profile names it. Efficiency 10-40% (larger Arrow
//     batches, vectorised code in the function). Except an Arrow-batched row UDF (the plan's
//     ArrowEvalPython with eval type 101, SQL_ARROW_BATCHED_UDF: a plain udf with useArrow, the
//     default for Python UDFs in Spark 4): rows cross in batches, but the function still runs
//     once per row, as the row-at-a-time case above.
//   * RDD lambdas (PythonRunner under PythonRDD): DataFrame operations run without Python.
//     Efficiency 50-90%.
#include <algorithm>
#include <string_view>

#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {

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

}  // namespace

void PythonBound(const DiagnosisInput& input, std::vector<Finding>& out) {
  std::vector<ProfiledCause> causes = StagesWhere(input, [](const profile::StageProfile& stage) {
    return stage.category_ns[CategoryIndex(TaskCategory::kPythonWait)];
  });
  if (causes.empty()) return;
  uint64_t wait = 0, python_cpu = 0;
  for (const ProfiledCause& cause : causes) {
    wait += cause.ns;
    python_cpu += cause.stage.python_ns;
  }
  const ProfiledCause& top = causes.front();
  PythonKind kind = KindOf(top.stage);
  const bool arrow_row_udf = kind == PythonKind::kArrow && RunsArrowBatchedRowUdf(input, top.stage_id);
  if (arrow_row_udf) kind = PythonKind::kRowUdf;

  Finding f;
  f.rule = "python-bound";
  f.category = Category::kAlgorithmic;
  f.recipe = "docs/recipes/troubleshoot/python-bound.md";
  f.confidence = ProfileConfidence(input, top);
  f.evidence = {
      {"python_wait_ms", static_cast<double>(wait / 1'000'000), "ms"},
      {"top_stage_python_wait_share", top.share, "ratio"},
      {"top_stage_sampled_task_ms", static_cast<double>(top.stage.task_ns / 1'000'000), "ms"},
      {"top_stage_on_cpu_ms", static_cast<double>(top.stage.on_cpu_ns / 1'000'000), "ms"},
      {"stages", static_cast<double>(causes.size()), "count"},
  };
  if (python_cpu > 0) {
    f.evidence.push_back({"python_worker_cpu_ms", static_cast<double>(python_cpu / 1'000'000), "ms"});
  }
  for (const ProfiledCause& cause : causes) AddSiteFrames(cause, TaskCategory::kPythonWait, f);
  std::string where = "Stage " + std::to_string(top.stage_id) + "'s task threads waited " +
                      TimeAndShare(top) + " on their Python workers";
  const std::string sites = SitesText(top.stage, TaskCategory::kPythonWait);
  if (!sites.empty()) where += ", in " + sites;
  where += "; the JVM side ran on CPU for only " +
           Millis(static_cast<int64_t>(top.stage.on_cpu_ns / 1'000'000)) + ".";
  if (causes.size() > 1) {
    where += " " + std::to_string(causes.size() - 1) +
             " more stage(s) waited >= 10% of their time on Python too.";
  }
  Efficiency efficiency;
  switch (kind) {
    case PythonKind::kArrow:
      f.title = "Tasks wait on vectorised Python code";
      f.explanation = where +
                      " The data already moves in Arrow batches (pandas UDF, mapInPandas or "
                      "applyInPandas): the Python function itself is the cost.";
      f.recommendations.push_back(
          {"", "make the Python function vectorised end to end (pandas/NumPy operations on whole "
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
      efficiency = {0.50, 0.90, "DataFrame built-ins run without a Python worker"};
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
          {"", "replace the UDF with built-in functions (pyspark.sql.functions), which run in "
               "the JVM",
           "no worker round trip and no serialisation per row"});
      if (arrow_row_udf) {
        f.recommendations.push_back(
            {"", "if it must stay Python: a vectorised pandas_udf whose code works on whole "
                 "pandas Series (no per-element loop or apply)",
             "the rows already cross in Arrow batches; the per-row Python call is what remains"});
      } else {
        f.recommendations.push_back(
            {"", "if it must stay Python: a vectorised pandas_udf, or @udf(useArrow=True) on "
                 "Spark 3.5+ (spark.sql.execution.pythonUDF.arrow.enabled=true for all UDFs)",
             "rows then cross in Arrow batches, and pandas code runs on whole columns"});
      }
      efficiency = {0.50, 0.90, "built-ins or Arrow-batched UDFs against row-at-a-time UDFs"};
      break;
  }
  if (!JudgeProfiledCauses(input, causes, efficiency, f)) return;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
