// io-write-bound: writing the output (tasks committing files, the driver committing the job)
// takes a large part of the run.
//
// Signals: for each job with a write stage (SQL "task commit time"/"number of written files", or
// output bytes without shuffle output), the commit gap = job end - last task end (the driver's job
// commit: renames, manifest writes); task commit time; write-stage task p95 against the p95 of the
// other stages.
// Thresholds (ours; analyzer-facts.md d.5 notes that no tool flags this; ldbc_snb_datagen_spark#324
// shows serial renames at 67% of runtime):
//   * commit gap >= 10 s AND >= 5% of wall time, or
//   * write-stage task p95 >= 2x the p95 of the other stages and >= 10 s;
//   critical when the commit gap or write time is >= 25% of wall time.
// Small files: > 100 files averaging < 32 MiB (DataFlint: < 3 MB and > 100 files is its alert; we
// also flag moderately small files because each costs a rename on object stores).
#include <algorithm>
#include <cmath>
#include <map>

#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr int64_t kMinGapMs = 10'000;
constexpr double kWarningShare = 0.05;
constexpr double kCriticalShare = 0.25;
constexpr double kP95Ratio = 2.0;
constexpr int64_t kMiB = 1 << 20;
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
  std::map<int32_t, int64_t> last_task_end;
  for (const model::TaskAttempt& task : m.tasks) {
    if (task.ended())
      last_task_end[task.stage_id] = std::max(last_task_end[task.stage_id], task.finish_time_ms);
  }
  for (const auto& [job_id, job] : m.jobs) {
    const StageStats* write = nullptr;
    int64_t last_end = -1;
    for (int32_t id : job.stage_ids) {
      auto stage = by_id.find(id);
      if (stage != by_id.end() && stage->second->write_stage && stage->second->successful_tasks > 0)
        write = stage->second;
      auto end = last_task_end.find(id);
      if (end != last_task_end.end()) last_end = std::max(last_end, end->second);
    }
    if (write == nullptr || job.completion_time_ms < 0 || last_end < 0) continue;
    const int64_t gap = std::max<int64_t>(job.completion_time_ms - last_end, 0);
    const bool gap_fires = gap >= kMinGapMs && p.Ratio(gap) >= kWarningShare;
    const bool tasks_fire = compute_p95 > 0 && write->p95_task_ms >= kP95Ratio * compute_p95 &&
                            write->p95_task_ms >= kMinGapMs;
    if (!gap_fires && !tasks_fire) continue;
    const int64_t write_wall = gap + (tasks_fire ? std::max<int64_t>(write->duration_ms, 0) : 0);
    Finding f;
    f.rule = "io-write-bound";
    f.severity = p.Ratio(write_wall) >= kCriticalShare ? Severity::kCritical : Severity::kWarning;
    f.stage_ids = {write->stage_id};
    f.recipe = "docs/recipes/s3-write-slow.md";
    f.evidence = {
        {"job_commit_gap_ms", static_cast<double>(gap), "ms"},
        {"job_commit_gap_share", p.Ratio(gap), "ratio"},
        {"task_commit_ms", static_cast<double>(write->task_commit_ms), "ms"},
        {"written_files", static_cast<double>(write->written_files), "count"},
        {"output_bytes", static_cast<double>(write->output_bytes), "bytes"},
        {"write_task_p95_ms", static_cast<double>(write->p95_task_ms), "ms"},
        {"compute_task_p95_ms", static_cast<double>(compute_p95), "ms"},
    };
    f.title = "Writing output costs " + Millis(write_wall) + " in job " + std::to_string(job_id) +
              (gap_fires ? " (" + Millis(gap) + " committing after the last task)" : std::string());
    f.explanation = "Job " + std::to_string(job_id) + " writes " + Bytes(write->output_bytes) +
                    " in " + std::to_string(write->written_files) + " files (stage " +
                    std::to_string(write->stage_id) + "). ";
    if (gap_fires) {
      f.explanation +=
          "After its last task ended, the driver needed " + Millis(gap) + " (" +
          Fixed(100 * p.Ratio(gap), 0) +
          "% of the run) to finish the job: that is the job "
          "commit, which with the classic FileOutputCommitter renames every file one by "
          "one; on an object store (S3, GCS, ABFS) a rename is a copy. All executors sat "
          "idle meanwhile. ";
    }
    if (tasks_fire) {
      f.explanation += "Its tasks' p95 was " + Millis(write->p95_task_ms) + " against " +
                       Millis(compute_p95) + " in the other stages; tasks also spent " +
                       Millis(write->task_commit_ms) + " committing their files.";
    }
    f.recommendations.push_back({"spark.hadoop.fs.s3a.committer.name", "magic",
                                 "the S3A magic committer writes files in place and commits with a "
                                 "manifest instead of renames (on S3; Hadoop 3.3+)"});
    f.recommendations.push_back({"spark.sql.sources.commitProtocolClass",
                                 "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol",
                                 "routes Spark SQL writes through the S3A committers"});
    f.recommendations.push_back({"spark.sql.parquet.output.committer.class",
                                 "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter",
                                 "needed with the above for Parquet output"});
    if (write->written_files > 100 && write->output_bytes / write->written_files < 32 * kMiB) {
      int64_t files = std::max<int64_t>(1, (write->output_bytes + 128 * kMiB - 1) / (128 * kMiB));
      f.recommendations.push_back(
          {"", "coalesce/repartition to " + std::to_string(files) + " files before writing",
           std::to_string(write->written_files) + " files of " +
               Bytes(write->output_bytes / write->written_files) +
               " on average; ~128 MiB files cut the per-file commit cost"});
    }
    f.impact.time_saved_ms_low = gap / 2;
    f.impact.time_saved_ms_high = gap * 9 / 10;
    f.impact.core_hours_saved_low = CoreHours(f.impact.time_saved_ms_low, input.slots());
    f.impact.core_hours_saved_high = CoreHours(f.impact.time_saved_ms_high, input.slots());
    f.impact.method =
        "50-90% of the job-commit gap (a manifest commit replaces per-file renames but "
        "still lists and writes); core-hours: every slot was held during the gap";
    f.cost_ms = write_wall;
    out.push_back(std::move(f));
  }
}

}  // namespace sparkprof::diagnosis::rules
