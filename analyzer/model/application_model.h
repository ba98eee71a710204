// The model of one Spark application attempt, built from typed events (live or from a log).
// Everything downstream -- summaries, rules, reports, metrics -- reads this.
//
// Memory: one TaskAttempt is at most 232 bytes (static_assert below) and tasks are the only thing
// that grows with the log; failure details live in a side table, strings are interned, per-stage
// task lists are one index array built at Finish(). 10M task attempts fit in ~2.3 GB (the History
// Server needs several KB each).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/eventlog/events.h"
#include "analyzer/model/streaming_queries.h"

namespace sparkprof::model {

using eventlog::ExecutorMetricPeaks;
using eventlog::TaskLocality;

inline constexpr uint32_t kNone = UINT32_MAX;

// From `start_ms` to `end_ms` when both are known and in order; -1 otherwise (an end the log does
// not have, or clocks that disagree).
inline constexpr int64_t ElapsedMs(int64_t start_ms, int64_t end_ms) {
  return start_ms >= 0 && end_ms >= start_ms ? end_ms - start_ms : -1;
}

// Interned strings (executor ids, hosts): tasks refer to them by index.
class StringTable {
 public:
  uint32_t Intern(std::string_view text);
  const std::string& Get(uint32_t index) const { return strings_[index]; }
  size_t size() const { return strings_.size(); }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> index_;
};

enum class TaskEndKind : uint8_t {
  kNotEnded = 0,  // TaskStart seen, no TaskEnd (incomplete log, or still running)
  kSuccess,
  kExceptionFailure,
  kFetchFailed,
  kExecutorLostFailure,
  kTaskKilled,
  kResubmitted,
  kTaskCommitDenied,
  kTaskResultLost,
  kUnknownReason,
  kOther,
};
const char* TaskEndKindName(TaskEndKind kind);
TaskEndKind ParseTaskEndKind(std::string_view reason);

// Compact per-attempt metrics; times in ms unless named _ns.
struct TaskAttemptMetrics {
  int64_t executor_cpu_time_ns = 0;
  int64_t executor_deserialize_cpu_time_ns = 0;
  int64_t shuffle_write_time_ns = 0;
  int64_t peak_execution_memory_bytes = 0;
  int64_t result_size_bytes = 0;
  int64_t memory_bytes_spilled = 0;
  int64_t disk_bytes_spilled = 0;
  int64_t shuffle_remote_bytes_read = 0;
  int64_t shuffle_local_bytes_read = 0;
  int64_t shuffle_remote_bytes_read_to_disk = 0;
  int64_t shuffle_records_read = 0;
  int64_t shuffle_bytes_written = 0;
  int64_t shuffle_records_written = 0;
  int64_t input_bytes_read = 0;
  int64_t input_records_read = 0;
  int64_t output_bytes_written = 0;
  int64_t output_records_written = 0;
  // When peak_execution_memory_bytes was taken from Photon's operators (summed: an upper bound),
  // the largest operator's peak (a lower bound); 0 otherwise. See eventlog::TaskInfo.
  int64_t photon_peak_memory_largest_operator_bytes = 0;
  uint32_t executor_run_time_ms = 0;
  uint32_t executor_deserialize_time_ms = 0;
  uint32_t jvm_gc_time_ms = 0;
  uint32_t result_serialization_time_ms = 0;
  uint32_t shuffle_fetch_wait_time_ms = 0;
  uint32_t shuffle_remote_requests_duration_ms = 0;

  static TaskAttemptMetrics From(const eventlog::TaskMetrics& metrics);
  int64_t shuffle_bytes_read() const {
    return shuffle_remote_bytes_read + shuffle_local_bytes_read;
  }
};

struct TaskAttempt {
  int64_t task_id = -1;
  int64_t launch_time_ms = -1;
  int64_t finish_time_ms = 0;  // 0 while not ended
  int64_t getting_result_time_ms = 0;
  int32_t stage_id = -1;
  int32_t index = -1;
  int16_t stage_attempt = 0;
  int16_t attempt = 0;
  uint32_t executor = kNone;  // StringTable index
  uint32_t host = kNone;      // StringTable index
  uint32_t failure = kNone;   // index into ApplicationModel::task_failures
  TaskLocality locality = TaskLocality::kUnknown;
  TaskEndKind end = TaskEndKind::kNotEnded;
  bool speculative = false;
  bool has_start = false;
  bool has_metrics = false;
  // A "Resubmitted" TaskEnd followed this attempt's Success: its shuffle output was lost with its
  // executor and a new attempt recomputed it. The attempt keeps its Success and metrics.
  bool resubmitted = false;
  TaskAttemptMetrics metrics;

