// io-write-bound: writing the output (tasks committing files, the driver committing the job)
// takes a large part of the run.
//
// Signals: for each job with a write stage (SQL "task commit time"/"number of written files", or
// output bytes without shuffle output), the commit gap = job end - last task end plus the SQL "job
// commit time" the driver reports after the job (write_commits.h: Spark SQL commits after JobEnd;
// renames, manifest writes); task commit time; write-stage task p95 against the p95 of the other
// stages.
// Advice follows the table format: the S3A committers only for Hadoop-committer writes; Delta
// tables (plan or stage names Delta) and Databricks (its DBIO commit protocol) write files in place
// and commit without renames, so there the advice is about file sizes and the tasks' work.
// Thresholds (ours; analyzer-facts.md d.5 notes that no tool flags this; ldbc_snb_datagen_spark#324
// shows serial renames at 67% of runtime):
//   * commit gap >= 10 s AND >= 5% of wall time, or
//   * write-stage task p95 >= 2x the p95 of the other stages and >= 10 s;
//   critical when the commit gap or write time is >= 25% of wall time.
// Not I/O: a slow write stage whose tasks were >= 90% on CPU with < 10% of their time committing,
// and no long job commit, is compute or partitioning (too-few-partitions says which): the finding
// is then info, low confidence, and costs only the commit time.
// S3A evidence (live runs: the plugin measures Hadoop's S3A statistics per stage and per executor):
// the write stage's bytes, uploads and request time, else the application's, with one sentence.
// small-files (its own finding): >= 100 files averaging < 32 MiB (DataFlint: < 3 MB and > 100
// files is its alert; we also flag moderately small files because each costs a create, a commit
// and, on object stores, a rename, and every later reader opens them). Warning when they average
// < 8 MiB, info otherwise.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/write_commits.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kMinGapMs = 10'000;
constexpr double kWarningShare = 0.05;
constexpr double kCriticalShare = 0.25;
constexpr double kP95Ratio = 2.0;
constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kExplainCommitMs = 1000;  // shorter commits are not worth a committer change

bool Contains(const std::string& text, const char* what) {
  return text.find(what) != std::string::npos;
}

// Delta: the write stage is named after a Delta command, or the write's SQL plan (or its root
// query's) mentions Delta.
bool IsDeltaWrite(const model::ApplicationModel& m, const WriteCommit& commit,
                  const std::string& stage_name) {
  if (Contains(stage_name, "Delta")) return true;
  std::vector<int64_t> executions;
  if (commit.write != nullptr) executions.push_back(commit.write->execution_id);
  auto job = m.jobs.find(commit.job_id);
  if (job != m.jobs.end()) executions.push_back(job->second.sql_execution_id);
  for (int64_t id : executions) {
    auto sql = m.sql_executions.find(id);
    if (sql == m.sql_executions.end()) continue;
    if (Contains(sql->second.physical_plan, "Delta")) return true;
    auto root = m.sql_executions.find(sql->second.root_execution_id);
    if (root != m.sql_executions.end() && Contains(root->second.physical_plan, "Delta"))
      return true;
  }
  return false;
}

bool IsDatabricks(const model::ApplicationModel& m) {
  if (m.databricks) return true;
  for (const auto& [key, value] : m.spark_properties) {
    if (key.rfind("spark.databricks.", 0) == 0) return true;
  }
  return false;
}

// CPU time over run time of a stage's ended attempts (0 when unknown).
double CpuShare(const model::ApplicationModel& m, int32_t stage_id) {
  double cpu_ms = 0, run_ms = 0;
  for (const auto& [key, stage] : m.stages) {
    if (key.first != stage_id) continue;
    auto [begin, end] = m.TasksOf(stage);
    for (const uint32_t* it = begin; it != end; ++it) {
      const model::TaskAttempt& task = m.tasks[*it];
      if (!task.has_metrics) continue;
      cpu_ms += task.metrics.executor_cpu_time_ns / 1e6;
      run_ms += task.metrics.executor_run_time_ms;
    }
  }
  return run_ms > 0 ? std::min(cpu_ms / run_ms, 1.0) : 0.0;
}

