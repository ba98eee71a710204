// Typed Spark listener events: what the event-log parser produces and what the live driver
// listener will produce, so everything downstream (model, metrics, rules, reports) is written once.
//
// Units are in the names. Spark writes most times in ms but CPU times and the shuffle write time
// in ns (spark-facts.md 3.3); the parser keeps each in the unit Spark wrote and says which.
// Timestamps are epoch milliseconds. -1 means "not present in the log".
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sparkprof::eventlog {

// Every per-task metric Spark writes in "Task Metrics", in base units.
struct TaskMetrics {
  int64_t executor_deserialize_time_ms = 0;
  int64_t executor_deserialize_cpu_time_ns = 0;
  int64_t executor_run_time_ms = 0;
  int64_t executor_cpu_time_ns = 0;
  int64_t peak_execution_memory_bytes = 0;
  int64_t result_size_bytes = 0;
  int64_t jvm_gc_time_ms = 0;
  int64_t result_serialization_time_ms = 0;
  int64_t memory_bytes_spilled = 0;
  int64_t disk_bytes_spilled = 0;
  // Shuffle read.
  int64_t shuffle_remote_blocks_fetched = 0;
  int64_t shuffle_local_blocks_fetched = 0;
  int64_t shuffle_fetch_wait_time_ms = 0;
  int64_t shuffle_remote_bytes_read = 0;
  int64_t shuffle_remote_bytes_read_to_disk = 0;
  int64_t shuffle_local_bytes_read = 0;
  int64_t shuffle_records_read = 0;
  int64_t shuffle_remote_requests_duration_ms = 0;
  // Push-based shuffle read, from the key Spark actually writes: "Push Based Shuffle".
  int64_t shuffle_push_merged_remote_bytes_read = 0;
  int64_t shuffle_push_merged_local_bytes_read = 0;
  int64_t shuffle_push_merged_fetch_fallback_count = 0;
  int64_t shuffle_push_corrupt_merged_block_chunks = 0;
  // Shuffle write. Spark writes the write time in ns.
  int64_t shuffle_bytes_written = 0;
  int64_t shuffle_write_time_ns = 0;
  int64_t shuffle_records_written = 0;
  // Input / output.
  int64_t input_bytes_read = 0;
  int64_t input_records_read = 0;
  int64_t output_bytes_written = 0;
  int64_t output_records_written = 0;

  int64_t shuffle_total_bytes_read() const {
    return shuffle_remote_bytes_read + shuffle_local_bytes_read;
  }
};

// The subset of ExecutorMetrics (spark-facts.md 4.5) the advice uses; peaks per task or stage.
struct ExecutorMetricPeaks {
  int64_t jvm_heap_memory_bytes = 0;
  int64_t jvm_off_heap_memory_bytes = 0;
  int64_t on_heap_execution_memory_bytes = 0;
  int64_t off_heap_execution_memory_bytes = 0;
  int64_t on_heap_storage_memory_bytes = 0;
  int64_t on_heap_unified_memory_bytes = 0;
  int64_t direct_pool_memory_bytes = 0;
  int64_t process_tree_jvm_rss_memory_bytes = 0;
  int64_t process_tree_python_rss_memory_bytes = 0;
  int64_t minor_gc_count = 0;
  int64_t minor_gc_time_ms = 0;
  int64_t major_gc_count = 0;
  int64_t major_gc_time_ms = 0;
  int64_t total_gc_time_ms = 0;
  bool present = false;

  void MergeMax(const ExecutorMetricPeaks& other);
};

// An SQL/accumulator value attached to a stage or task ("Accumulables").
struct Accumulable {
  int64_t id = 0;
  std::string name;
  int64_t value = 0;  // "Value" (numeric, or a string holding a number for SQL metrics)
  bool has_value = false;
  bool is_sql = false;  // "Metadata":"sql"
};

enum class TaskLocality : uint8_t {
  kUnknown,
  kProcessLocal,
  kNodeLocal,
  kRackLocal,
  kNoPref,
  kAny
};
const char* TaskLocalityName(TaskLocality locality);

struct TaskInfo {
  int64_t task_id = -1;
  int32_t index = -1;
  int32_t attempt = 0;
  int32_t partition_id = -1;
  int64_t launch_time_ms = -1;
  int64_t getting_result_time_ms = 0;
  int64_t finish_time_ms = 0;
  std::string executor_id;
  std::string host;
  TaskLocality locality = TaskLocality::kUnknown;
  bool speculative = false;
  bool failed = false;
  bool killed = false;
  // Photon (Databricks) leaves "Peak Execution Memory" at 0 and reports a "peak memory usage"
  // SQL metric per operator instead: the task's updates summed over its operators (operators of
  // one Photon task run as one pipeline, so their peaks can coincide: an upper bound of the
  // task's peak). Read only once a Photon plan node was seen; 0 otherwise.
  int64_t photon_peak_memory_bytes = 0;
  // The largest of those updates: the peak of the task's largest operator, a lower bound of the
  // task's peak (the definition spark-rapids-tools' profiler uses). Read as the sum is.
  int64_t photon_peak_memory_largest_operator_bytes = 0;
  // Photon leaves "Shuffle Write Time" at 0 too; its shuffle writes time themselves in three
  // nsTiming SQL metrics whose names end "(part of shuffle file write)" (converting columns to
  // rows, sorting rows by partition, waiting on the file's IO): the task's updates of all three,
  // summed (the definition spark-rapids-tools' profiler uses). Read as photon_peak_memory_bytes is.
  int64_t photon_shuffle_write_ns = 0;
};

struct LogStartEvent {
  std::string spark_version;
};

// Databricks writes DBCEventLoggingListenerMetadata instead of LogStart.
struct DatabricksMetadataEvent {
  std::string spark_version;
  int64_t timestamp_ms = -1;
  int64_t rollover_number = -1;
};

struct ApplicationStartEvent {
  std::string app_name;
  std::string app_id;
  std::string attempt_id;
  std::string user;
  int64_t timestamp_ms = -1;
};

struct ApplicationEndEvent {
  int64_t timestamp_ms = -1;
  int32_t exit_code = -1;  // Spark 4.0+
};

struct EnvironmentUpdateEvent {
  std::vector<std::pair<std::string, std::string>> spark_properties;
  std::vector<std::pair<std::string, std::string>> jvm_information;
  std::vector<std::pair<std::string, std::string>> system_properties_subset;  // java.version etc.
};

struct ResourceProfileAddedEvent {
  int32_t resource_profile_id = 0;
  int64_t executor_cores = -1;
  int64_t executor_memory_mb = -1;
  int64_t executor_memory_overhead_mb = -1;
  int64_t executor_off_heap_mb = -1;
  double task_cpus = -1;
};

struct ExecutorAddedEvent {
  int64_t timestamp_ms = -1;
  std::string executor_id;
  std::string host;
  int32_t total_cores = 0;
  int32_t resource_profile_id = 0;
  // "Request Time" (Spark 3.1+, when the scheduler backend recorded when it asked for the
  // executor: YARN, Kubernetes, dynamic allocation), epoch ms; -1 when absent.
  int64_t request_time_ms = -1;
};

struct ExecutorRemovedEvent {
  int64_t timestamp_ms = -1;
  std::string executor_id;
  std::string reason;
};

// Blacklisted/Excluded and their "ForStage"/Node variants.
struct ExclusionEvent {
  std::string event_name;
  int64_t timestamp_ms = -1;
  std::string executor_or_host;
  int32_t stage_id = -1;
  bool excluded = true;  // false for Unexcluded/Unblacklisted
};

struct BlockManagerEvent {
  int64_t timestamp_ms = -1;
  std::string executor_id;
  std::string host;
  int64_t max_memory_bytes = 0;
  bool added = true;
};

// A persisted RDD as a completed stage lists it in "RDD Info" (only RDDs whose storage level uses
// memory or disk are kept): how many of its partitions were cached when the stage ended.
struct CachedRddInfo {
  int32_t rdd_id = -1;
  std::string name;  // "*(1) Project ..." for a cached DataFrame, the RDD's name otherwise
  int32_t partitions = 0;
  int32_t cached_partitions = 0;
  int64_t memory_bytes = 0;
  int64_t disk_bytes = 0;
  bool use_memory = false;
  bool use_disk = false;
};

struct StageInfo {
  int32_t stage_id = -1;
  int32_t attempt = 0;
  std::string name;
  int32_t num_tasks = 0;
  std::vector<int32_t> parent_ids;
  std::string details_head;  // first line of "Details" (the call site)
  int64_t submission_time_ms = -1;
  int64_t completion_time_ms = -1;
  std::string failure_reason;
  bool has_failure_reason = false;
  int32_t resource_profile_id = 0;
  std::vector<Accumulable> accumulables;   // SQL and internal metrics; filled on completion
  std::vector<CachedRddInfo> cached_rdds;  // persisted RDDs in "RDD Info"; filled on completion
};

struct JobStartEvent {
  int32_t job_id = -1;
  int64_t submission_time_ms = -1;
  std::vector<int32_t> stage_ids;
  std::vector<StageInfo> stage_infos;  // name, num_tasks, parents (no accumulables kept)
  int64_t sql_execution_id = -1;       // from Properties "spark.sql.execution.id"
  std::string job_group;
  std::string description;  // "spark.job.description"
  // A micro-batch's job: "sql.streaming.queryId" and "streaming.sql.batchId" ("" and -1 otherwise).
  std::string streaming_query_id;
  int64_t streaming_batch_id = -1;
};

struct JobEndEvent {
  int32_t job_id = -1;
  int64_t completion_time_ms = -1;
  std::string result;  // "JobSucceeded" or "JobFailed"
  std::string failure_message_head;
};

struct StageSubmittedEvent {
  StageInfo stage;
  std::string scheduler_pool;
};

struct StageCompletedEvent {
  StageInfo stage;
};

struct TaskStartEvent {
  int32_t stage_id = -1;
  int32_t stage_attempt = 0;
  TaskInfo info;
};

// "Task End Reason".
struct TaskEndReason {
  std::string reason;  // as written: Success, ExceptionFailure, FetchFailed, TaskKilled, ...
  std::string exception_class;  // ExceptionFailure "Class Name"
  std::string message_head;     // first line: Description / Kill Reason / Message / Loss Reason
  // The innermost cause, first line: the exception a Python traceback in the description ends
  // with ("MemoryError"), else the last "Caused by: " of the description or the Full Stack
  // Trace ("java.io.IOException: No space left on device"); "" when there is none.
  std::string root_cause;
  std::string executor_id;  // ExecutorLostFailure
  bool exit_caused_by_app = true;
  int32_t fetch_shuffle_id = -1;
  std::string fetch_host;  // FetchFailed "Block Manager Address".Host
};

struct TaskEndEvent {
  int32_t stage_id = -1;
  int32_t stage_attempt = 0;
  std::string task_type;
  TaskEndReason reason;
  TaskInfo info;
  bool has_metrics = false;
  TaskMetrics metrics;
  ExecutorMetricPeaks executor_metrics;  // "Task Executor Metrics" (peaks while the task ran)
};

struct StageExecutorMetricsEvent {
  std::string executor_id;
  int32_t stage_id = -1;
  int32_t stage_attempt = 0;
  ExecutorMetricPeaks peaks;
};

// One node of a SQL physical plan as sparkPlanInfo writes it.
struct PlanNode {
  int32_t parent = -1;  // index in the plan vector; -1 for the root
  int32_t depth = 0;
  std::string name;           // nodeName: "SortMergeJoin", "Exchange", "Scan parquet db.t", ...
  std::string simple_string;  // simpleString (cut to ParserLimits::max_plan_string_bytes)
  // metadata of file scans: PartitionFilters, PushedFilters, DataFilters, Format, Location (cut)
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<int64_t> metric_ids;  // accumulator ids
};

struct SqlExecutionStartEvent {
  int64_t execution_id = -1;
  int64_t root_execution_id = -1;
  std::string description;
  std::string details_head;
  std::string physical_plan;  // "physicalPlanDescription" (bounded)
  int64_t time_ms = -1;
  // SQL metric accumulator ids -> (node name, metric name, metric type), from sparkPlanInfo.
  struct Metric {
    int64_t accumulator_id;
    std::string node_name;
    std::string name;
    std::string type;
  };
  std::vector<Metric> metrics;
  // The plan tree (sparkPlanInfo) in pre-order; bounded by ParserLimits (max_plan_nodes; strings
  // cut). Each node's metrics are the accumulator ids of its entries in `metrics`.
  std::vector<PlanNode> plan;
};

struct SqlExecutionEndEvent {
  int64_t execution_id = -1;
  int64_t time_ms = -1;
  std::string error_message_head;
};

// AQE re-plans: new metric ids and a new plan text.
struct SqlAdaptiveUpdateEvent {
  int64_t execution_id = -1;
  std::string physical_plan;
  std::vector<SqlExecutionStartEvent::Metric> metrics;
  std::vector<PlanNode> plan;  // the re-planned tree (AQE's current plan)
};

struct SqlDriverAccumUpdatesEvent {
  int64_t execution_id = -1;
  std::vector<std::pair<int64_t, int64_t>> updates;  // accumulator id, value
};

// Structured Streaming: the StreamingQueryListener events Spark's event log writes (Spark 3.0+;
// QueryIdleEvent 3.5+). Spark writes their times as ISO 8601 text; the parser turns them into epoch
// ms (-1 when absent or not a time). A query's run is one start of a query id (a restart from its
// checkpoint is a new run id with the same query id); Spark sets the run id as the job group of
// every job a micro-batch runs, and the query id and batch id as the jobs' properties
// "sql.streaming.queryId" and "streaming.sql.batchId".
struct StreamingQueryStartedEvent {
  std::string query_id;
  std::string run_id;
  std::string name;  // "" when the query has no name (Spark writes null)
  int64_t timestamp_ms = -1;
};

// One stateful operator of a micro-batch ("stateOperators").
struct StreamingStateOperator {
  std::string operator_name;  // "stateStoreSave", "dedupe", "symmetricHashJoin", ...
  int64_t num_rows_total = -1;
  int64_t num_rows_updated = -1;
  int64_t num_rows_removed = -1;
  int64_t num_rows_dropped_by_watermark = -1;
  int64_t memory_used_bytes = -1;
  int64_t commit_time_ms = -1;
  int64_t all_updates_time_ms = -1;
  int64_t num_shuffle_partitions = -1;
  int64_t num_state_store_instances = -1;
  // "customMetrics" (the state store provider's: RocksDB's rocksdbBytesCopied, ...), at most
  // kMaxStreamingMetrics of them, in the order written.
  std::vector<std::pair<std::string, int64_t>> custom_metrics;
};

// One source of a micro-batch ("sources").
struct StreamingSourceProgress {
  std::string description;  // "KafkaV2[Subscribe[topic]]", "RateStreamV2[...]", cut
  // Offsets as Spark writes them (JSON text of the source's offset), cut to kMaxOffsetTextBytes.
  std::string start_offset;
  std::string end_offset;
  std::string latest_offset;
  int64_t num_input_rows = -1;
  double input_rows_per_second = -1;  // -1: absent, or "NaN" (no previous batch)
  double processed_rows_per_second = -1;
  // "metrics": the source's own figures as numbers (Kafka: avgOffsetsBehindLatest,
  // maxOffsetsBehindLatest, minOffsetsBehindLatest), at most kMaxStreamingMetrics.
  std::vector<std::pair<std::string, double>> metrics;
};

inline constexpr size_t kMaxStreamingMetrics = 16;
inline constexpr size_t kMaxStreamingOperators = 16;  // state operators and sources kept a batch
inline constexpr size_t kMaxOffsetTextBytes = 256;

// One micro-batch's progress ("progress" of a QueryProgressEvent). Durations are -1 when Spark did
// not time that part in this batch (a batch without data has no addBatch, for one).
struct StreamingQueryProgressEvent {
  std::string query_id;
  std::string run_id;
  std::string name;
  int64_t timestamp_ms = -1;  // when the trigger started
  int64_t batch_id = -1;
  int64_t batch_duration_ms = -1;  // "batchDuration" (3.1+)
  // "durationMs".
  int64_t latest_offset_ms = -1;
  // "getOffset": a DSv1 Source's offset lookup, which MicroBatchExecution times under this name
  // (latestOffset for DSv2 sources and those with admission control); the same step.
  int64_t get_offset_ms = -1;
  int64_t get_batch_ms = -1;
  int64_t query_planning_ms = -1;
  int64_t add_batch_ms = -1;
  int64_t wal_commit_ms = -1;
  int64_t commit_offsets_ms = -1;
  int64_t trigger_execution_ms = -1;
  // "eventTime": the watermark and the batch's event times, epoch ms (-1: none).
  int64_t watermark_ms = -1;
  int64_t event_time_min_ms = -1;
  int64_t event_time_max_ms = -1;
  std::vector<StreamingStateOperator> state_operators;  // at most kMaxStreamingOperators
  std::vector<StreamingSourceProgress> sources;         // at most kMaxStreamingOperators
  std::string sink_description;
  int64_t sink_num_output_rows = -1;
};

struct StreamingQueryIdleEvent {
  std::string query_id;
  std::string run_id;
  int64_t timestamp_ms = -1;
};

struct StreamingQueryTerminatedEvent {
  std::string query_id;
  std::string run_id;
  std::string exception_head;  // first line of "exception"; "" when the query stopped cleanly
};

// Any event the parser does not interpret (name as written in "Event"), and its timestamp if it
// had a recognisable one (-1 otherwise). Lets the model track the last time seen.
struct OtherEvent {
  std::string name;
  int64_t timestamp_ms = -1;
};

// One event, as a line of the log gives it: the one list of the events sparkprof reads. A sink
// visits it with a handler for every alternative (std::visit), so an event added here is a compile
// error in every sink that does not handle it. Values are within value_bounds.h's bounds.
using Event =
    std::variant<LogStartEvent, DatabricksMetadataEvent, ApplicationStartEvent, ApplicationEndEvent,
                 EnvironmentUpdateEvent, ResourceProfileAddedEvent, ExecutorAddedEvent,
                 ExecutorRemovedEvent, ExclusionEvent, BlockManagerEvent, JobStartEvent,
                 JobEndEvent, StageSubmittedEvent, StageCompletedEvent, TaskStartEvent,
                 TaskEndEvent, StageExecutorMetricsEvent, SqlExecutionStartEvent,
                 SqlExecutionEndEvent, SqlAdaptiveUpdateEvent, SqlDriverAccumUpdatesEvent,
                 StreamingQueryStartedEvent, StreamingQueryProgressEvent, StreamingQueryIdleEvent,
                 StreamingQueryTerminatedEvent, OtherEvent>;

// Receives events in log order.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const Event& event) = 0;
};

// Handlers joined into one visitor: std::visit(Overloaded{[](const TaskEndEvent&) {...}, ...}, e).
// A sink that means to ignore the events it names no handler for ends with `[](const auto&) {}`.
template <typename... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
template <typename... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

}  // namespace sparkprof::eventlog
