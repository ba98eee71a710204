// Plan rules about what a query reads and computes (sql_plans.h), each naming the plan node and
// the SQL execution:
//
// full-scan: a file scan that read >= 1M rows of which a Filter right above it kept <= 10%, while
//   nothing reached the scan: a partitioned table (it reports "number of partitions read") with
//   no PartitionFilters, or no PushedFilters at all. Spark read every partition / row group to
//   throw 90% away. Partition filter missing -> high confidence; no pushed filter -> medium (the
//   format may not support pushdown, or the predicate is a UDF).
// python-udf: a stage running a Python UDF node (BatchEvalPython, ArrowEvalPython, the pandas
//   and Arrow map/group nodes) holds >= 25% of the run's task time and >= 5 s. The JVM's CPU time
//   in those tasks is low because the work runs in Python workers: the evidence shows it.
// Thresholds are ours (analyzer-facts.md has no tool reading these plan metrics).
#include <algorithm>
#include <set>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kMinScanRows = 1'000'000;
constexpr double kMaxSelectivity = 0.10;
constexpr double kUdfShare = 0.25;
constexpr int64_t kUdfMinMs = 5000;

std::string MetadataOf(const eventlog::PlanNode& node, const char* key) {
  for (const auto& [k, v] : node.metadata) {
    if (k == key) return v;
  }
  return "";
}

bool IsPythonNode(std::string_view kind) {
  for (std::string_view name :
       {"BatchEvalPython", "ArrowEvalPython", "FlatMapGroupsInPandas", "FlatMapCoGroupsInPandas",
        "MapInPandas", "MapInArrow", "PythonMapInArrow", "AggregateInPandas", "WindowInPandas",
        "FlatMapGroupsInArrow", "FlatMapCoGroupsInArrow", "WindowInArrow"}) {
    if (kind == name) return true;
  }
  return false;
}

}  // namespace

