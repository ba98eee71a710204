// Writes realistic Spark event logs from a small description, in Spark's own event order and
// key names. Used for the README demo, for fixtures (each codec), and for diagnosis-rule tests
// where no shared log shows a problem: the problem is injected here, on purpose and visibly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sparkprof::testing {

struct SyntheticStage {
  std::string name;
  int tasks = 8;
  int64_t task_ms = 2000;  // typical task run time
  double jitter = 0.2;     // +-fraction of task_ms, deterministic
  int skewed_tasks = 0;    // this many tasks take skew_factor x longer and read more
  double skew_factor = 1.0;
  // The skewed tasks are the first partitions (launched first: each the first task of the stage
  // on its executor) instead of the last.
  bool skewed_first = false;
  // Each slot's first task of the stage takes this much longer on the same data: the executors'
  // warm-up (class loading, JIT), paid by every task of the first wave.
  int64_t first_wave_extra_ms = 0;
  int64_t input_bytes_per_task = 0;
  int64_t output_bytes_per_task = 0;
  int64_t shuffle_read_bytes_per_task = 0;
  int64_t shuffle_write_bytes_per_task = 0;
  int64_t shuffle_fetch_wait_ms_per_task = 0;
  int64_t memory_spill_bytes_per_task = 0;  // only on skewed tasks when skewed_tasks > 0
  int64_t disk_spill_bytes_per_task = 0;
  double gc_fraction = 0.03;  // of run time
  int failed_attempts = 0;    // tasks that fail once (ExceptionFailure) and are retried
  std::string failure_class = "java.lang.OutOfMemoryError";
  std::string failure_message = "Java heap space";
  bool write_stage = false;  // adds SQL write metrics (task/job commit time, files)
  int64_t job_commit_ms = 0;
  std::vector<int> parents;  // indices of earlier stages
  // How failed_attempts fail: "ExceptionFailure" (failure_class/failure_message) or "FetchFailed"
  // (failure_message is the fetch error; the block manager is the next executor's).
  std::string failure_reason = "ExceptionFailure";
  // This many of the slowest (skewed) tasks get a speculative copy launched at half their run time
  // on another executor; the copy is killed when the original succeeds ("another attempt
  // succeeded").
  int speculative_copies = 0;
};

struct SyntheticApp {
  std::string app_name = "nightly-etl";
  std::string app_id = "application_1700000000000_0042";
  std::string spark_version = "3.5.1";
  std::string user = "etl";
  int executors = 4;
  int cores_per_executor = 4;
  int64_t executor_memory_mb = 8192;
  int64_t start_ms = 1700000000000;
  int64_t executor_start_delay_ms = 20000;  // application start until executors register
  // When >= 0, each executor's "Request Time" (Spark 3.1+): this long after the start.
  int64_t executor_request_delay_ms = -1;
  std::string master = "yarn";         // spark.master
  bool executors_on_one_host = false;  // every executor on host "127.0.0.1"
  int64_t driver_gap_ms = 1500;        // between jobs
  std::string sql_description = "INSERT OVERWRITE TABLE sales_daily SELECT ...";
  std::vector<std::pair<std::string, std::string>> extra_properties;
  std::vector<SyntheticStage> stages;  // one job per stage, in order
  int removed_executors = 0;           // removed at the end, for removed_reason
  std::string removed_reason =
      "Container killed by YARN for exceeding physical memory limits. 9.1 GB of 9 GB physical "
      "memory used.";
  bool end_application = true;  // false: no ApplicationEnd (in-progress log)
};

// The README demo: an ETL with a skewed join that spills, a slow write, and a wait for executors.
SyntheticApp DemoApp();

// JSON lines, newline-terminated.
std::string GenerateEventLog(const SyntheticApp& app);

}  // namespace sparkprof::testing