// The write stage's S3A bytes (its attempts summed) and the application's S3A requests: the
// stage rows' request counts come from the task thread's IOStatisticsContext, which on Hadoop
// 3.5.0 does not receive the output streams' uploads (measured: 0 multipart uploads in the write
// stage's row, 2 in the executor's), so multipart and PUT figures are always the executors'.
void AddS3aEvidence(const model::ApplicationModel& m, int32_t stage_id, Finding& f) {
  model::S3aIo stage;
  for (const auto& [key, attempt] : m.stages) {
    if (key.first != stage_id || !attempt.s3a.measured) continue;
    stage.Add(attempt.s3a);
  }
  if (!stage.measured && !m.s3a.measured) return;
  if (stage.measured) {
    f.evidence.push_back(
        {"s3a_stage_bytes_written", static_cast<double>(stage.bytes_written), "bytes"});
  }
  const model::S3aIo& requests = m.s3a;
  if (!requests.measured || !requests.request_counts) return;
  const std::string prefix = "s3a_application_";
  f.evidence.push_back(
      {prefix + "multipart_uploads", static_cast<double>(requests.multipart_initiated), "count"});
  f.evidence.push_back(
      {prefix + "block_uploads", static_cast<double>(requests.multipart_parts), "count"});
  f.evidence.push_back(
      {prefix + "put_requests", static_cast<double>(requests.put_requests), "count"});
  f.evidence.push_back({prefix + "put_ms", static_cast<double>(requests.put_ms), "ms"});
  f.evidence.push_back({prefix + "retries", static_cast<double>(requests.retries), "count"});
  f.evidence.push_back({prefix + "throttled", static_cast<double>(requests.throttled), "count"});
  f.explanation += std::string(
                       "S3A (measured by the plugin; requests over the whole "
                       "application): ") +
                   (stage.measured ? HumanBytes(stage.bytes_written) + " written by the stage, "
                                   : std::string()) +
                   std::to_string(requests.multipart_initiated) + " multipart uploads of " +
                   std::to_string(requests.multipart_parts) + " blocks, PUT requests " +
                   HumanDurationMs(requests.put_ms) + " in total, " +
                   std::to_string(requests.retries) + " retries, " +
                   std::to_string(requests.throttled) + " throttled" +
                   (requests.throttled > 0 ? " (the store asked to slow down: fewer, larger "
                                             "files or more prefixes)"
                                           : "") +
                   ". ";
}

constexpr double kComputeBoundCpu = 0.9;
constexpr double kComputeBoundCommit = 0.1;
constexpr int64_t kSmallFilesMin = 100;
constexpr int64_t kSmallFileBytes = 32ll << 20;
constexpr int64_t kSmallFileWarningBytes = 8ll << 20;
constexpr int64_t kTargetFileBytes = 128ll << 20;