  bool ended() const { return end != TaskEndKind::kNotEnded; }
  // Launch to finish, as the Spark UI shows it; -1 when unknown.
  int64_t duration_ms() const { return ended() ? ElapsedMs(launch_time_ms, finish_time_ms) : -1; }
};
static_assert(sizeof(TaskAttempt) <= 232, "TaskAttempt must stay compact (10M-task logs)");

struct TaskFailure {
  std::string reason;           // as written ("ExceptionFailure", ...)
  std::string exception_class;  // ExceptionFailure "Class Name"
  std::string message_head;     // first line of the description / kill / loss reason
  std::string root_cause;       // the innermost cause's first line (eventlog::TaskEndReason)
  std::string lost_executor_id;
  bool exit_caused_by_app = true;
  int32_t fetch_shuffle_id = -1;
  std::string fetch_host;
};

enum class StageStatus : uint8_t { kActive, kComplete, kFailed, kPending };
const char* StageStatusName(StageStatus status);

struct AccumulableValue {
  std::string name;
  int64_t value = 0;
  bool is_sql = false;
};

// Hadoop S3A work the live plugin measured (spark-plugin S3aStatistics.java; event logs carry
// none): for a stage attempt, its tasks' per-thread figures; for the application, every executor
// JVM's totals. Request fields are meaningful only with request_counts (stage rows need
// Hadoop >= 3.3.5's per-thread IOStatisticsContext). Durations are summed request durations.
struct S3aIo {
  bool measured = false;
  bool request_counts = false;
  int64_t tasks = 0;
  int64_t bytes_written = 0;
  int64_t bytes_read = 0;
  int64_t write_operations = 0;
  int64_t read_operations = 0;
  int64_t put_requests = 0;
  int64_t multipart_initiated = 0;
  int64_t multipart_completed = 0;
  int64_t multipart_parts = 0;
  int64_t get_requests = 0;
  int64_t head_requests = 0;
  int64_t list_requests = 0;
  int64_t delete_requests = 0;
  int64_t copy_requests = 0;
  int64_t retries = 0;
  int64_t throttled = 0;
  int64_t put_ms = 0;
  int64_t multipart_initiate_ms = 0;
  int64_t get_ms = 0;
  int64_t head_ms = 0;
  int64_t list_ms = 0;