void FullScan(const DiagnosisInput& input, std::vector<Finding>& out) {
  for (const SqlPlan& plan : input.plans) {
    for (int32_t n = 0; n < static_cast<int32_t>(plan.nodes().size()); ++n) {
      const std::string_view kind = plan.Kind(n);
      if (kind != "Scan" && kind != "FileScan" && kind != "BatchScan") continue;
      const int64_t scanned = plan.Metric(n, "number of output rows");
      if (scanned < kMinScanRows) continue;
      // The Filter that consumes the scan (through ColumnarToRow, InputAdapter, codegen stages).
      int32_t filter = plan.node(n).parent;
      while (filter >= 0 && plan.Kind(filter) != "Filter") {
        const std::string_view k = plan.Kind(filter);
        if (k != "ColumnarToRow" && k != "InputAdapter" && k != "WholeStageCodegen" &&
            k.rfind("WholeStageCodegen", 0) != 0) {
          filter = -1;
          break;
        }
        filter = plan.node(filter).parent;
      }
      if (filter < 0) continue;
      const int64_t kept = plan.Metric(filter, "number of output rows");
      if (kept < 0) continue;
      const double selectivity = static_cast<double>(kept) / static_cast<double>(scanned);
      if (selectivity > kMaxSelectivity) continue;
      const eventlog::PlanNode& scan = plan.node(n);
      const bool partitioned = plan.HasMetric(n, "number of partitions read");
      const std::string partition_filters = MetadataOf(scan, "PartitionFilters");
      const std::string pushed = MetadataOf(scan, "PushedFilters");
      const bool no_partition_filter = partitioned && (partition_filters == "[]");
      const bool nothing_pushed = pushed == "[]";
      if (!no_partition_filter && !nothing_pushed) continue;
      const int64_t partitions = plan.Metric(n, "number of partitions read");
      const int64_t files = plan.Metric(n, "number of files read");
      const int64_t bytes = plan.Metric(n, "size of files read");
      const int64_t scan_ms = std::max<int64_t>(plan.Metric(n, "scan time"), 0);
      const std::vector<int32_t> stages = plan.Stages(n);
      int64_t stage_run_ms = 0;
      for (const StageStats& s : input.stages) {
        if (std::find(stages.begin(), stages.end(), s.stage_id) != stages.end()) {
          stage_run_ms += s.run_time_ms;
        }
      }
      Finding f = NewFinding("full-scan");
      f.severity = Severity::kWarning;
      f.confidence =
          no_partition_filter
              ? Confidence{ConfidenceLevel::kHigh,
                           "the scan reports reading a partitioned table with no partition "
                           "filter, and the Filter above it kept " +
                               Fixed(100 * selectivity, 1) + "% of the rows (SQL metrics)"}
              : Confidence{ConfidenceLevel::kMedium,
                           "no filter was pushed to the scan and the Filter above it kept " +
                               Fixed(100 * selectivity, 1) +
                               "% of the rows; whether the format could have skipped data "
                               "depends on its layout"};
      f.stage_ids = stages;
      f.title = "Full scan in SQL execution " + std::to_string(plan.sql().execution_id) + ": " +
                std::to_string(scanned) + " rows read, " + Fixed(100 * selectivity, 1) +
                "% kept by the filter";
      f.evidence = {
          {"sql_execution_id", static_cast<double>(plan.sql().execution_id), "count"},
          {"plan_node", static_cast<double>(n), "count"},
          {"rows_scanned", static_cast<double>(scanned), "count"},
          {"rows_kept", static_cast<double>(kept), "count"},
          {"selectivity", selectivity, "ratio"},
          {"partitions_read", static_cast<double>(partitions), "count"},
          {"files_read", static_cast<double>(files), "count"},
          {"bytes_read", static_cast<double>(bytes), "bytes"},
          {"scan_stage_task_ms", static_cast<double>(stage_run_ms), "ms"},
      };
      f.explanation =
          "SQL execution " + std::to_string(plan.sql().execution_id) + ", plan node " +
          std::to_string(n) + " " + scan.name + " read " + std::to_string(scanned) + " rows" +
          (files >= 0 ? " from " + std::to_string(files) + " files" : std::string()) +
          (bytes >= 0 ? " (" + HumanBytes(bytes) + ")" : std::string()) +
          (partitions >= 0 ? " in " + std::to_string(partitions) + " partitions" : std::string()) +
          "; the Filter above it (node " + std::to_string(filter) + ") kept " +
          std::to_string(kept) + ". " +
          (no_partition_filter
               ? "The table is partitioned but no filter reached its partitions "
                 "(PartitionFilters: []): the predicate is not on a partition column, or it "
                 "wraps the column in a function or a cast, so every partition was listed and "
                 "read."
               : "No filter was pushed to the scan (PushedFilters: []): the predicate is a UDF, "
                 "a cast or an expression the source cannot evaluate, so every row was read "
                 "and filtered afterwards.");
      f.recommendations.push_back(
          {"",
           "filter on the partition column directly (no function or cast around it), or "
           "partition/bucket the table by the column the queries filter on",
           "Spark then lists and reads only the matching partitions; here " +
               Fixed(100 * (1 - selectivity), 0) + "% of the rows read were thrown away"});
      if (!no_partition_filter) {
        f.recommendations.push_back(
            {"",
             "express the predicate with built-in comparisons on stored columns (not a "
             "Python/Scala UDF) so Parquet/ORC can skip row groups",
             "only pushed filters let the reader skip data"});
      }
      const int64_t waste_ms = static_cast<int64_t>(
          static_cast<double>(std::max(stage_run_ms, scan_ms)) * (1 - selectivity));
      f.impact = HalfToAllOfTaskTime(
          waste_ms, input.slots(),
          "the scanning stages' task time times the share of rows the filter dropped, spread "
          "over the slots (high); half of it (low): reading less still costs listing and "
          "opening files");
      AddCostingItsSaving(std::move(f), out);
    }
  }
}