void SmallFiles(const DiagnosisInput& input, const WriteCommit& commit, const StageStats& write,
                std::vector<Finding>& out) {
  const int64_t files = write.written_files;
  const int64_t average = write.output_bytes / std::max<int64_t>(files, 1);
  const int64_t target =
      std::max<int64_t>(1, (write.output_bytes + kTargetFileBytes - 1) / kTargetFileBytes);
  // Per-file cost in this run, for the files beyond the ~128 MiB count: the commits (task commit
  // time over the slots, the job commit) and the write tasks' time off CPU (creating, flushing and
  // closing files; fetch waits and GC left out) over the slots. Files this small are written for
  // their count, not their bytes, so that time goes with the files. (The per-file cost was an
  // integer division before: under 1 ms a file, it made every saving 0.)
  const double extra_share =
      static_cast<double>(std::max<int64_t>(files - target, 0)) / std::max<int64_t>(files, 1);
  const double slots = static_cast<double>(input.slots());
  const double commit_ms = static_cast<double>(write.task_commit_ms) / slots +
                           static_cast<double>(std::max<int64_t>(commit.commit_ms(), 0));
  const int64_t task_off_cpu_ms =
      std::max<int64_t>(write.run_time_ms - write.cpu_time_ns / 1'000'000 - write.fetch_wait_ms -
                            write.gc_ms - write.task_commit_ms,
                        0);
  const int64_t saving =
      std::llround((commit_ms + static_cast<double>(task_off_cpu_ms) / slots) * extra_share);
  Finding f = NewFinding("small-files");
  f.severity = average < kSmallFileWarningBytes ? Severity::kWarning : Severity::kInfo;
  f.confidence = {ConfidenceLevel::kHigh,
                  "the file count and bytes are Spark SQL's write metrics (number of written "
                  "files, written output)"};
  f.stage_ids = {write.stage_id};
  f.title = "Job " + std::to_string(commit.job_id) + " wrote " + std::to_string(files) +
            " files of " + HumanBytes(average) + " on average";
  f.evidence = {
      {"written_files", static_cast<double>(files), "count"},
      {"output_bytes", static_cast<double>(write.output_bytes), "bytes"},
      {"average_file_bytes", static_cast<double>(average), "bytes"},
      {"files_at_128_mib", static_cast<double>(target), "count"},
      {"task_commit_ms", static_cast<double>(write.task_commit_ms), "ms"},
      {"job_commit_ms", static_cast<double>(std::max<int64_t>(commit.commit_ms(), 0)), "ms"},
  };
  f.explanation =
      "Stage " + std::to_string(write.stage_id) + " wrote " + HumanBytes(write.output_bytes) +
      " as " + std::to_string(files) + " files (" + HumanBytes(average) + " each on average; " +
      std::to_string(target) +
      " files of ~128 MiB would hold it). Every file costs a create, a "
      "task commit and its share of the job commit (a rename on object stores with the classic "
      "committer): " +
      HumanDurationMs(write.task_commit_ms) +
      " of task commit time here. Every later "
      "read pays again: a task or a split and a footer read per file.";
  f.recommendations.push_back(
      {"",
       "coalesce(" + std::to_string(target) +
           ") or repartition by the output's partition "
           "columns before writing (or the REBALANCE hint with adaptive execution)",
       std::to_string(target) + " files of ~128 MiB instead of " + std::to_string(files)});
  f.recommendations.push_back(
      {"spark.sql.adaptive.advisoryPartitionSizeInBytes", "128m",
       "with adaptive execution on, a repartition/REBALANCE before the write then produces "
       "partitions (files) of about this size"});
  f.evidence.push_back({"write_task_off_cpu_ms", static_cast<double>(task_off_cpu_ms), "ms"});
  f.impact.time_saved_ms_low = saving / 2;
  f.impact.time_saved_ms_high = saving;
  f.impact.method =
      "this run's per-file time -- the commits (task commits over the slots plus the job commit) "
      "and the write tasks' time off CPU (run time less CPU, fetch wait, GC and commit) over the "
      "slots -- for the files beyond the ~128 MiB count (high), half (low); later reads also "
      "gain, not counted";
  f.cost_ms = saving;
  out.push_back(std::move(f));
}
}  // namespace