  // Adds `other` field by field (saturating at INT64_MAX); request_counts stays true only while
  // every part had them.
  void Add(const S3aIo& other) {
    auto sum = [](int64_t& into, int64_t value) {
      if (value <= 0) return;
      into = into > INT64_MAX - value ? INT64_MAX : into + value;
    };
    request_counts = measured ? request_counts && other.request_counts : other.request_counts;
    measured = true;
    sum(tasks, other.tasks);
    sum(bytes_written, other.bytes_written);
    sum(bytes_read, other.bytes_read);
    sum(write_operations, other.write_operations);
    sum(read_operations, other.read_operations);
    sum(put_requests, other.put_requests);
    sum(multipart_initiated, other.multipart_initiated);
    sum(multipart_completed, other.multipart_completed);
    sum(multipart_parts, other.multipart_parts);
    sum(get_requests, other.get_requests);
    sum(head_requests, other.head_requests);
    sum(list_requests, other.list_requests);
    sum(delete_requests, other.delete_requests);
    sum(copy_requests, other.copy_requests);
    sum(retries, other.retries);
    sum(throttled, other.throttled);
    sum(put_ms, other.put_ms);
    sum(multipart_initiate_ms, other.multipart_initiate_ms);
    sum(get_ms, other.get_ms);
    sum(head_ms, other.head_ms);
    sum(list_ms, other.list_ms);
  }
};

struct StageAttempt {
  int32_t stage_id = -1;
  int32_t attempt = 0;
  std::string name;
  std::string details_head;
  int32_t num_tasks = 0;
  std::vector<int32_t> parent_ids;
  int32_t resource_profile_id = 0;
  int64_t submission_time_ms = -1;
  int64_t completion_time_ms = -1;
  StageStatus status = StageStatus::kPending;
  bool submitted = false;  // a StageSubmitted event was seen
  bool completed_event = false;
  std::string failure_reason;
  std::string scheduler_pool;
  std::vector<int32_t> job_ids;
  // Final accumulator values from StageCompleted, by accumulator id (SQL metrics included).
  std::map<int64_t, AccumulableValue> accumulables;
  // Executor metric peaks per executor for this stage (StageExecutorMetrics).
  std::map<std::string, ExecutorMetricPeaks> executor_peaks;
  S3aIo s3a;  // live runs only
  // [first, last) into ApplicationModel::stage_task_order, set by Finish().
  uint32_t tasks_begin = 0;
  uint32_t tasks_end = 0;
};

struct Job {
  int32_t job_id = -1;
  int64_t submission_time_ms = -1;
  int64_t completion_time_ms = -1;
  std::vector<int32_t> stage_ids;
  std::string result;  // "JobSucceeded", "JobFailed", "" when never ended
  std::string failure_message_head;
  int64_t sql_execution_id = -1;
  std::string job_group;
  std::string description;
  // A micro-batch's job (its query id and batch id; "" and -1 otherwise). Its job group is the
  // query's run id.
  std::string streaming_query_id;
  int64_t streaming_batch_id = -1;
};

struct Executor {
  std::string executor_id;
  std::string host;
  int32_t total_cores = 0;
  int32_t resource_profile_id = 0;
  int64_t added_time_ms = -1;
  // When the scheduler backend asked for it (the log's "Request Time"), -1 when not logged:
  // added - requested is the executor's start-up (container or pod, JVM, registration).
  int64_t request_time_ms = -1;
  int64_t removed_time_ms = -1;
  std::string removed_reason;
  // The message of the last java.lang.OutOfMemoryError its tasks reported ("Java heap space",
  // "Direct buffer memory"): which memory ran out before an exit with code 52.
  std::string out_of_memory_message;
  int64_t max_memory_bytes = 0;  // block manager storage memory
  ExecutorMetricPeaks peaks;     // max over its task and stage peaks
  bool is_driver() const { return executor_id == "driver"; }
};

struct SqlMetric {
  int64_t accumulator_id = -1;
  std::string node_name;
  std::string name;
  std::string type;  // sum, size, timing, nsTiming, average
  int64_t value = 0;
  bool has_value = false;
};

struct SqlExecution {
  int64_t execution_id = -1;
  int64_t root_execution_id = -1;
  std::string description;
  std::string details_head;
  std::string physical_plan;
  int64_t start_time_ms = -1;
  int64_t end_time_ms = -1;
  std::string error_message_head;
  std::vector<int32_t> job_ids;
  std::vector<SqlMetric> metrics;
  // The physical plan tree: the latest one (AQE re-plans replace it; the final one is what ran).
  std::vector<eventlog::PlanNode> plan;
};

// One Spark SQL file write (FileFormatWriter with BasicWriteJobStatsTracker, Spark 3.2+). Its tasks
// sum "task commit time" into the write stage's accumulables; the job commit runs on the driver
// after the write job's JobEnd, and the driver then posts "number of written files", "written
// output", "number of output rows", "number of dynamic part" and "job commit time" in a
// SparkListenerDriverAccumUpdates. The tracker creates its six metrics one after another, so their
// accumulator ids are consecutive around the task commit time: files t-4, bytes t-3, rows t-2,
// dynamic parts t-1, task commit t, job commit t+1. Plans that do not list the write node (Delta on
// Databricks) leave the driver-side ids unnamed; they are recognised by that layout when one driver
// update holds exactly those five ids. Values are -1 when the log does not have them.
struct SqlWrite {
  int64_t execution_id = -1;
  int64_t task_commit_accumulator_id = -1;
  int64_t task_commit_ms = -1;
  int64_t job_commit_ms = -1;
  int64_t written_files = -1;
  int64_t written_bytes = -1;
  int64_t written_rows = -1;
  bool names_from_layout = false;  // driver-side metrics named by the id layout, not by the plan
  std::vector<int32_t> stage_ids;  // stages whose accumulables carry the task commit time
};

// A persisted RDD (a cached DataFrame's, or persist() on an RDD) across the stages that listed it.
struct CachedRdd {
  int32_t rdd_id = -1;
  std::string name;
  int32_t partitions = 0;
  int32_t max_cached_partitions = 0;
  int64_t max_memory_bytes = 0;
  int64_t max_disk_bytes = 0;
  bool use_memory = false;
  bool use_disk = false;
  // Completed stage attempts that listed it, in completion order, with its cached partitions then.
  struct Use {
    int32_t stage_id;
    int32_t stage_attempt;
    int32_t cached_partitions;
  };
  std::vector<Use> uses;
};

struct ResourceProfile {
  int32_t id = 0;
  int64_t executor_cores = -1;
  int64_t executor_memory_mb = -1;
  int64_t executor_memory_overhead_mb = -1;
  int64_t executor_off_heap_mb = -1;
  double task_cpus = -1;
};

struct ExclusionRecord {
  std::string event_name;
  int64_t timestamp_ms = -1;
  std::string executor_or_host;
  int32_t stage_id = -1;
  bool excluded = true;
};

struct ApplicationModel {
  // Identity.
  std::string app_id;
  std::string app_name;
  std::string attempt_id;
  std::string user;
  std::string spark_version;
  bool databricks = false;
  // Times. start: ApplicationStart (else the first timestamp seen); end: ApplicationEnd (else the
  // last timestamp seen). complete: an ApplicationEnd was read.
  int64_t start_time_ms = -1;
  int64_t end_time_ms = -1;
  int64_t first_event_time_ms = -1;
  int64_t last_event_time_ms = -1;
  bool saw_application_start = false;
  bool complete = false;
  int32_t exit_code = -1;

