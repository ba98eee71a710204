// Per-stage-attempt figures the rules share: task-time distribution, what the longest task read
// compared with the median task, spill and GC and where they sit, write-commit metrics.
// Computed once from the model so every rule reads the same numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/model/application_model.h"

namespace sparkprof::diagnosis {

struct StageStats {
  int32_t stage_id = -1;
  int32_t attempt = 0;
  std::string name;
  int32_t num_tasks = 0;
  int64_t duration_ms = -1;  // completion - submission, -1 when unknown
  int64_t submission_ms = -1;
  int64_t completion_ms = -1;
  // First task launch to last task finish: the time the stage actually ran, without the wait for
  // parents or for slots held by concurrent stages before its first task; -1 when no task ended.
  int64_t task_span_ms = -1;

  // Over successful attempts (launch to finish). Nearest-rank percentiles.
  int64_t successful_tasks = 0;
  int64_t median_task_ms = 0;
  int64_t p75_task_ms = 0;
  int64_t p95_task_ms = 0;
  int64_t max_task_ms = 0;
  int64_t total_task_ms = 0;  // all ended attempts, failed ones included
  int64_t failed_attempts = 0;
  int64_t failed_task_ms = 0;

  // Bytes read by a task: input + shuffle read. Records likewise.
  int64_t median_read_bytes = 0;
  int64_t max_task_read_bytes = 0;  // of the longest successful task
  int64_t median_read_records = 0;
  int64_t max_task_read_records = 0;
  std::string max_task_host;  // where the longest task ran
  // The stage's first wave (each executor's first task in it, >= 2 executors) was slow as a whole
  // (every one above 2x the median) with the longest among them: warm-up (class loading, JIT,
  // whole-stage code generation, broadcast fetch), not one straggler.
  bool longest_is_executor_first_task = false;
  // Median duration of the other tasks on the longest task's host (0 when it ran nothing else).
  int64_t max_task_host_median_ms = 0;

  int64_t run_time_ms = 0;  // executor run time summed
  int64_t cpu_time_ns = 0;  // executor (JVM thread) CPU time summed
  int64_t gc_ms = 0;
  int64_t memory_spill_bytes = 0;
  int64_t disk_spill_bytes = 0;
  // Share of spill / GC in "slow" tasks: successful tasks taking over 2x the median.
  int64_t slow_tasks = 0;
  int64_t slow_task_spill_bytes = 0;  // memory + disk
  int64_t slow_task_gc_ms = 0;
  int64_t peak_execution_memory_max = 0;  // of one task (Photon: see photon_figures)
  // Photon tasks: the largest operator's peak of one task (a lower bound; spark-rapids-tools'
  // figure) beside peak_execution_memory_max's sum over operators (an upper bound); 0 otherwise.
  int64_t photon_peak_memory_largest_operator_max = 0;
  // Largest execution memory (on-heap + off-heap) one executor held while running this stage,
  // from StageExecutorMetrics (Spark 3.1+ with executor metrics on); 0 when not logged. Off-heap
  // is where Photon and spark.memory.offHeap keep their buffers.
  int64_t executor_execution_memory_peak = 0;

  int64_t input_bytes = 0;
  int64_t shuffle_read_bytes = 0;
  int64_t shuffle_write_bytes = 0;
  int64_t output_bytes = 0;
  int64_t fetch_wait_ms = 0;
  int64_t shuffle_write_ms = 0;
  int64_t scheduling_overhead_ms = 0;  // sum of (duration - executor run time) over ended attempts
  // Figures taken from Photon's SQL metrics because Spark's task metrics are 0 under Photon
  // ("shuffle write time", "spill", "peak memory"; "" when none): shuffle_write_ms from "total time
  // spent producing shuffle files", disk_spill_bytes from "num bytes spilled to disk due to memory
  // pressure", peak_execution_memory_max from the tasks' "peak memory usage" updates summed over
  // their operators (model::ApplicationModel::photon_peak_memory_tasks). Rules using them say so.
  std::string photon_figures;

  // SQL write metrics: task commit time from the stage's accumulables, written files from the
  // driver's update after the job (model::SqlWrite).
  bool write_stage = false;  // has "task commit time" / "number of written files", or writes output
  int64_t task_commit_ms = 0;
  int64_t written_files = 0;
};

std::vector<StageStats> ComputeStageStats(const model::ApplicationModel& model);

// Nearest-rank percentile of an ascending vector: the value at position ceil(p * n).
int64_t NearestRank(const std::vector<int64_t>& sorted, double p);

}  // namespace sparkprof::diagnosis