void IoWriteBound(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  const PhaseBreakdown& p = input.phases;
  std::map<int32_t, const StageStats*> by_id;
  std::vector<int64_t> other_p95;
  for (const StageStats& s : input.stages) {
    by_id[s.stage_id] = &s;
    if (!s.write_stage && s.successful_tasks > 0) other_p95.push_back(s.p95_task_ms);
  }
  const int64_t compute_p95 =
      other_p95.empty() ? 0 : *std::max_element(other_p95.begin(), other_p95.end());
  const bool databricks = IsDatabricks(m);
  for (const WriteCommit& commit : ComputeWriteCommits(m, input.stages)) {
    if (commit.write_stage_id < 0) continue;
    const StageStats* write = by_id[commit.write_stage_id];
    const int32_t job_id = commit.job_id;
    const int64_t gap = commit.commit_ms();
    const bool gap_fires = gap >= kMinGapMs && p.Ratio(gap) >= kWarningShare;
    const bool tasks_fire = compute_p95 > 0 && write->p95_task_ms >= kP95Ratio * compute_p95 &&
                            write->p95_task_ms >= kMinGapMs;
    if (write->written_files >= kSmallFilesMin &&
        write->output_bytes / std::max<int64_t>(write->written_files, 1) < kSmallFileBytes) {
      SmallFiles(input, commit, *write, out);
    }
    // The write tasks were slow, but their own figures say it was not I/O: they were on CPU
    // almost all the time and committed quickly, and the job commit was short. That is a
    // partitioning or compute problem (too-few-partitions, the flame graph), not a write one.
    const double task_cpu_share = CpuShare(m, write->stage_id);
    const double task_commit_share =
        write->run_time_ms > 0 ? static_cast<double>(write->task_commit_ms) / write->run_time_ms
                               : 0;
    const bool compute_bound = !gap_fires && tasks_fire && task_cpu_share >= kComputeBoundCpu &&
                               task_commit_share < kComputeBoundCommit;
    if (!gap_fires && !tasks_fire) continue;
    const int64_t write_wall =
        gap + (tasks_fire && !compute_bound ? std::max<int64_t>(write->duration_ms, 0) : 0);
    const bool delta = IsDeltaWrite(m, commit, write->name);
    const bool hadoop_committer = !delta && !databricks;
    const int64_t sql_job_commit_ms =
        commit.write != nullptr ? std::max<int64_t>(commit.write->job_commit_ms, 0) : 0;
    Finding f = NewFinding("io-write-bound");
    f.confidence = {ConfidenceLevel::kMedium,
                    "commit time is measured (SQL commit metrics, job end after the last task); "
                    "how much a committer change saves depends on the file system"};
    f.severity = compute_bound                           ? Severity::kInfo
                 : p.Ratio(write_wall) >= kCriticalShare ? Severity::kCritical
                                                         : Severity::kWarning;
    if (compute_bound) {
      f.confidence = {ConfidenceLevel::kLow,
                      "the write stage was slow, but its tasks were " +
                          Fixed(100 * task_cpu_share, 0) + "% on CPU and " +
                          Fixed(100 * task_commit_share, 0) +
                          "% committing: the time is compute or partitioning, only the commit "
                          "is I/O"};
    }
    f.stage_ids = {write->stage_id};
    f.evidence = {
        {"job_commit_gap_ms", static_cast<double>(gap), "ms"},
        {"job_commit_gap_share", p.Ratio(gap), "ratio"},
        {"sql_job_commit_ms", static_cast<double>(sql_job_commit_ms), "ms"},
        {"task_commit_ms", static_cast<double>(write->task_commit_ms), "ms"},
        {"written_files", static_cast<double>(write->written_files), "count"},
        {"output_bytes", static_cast<double>(write->output_bytes), "bytes"},
        {"write_task_p95_ms", static_cast<double>(write->p95_task_ms), "ms"},
        {"compute_task_p95_ms", static_cast<double>(compute_p95), "ms"},
    };
    f.title = "Writing output costs " + HumanDurationMs(write_wall) + " in job " +
              std::to_string(job_id) +
              (gap_fires ? " (" + HumanDurationMs(gap) + " committing after the last task)"
                         : std::string());
    f.explanation = "Job " + std::to_string(job_id) + " writes " + HumanBytes(write->output_bytes) +
                    " in " + std::to_string(write->written_files) + " files (stage " +
                    std::to_string(write->stage_id) + (delta ? ", a Delta table" : "") + "). ";
    if (gap >= kExplainCommitMs) {
      f.explanation +=
          "After its last task ended, the driver needed " + HumanDurationMs(gap) + " (" +
          Fixed(100 * p.Ratio(gap), 0) + "% of the run) to commit the output" +
          (commit.after_job_ms > 0
               ? std::string(", ") + HumanDurationMs(commit.after_job_ms) +
                     " of it after the job had ended (Spark SQL's \"job commit time\": " +
                     std::to_string(sql_job_commit_ms) + " ms)"
               : std::string()) +
          "; all executors sat idle meanwhile unless other jobs ran. ";
      if (hadoop_committer) {
        f.explanation +=
            "With the classic FileOutputCommitter the job commit renames every file one by one; "
            "on an object store (S3, GCS, ABFS) a rename is a copy. ";
      }
    }
    if (delta) {
      f.explanation +=
          "Delta writes its data files in their final place and commits by adding one entry to "
          "the transaction log: there are no renames, so Hadoop/S3A committer settings do not "
          "apply. ";
    } else if (databricks) {
      f.explanation +=
          "Databricks commits file writes with its own transactional protocol (DBIO) instead of "
          "renames, so Hadoop/S3A committer settings do not apply. ";
    }
    AddS3aEvidence(m, write->stage_id, f);
    const double cpu_share = CpuShare(m, write->stage_id);
    if (tasks_fire) {
      f.explanation +=
          "Its tasks' p95 was " + HumanDurationMs(write->p95_task_ms) + " against " +
          HumanDurationMs(compute_p95) + " in the other stages; tasks spent " +
          HumanDurationMs(write->task_commit_ms) + " committing their files" +
          (cpu_share > 0 ? " and " + Fixed(100 * cpu_share, 0) + "% of their run time on CPU"
                         : std::string()) +
          ".";
    }
    if (hadoop_committer && gap >= kExplainCommitMs) {
      f.recommendations.push_back({"spark.hadoop.fs.s3a.committer.name", "magic",
                                   "the S3A magic committer writes files in place and commits "
                                   "with a manifest instead of renames (on S3; Hadoop 3.3+)"});
      f.recommendations.push_back({"spark.sql.sources.commitProtocolClass",
                                   "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol",
                                   "routes Spark SQL writes through the S3A committers"});
      f.recommendations.push_back(
          {"spark.sql.parquet.output.committer.class",
           "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter",
           "needed with the above for Parquet output"});
    }
    if (delta && gap_fires) {
      f.recommendations.push_back(
          {"",
           "check for concurrent writers to the table and for a long _delta_log without a recent "
           "checkpoint",
           "a Delta commit is a log write plus a conflict check; " + HumanDurationMs(gap) +
               " after the last task points at conflict retries or a slow log, not at renames"});
    }
    if (write->written_files > 100 && write->output_bytes / write->written_files < 32 * kMiB) {
      int64_t files = std::max<int64_t>(1, (write->output_bytes + 128 * kMiB - 1) / (128 * kMiB));
      const std::string reason = std::to_string(write->written_files) + " files of " +
                                 HumanBytes(write->output_bytes / write->written_files) +
                                 " on average; ~128 MiB files cut the per-file write and commit "
                                 "cost and the cost of reading them later";
      if (delta) {
        f.recommendations.push_back(
            {"spark.databricks.delta.optimizeWrite.enabled", "true",
             reason + " (optimized writes bin the output into larger files; Delta 3.1+ and "
                      "Databricks)"});
      } else {
        f.recommendations.push_back(
            {"", "coalesce/repartition to " + std::to_string(files) + " files before writing",
             reason});
      }
    }
    if (tasks_fire) {
      const bool busy = cpu_share >= 0.7;
      f.recommendations.push_back(
          {"",
           busy ? "treat stage " + std::to_string(write->stage_id) +
                      " as compute: spread it over more tasks and cores, or cut the work per row "
                      "(profile it with sparkprof flamegraph --stage " +
                      std::to_string(write->stage_id) + ")"
                : "look at what stage " + std::to_string(write->stage_id) +
                      "'s tasks wait on (uploads, throttling, slow reads): sparkprof flamegraph "
                      "--stage " +
                      std::to_string(write->stage_id),
           cpu_share > 0
               ? Fixed(100 * cpu_share, 0) + "% of the write tasks' run time was CPU, so " +
                     (busy ? std::string("they were encoding and computing, not "
                                         "waiting on storage")
                           : std::string("much of it was spent waiting"))
               : std::string("the write tasks' CPU time is not in the log")});
    }
    if (hadoop_committer) {
      f.impact.time_saved_ms_low = gap / 2;
      f.impact.time_saved_ms_high = gap * 9 / 10;
      f.impact.method =
          "50-90% of the job-commit time (a manifest commit replaces per-file renames but "
          "still lists and writes); core-hours: every slot was held during the commit";
    } else {
      f.impact.time_saved_ms_low = 0;
      f.impact.time_saved_ms_high = gap / 2;
      f.impact.method =
          "up to half of the job-commit time (the commit already avoids renames; what remains "
          "is log writes and conflict checks); core-hours: every slot was held during the commit";
    }
    f.impact.core_hours_saved_low = CoreHours(f.impact.time_saved_ms_low, input.slots());
    f.impact.core_hours_saved_high = CoreHours(f.impact.time_saved_ms_high, input.slots());
    f.cost_ms = write_wall;
    out.push_back(std::move(f));
  }
}

}  // namespace sparkprof::diagnosis::rules