  std::vector<std::pair<std::string, std::string>> spark_properties;
  std::vector<std::pair<std::string, std::string>> jvm_information;
  std::map<int32_t, ResourceProfile> resource_profiles;

  std::vector<Executor> executors;  // in order of first appearance
  std::map<int32_t, Job> jobs;
  std::map<std::pair<int32_t, int32_t>, StageAttempt> stages;  // (stage id, attempt)
  std::map<int64_t, SqlExecution> sql_executions;
  std::vector<SqlWrite> sql_writes;          // by task commit accumulator id (Finish())
  std::map<int32_t, CachedRdd> cached_rdds;  // by RDD id
  std::vector<ExclusionRecord> exclusions;
  StreamingModel streaming;  // Structured Streaming queries and their batches

  StringTable strings;
  std::vector<TaskAttempt> tasks;  // in order of first appearance
  std::vector<TaskFailure> task_failures;
  std::vector<uint32_t> stage_task_order;  // task indices grouped by stage attempt (Finish())

  // Event-level counters (what the log says, independent of de-duplication).
  std::map<std::string, int64_t> task_end_reasons;  // TaskEnd events per "Reason"
  int64_t task_end_events = 0;
  int64_t task_start_events = 0;
  int64_t executor_added_events = 0;
  int64_t executor_removed_events = 0;
  int64_t max_concurrent_executors = 0;
  std::map<std::string, int64_t> executor_removal_reasons;  // first line: count
  int64_t duplicate_task_ends = 0;    // a second TaskEnd for the same task id + attempt
  int64_t resubmitted_task_ends = 0;  // "Resubmitted" after the attempt's Success (not duplicates)
  int64_t task_ends_without_start = 0;  // continuation logs
  // Tasks whose "Peak Execution Memory" was 0 and whose peak was taken from Photon's per-operator
  // "peak memory usage" (summed over the task's operators: an upper bound; see
  // eventlog::TaskInfo::photon_peak_memory_bytes).
  int64_t photon_peak_memory_tasks = 0;
  // Tasks whose "Shuffle Write Time" was 0 and whose time was taken from Photon's "(part of
  // shuffle file write)" timings (eventlog::TaskInfo::photon_shuffle_write_ns).
  int64_t photon_shuffle_write_tasks = 0;
  int64_t stage_completions_without_submit = 0;
  S3aIo s3a;  // the executors' S3A totals; live runs only

  // Lookups.
  const std::string* SparkProperty(std::string_view key) const;
  const Executor* FindExecutor(std::string_view executor_id) const;
  // Task indices of one stage attempt (valid after Finish()).
  std::pair<const uint32_t*, const uint32_t*> TasksOf(const StageAttempt& stage) const {
    return {stage_task_order.data() + stage.tasks_begin, stage_task_order.data() + stage.tasks_end};
  }
  int64_t duration_ms() const {
    return (start_time_ms >= 0 && end_time_ms >= start_time_ms) ? end_time_ms - start_time_ms : 0;
  }
};

}  // namespace sparkprof::model
