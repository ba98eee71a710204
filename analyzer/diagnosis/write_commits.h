// Where a write job's output was committed after its tasks: the job commit. Two places hold it:
//   * inside the job: its last task ended, the job had not (the RDD writers and the synthetic
//     demo commit there);
//   * after the job: Spark SQL's FileFormatWriter commits after JobEnd and reports the time it took
//     as the SQL metric "job commit time" (model::SqlWrite); the commit runs from the job end for
//     that long, bounded by the SQL execution's end.
// Shared by the phase breakdown (I/O write phase) and the io-write-bound rule so both count the
// same milliseconds.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/diagnosis/stage_stats.h"
#include "analyzer/model/application_model.h"

namespace sparkprof::diagnosis {

struct WriteCommit {
  int32_t job_id = -1;
  int32_t write_stage_id = -1;  // the job's last write stage with successful tasks (-1: none)
  int64_t last_task_end_ms = -1;
  int64_t job_end_ms = -1;
  int64_t in_job_gap_ms = 0;   // job end - last task end
  int64_t after_job_ms = 0;    // SQL "job commit time" after the job end, within the SQL end
  int64_t commit_end_ms = -1;  // job end + after_job_ms
  const model::SqlWrite* write = nullptr;  // the SQL write of this job, when the log names one
  int64_t commit_ms() const { return in_job_gap_ms + after_job_ms; }
};

// One entry per ended job whose stages write (StageStats::write_stage) and ran tasks.
std::vector<WriteCommit> ComputeWriteCommits(const model::ApplicationModel& model,
                                             const std::vector<StageStats>& stages);

}  // namespace sparkprof::diagnosis