void PythonUdf(const DiagnosisInput& input, std::vector<Finding>& out) {
  int64_t total_run_ms = 0;
  for (const StageStats& s : input.stages) total_run_ms += s.run_time_ms;
  if (total_run_ms <= 0) return;
  std::set<int32_t> reported;
  for (const SqlPlan& plan : input.plans) {
    for (int32_t n = 0; n < static_cast<int32_t>(plan.nodes().size()); ++n) {
      if (!IsPythonNode(plan.Kind(n))) continue;
      std::vector<int32_t> stages;
      for (int32_t id : plan.Stages(n)) {
        if (reported.count(id) == 0) stages.push_back(id);
      }
      if (stages.empty()) continue;
      int64_t run_ms = 0, cpu_ms = 0, wall_ms = 0;
      for (const StageStats& s : input.stages) {
        if (std::find(stages.begin(), stages.end(), s.stage_id) == stages.end()) continue;
        run_ms += s.run_time_ms;
        cpu_ms += s.cpu_time_ns / 1'000'000;
        wall_ms += std::max<int64_t>(s.task_span_ms, 0);
      }
      const double share = static_cast<double>(run_ms) / static_cast<double>(total_run_ms);
      if (share < kUdfShare || run_ms < kUdfMinMs) continue;
      reported.insert(stages.begin(), stages.end());
      const double jvm_cpu = run_ms > 0 ? static_cast<double>(cpu_ms) / run_ms : 0;
      const int64_t sent = plan.Metric(n, "data sent to Python workers");
      const int64_t returned = plan.Metric(n, "data returned from Python workers");
      const int64_t rows = plan.Metric(n, "number of output rows");
      const bool row_at_a_time = plan.Kind(n) == "BatchEvalPython";
      Finding f = NewFinding("python-udf");
      f.severity = share >= 0.5 ? Severity::kCritical : Severity::kWarning;
      f.confidence = {ConfidenceLevel::kMedium,
                      "the stage runs a Python UDF node and holds this share of the task time; "
                      "the JVM's CPU time in it is low because the UDF runs in Python workers, "
                      "which Spark's metrics do not time separately"};
      f.stage_ids = stages;
      f.title = "Python UDF (" + std::string(plan.Kind(n)) + ") takes " + Fixed(100 * share, 0) +
                "% of the task time in SQL execution " + std::to_string(plan.sql().execution_id);
      f.evidence = {
          {"sql_execution_id", static_cast<double>(plan.sql().execution_id), "count"},
          {"plan_node", static_cast<double>(n), "count"},
          {"udf_stage_task_ms", static_cast<double>(run_ms), "ms"},
          {"share_of_task_time", share, "ratio"},
          {"jvm_cpu_over_run_time", jvm_cpu, "ratio"},
          {"bytes_sent_to_python", static_cast<double>(sent), "bytes"},
          {"bytes_returned_from_python", static_cast<double>(returned), "bytes"},
          {"rows", static_cast<double>(rows), "count"},
      };
      f.explanation =
          "SQL execution " + std::to_string(plan.sql().execution_id) + ", plan node " +
          std::to_string(n) + " " + plan.node(n).name + ": the stages running it took " +
          HumanDurationMs(run_ms) + " of task time, " + Fixed(100 * share, 0) +
          "% of the run's. The JVM was busy only " + Fixed(100 * jvm_cpu, 0) +
          "% of that time: the rows went to Python worker processes" +
          (sent >= 0 ? " (" + HumanBytes(sent) + " sent, " + HumanBytes(returned) + " returned)"
                     : std::string()) +
          ", were converted there and back, and evaluated by the interpreter " +
          (row_at_a_time ? "one row at a time." : "in Arrow batches.");
      f.recommendations.push_back(
          {"",
           "replace the UDF with built-in functions (pyspark.sql.functions) where they "
           "express it",
           "built-in expressions run in the JVM, code-generated, with no transfer to Python"});
      if (row_at_a_time) {
        f.recommendations.push_back(
            {"spark.sql.execution.pythonUDF.arrow.enabled", "true",
             "Spark 3.5+: evaluates plain Python UDFs in Arrow batches instead of pickled rows "
             "(or declare it a pandas_udf)"});
      }
      f.impact.time_saved_ms_low = 0;
      f.impact.time_saved_ms_high =
          static_cast<int64_t>(static_cast<double>(wall_ms) * (1 - jvm_cpu));
      f.impact.core_hours_saved_high =
          CoreHours(static_cast<int64_t>(static_cast<double>(run_ms) * (1 - jvm_cpu)), 1);
      f.impact.method =
          "up to the UDF stages' wall time outside the JVM (high, a built-in replacement); "
          "nothing if the logic cannot be expressed otherwise (low)";
      AddCostingItsSaving(std::move(f), out);
    }
  }
}

}  // namespace sparkprof::diagnosis::rules
