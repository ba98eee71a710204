#include "analyzer/testing/synthetic_app.h"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <random>

#include "common/json_writer.h"

namespace sparkprof::testing {

namespace {

// A line-per-event writer: compact JSON objects, one per line.
class EventWriter {
 public:
  JsonWriter& Begin(const char* event) {
    writer_ = JsonWriter(JsonWriter::Options{0, false});
    writer_.BeginObject().Field("Event", event);
    return writer_;
  }
  void End() {
    writer_.EndObject();
    out_ += writer_.str();
    out_.push_back('\n');
  }
  std::string Take() { return std::move(out_); }

 private:
  JsonWriter writer_;
  std::string out_;
};

// Deterministic across platforms (std::*_distribution is not).
class Jitter {
 public:
  explicit Jitter(uint32_t seed) : engine_(seed) {}
  double Next() { return static_cast<double>(engine_() % 20001) / 10000.0 - 1.0; }  // [-1, 1]

 private:
  std::mt19937 engine_;
};

void WriteStageInfo(
    JsonWriter& w, int stage_id, const SyntheticStage& stage, int64_t submitted_ms,
    int64_t completed_ms, bool with_times,
    const std::vector<std::pair<int64_t, std::pair<std::string, int64_t>>>* accumulables) {
  w.BeginObject()
      .Field("Stage ID", static_cast<int64_t>(stage_id))
      .Field("Stage Attempt ID", static_cast<int64_t>(0))
      .Field("Stage Name", stage.name)
      .Field("Number of Tasks", static_cast<int64_t>(stage.tasks))
      .Key("RDD Info")
      .BeginArray()
      .EndArray()
      .Key("Parent IDs")
      .BeginArray();
  for (int parent : stage.parents) w.Int(parent);
  w.EndArray().Field("Details", "org.apache.spark.sql.Dataset.collect(Dataset.scala:3418)");
  if (with_times) {
    w.Field("Submission Time", submitted_ms);
    if (completed_ms > 0) w.Field("Completion Time", completed_ms);
  }
  w.Key("Accumulables").BeginArray();
  if (accumulables != nullptr) {
    for (const auto& [id, name_value] : *accumulables) {
      w.BeginObject()
          .Field("ID", id)
          .Field("Name", name_value.first)
          .Field("Value", std::to_string(name_value.second))
          .Field("Internal", false)
          .Field("Count Failed Values", true)
          .Field("Metadata", "sql")
          .EndObject();
    }
  }
  w.EndArray()
      .Field("Resource Profile Id", static_cast<int64_t>(0))
      .Field("Shuffle Push Enabled", false)
      .Field("Shuffle Push Mergers Count", static_cast<int64_t>(0))
      .EndObject();
}

void WriteTaskInfo(JsonWriter& w, int64_t task_id, int index, int attempt, int64_t launch_ms,
                   int64_t finish_ms, const std::string& executor, bool failed,
                   bool speculative = false) {
  w.BeginObject()
      .Field("Task ID", task_id)
      .Field("Index", static_cast<int64_t>(index))
      .Field("Attempt", static_cast<int64_t>(attempt))
      .Field("Partition ID", static_cast<int64_t>(index))
      .Field("Launch Time", launch_ms)
      .Field("Executor ID", executor)
      .Field("Host", "worker-" + executor + ".cluster.local")
      .Field("Locality", "PROCESS_LOCAL")
      .Field("Speculative", speculative)
      .Field("Getting Result Time", static_cast<int64_t>(0))
      .Field("Finish Time", finish_ms)
      .Field("Failed", failed)
      .Field("Killed", speculative && finish_ms > 0)
      .Key("Accumulables")
      .BeginArray()
      .EndArray()
      .EndObject();
}

}  // namespace

SyntheticApp DemoApp() {
  SyntheticApp app;
  app.extra_properties = {
      {"spark.sql.shuffle.partitions", "200"},
      {"spark.executor.memory", "8g"},
      {"spark.executor.cores", "4"},
      {"spark.dynamicAllocation.enabled", "false"},
  };
  SyntheticStage scan;
  scan.name = "parquet at ExtractSales.scala:41";
  scan.tasks = 48;
  scan.task_ms = 3000;
  scan.input_bytes_per_task = 256ll << 20;
  scan.shuffle_write_bytes_per_task = 96ll << 20;
  app.stages.push_back(scan);

  SyntheticStage join;
  join.name = "join at EnrichSales.scala:88";
  join.tasks = 200;
  join.task_ms = 1200;
  join.skewed_tasks = 2;
  join.skew_factor = 40;
  join.shuffle_read_bytes_per_task = 20ll << 20;
  join.shuffle_write_bytes_per_task = 8ll << 20;
  join.shuffle_fetch_wait_ms_per_task = 40;
  join.memory_spill_bytes_per_task = 6ll << 30;
  join.disk_spill_bytes_per_task = 2ll << 30;
  join.gc_fraction = 0.08;
  join.failed_attempts = 1;
  join.parents = {0};
  app.stages.push_back(join);

  SyntheticStage write;
  write.name = "save at WriteSales.scala:120";
  write.tasks = 32;
  write.task_ms = 9000;
  write.shuffle_read_bytes_per_task = 50ll << 20;
  write.output_bytes_per_task = 128ll << 20;
  write.write_stage = true;
  write.job_commit_ms = 45000;
  write.parents = {1};
  app.stages.push_back(write);
  app.removed_executors = 1;
  return app;
}

std::string GenerateEventLog(const SyntheticApp& app) {
  EventWriter out;
  Jitter jitter(42);
  const int slots = app.executors * app.cores_per_executor;
  int64_t now = app.start_ms;

  out.Begin("SparkListenerLogStart").Field("Spark Version", app.spark_version);
  out.End();
  {
    JsonWriter& w = out.Begin("SparkListenerResourceProfileAdded");
    w.Field("Resource Profile Id", static_cast<int64_t>(0))
        .Key("Executor Resource Requests")
        .BeginObject();
    w.Key("cores")
        .BeginObject()
        .Field("Resource Name", "cores")
        .Field("Amount", static_cast<int64_t>(app.cores_per_executor))
        .Field("Discovery Script", "")
        .Field("Vendor", "")
        .EndObject();
    w.Key("memory")
        .BeginObject()
        .Field("Resource Name", "memory")
        .Field("Amount", app.executor_memory_mb)
        .Field("Discovery Script", "")
        .Field("Vendor", "")
        .EndObject();
    w.EndObject()
        .Key("Task Resource Requests")
        .BeginObject()
        .Key("cpus")
        .BeginObject()
        .Field("Resource Name", "cpus")
        .FieldDouble("Amount", 1.0)
        .EndObject()
        .EndObject();
    out.End();
  }
  {
    JsonWriter& w = out.Begin("SparkListenerEnvironmentUpdate");
    w.Key("JVM Information")
        .BeginObject()
        .Field("Java Version", "17.0.10 (Eclipse Adoptium)")
        .Field("Java Home", "/opt/java")
        .Field("Scala Version", "version 2.12.18")
        .EndObject();
    w.Key("Spark Properties")
        .BeginObject()
        .Field("spark.app.name", app.app_name)
        .Field("spark.app.id", app.app_id)
        .Field("spark.master", app.master)
        .Field("spark.executor.instances", std::to_string(app.executors));
    for (const auto& [key, value] : app.extra_properties) w.Field(key, value);
    w.EndObject();
    w.Key("Hadoop Properties").BeginObject().EndObject();
    w.Key("System Properties").BeginObject().Field("java.version", "17.0.10").EndObject();
    w.Key("Metrics Properties").BeginObject().EndObject();
    w.Key("Classpath Entries").BeginObject().EndObject();
    out.End();
  }
  out.Begin("SparkListenerApplicationStart")
      .Field("App Name", app.app_name)
      .Field("App ID", app.app_id)
      .Field("Timestamp", now)
      .Field("User", app.user);
  out.End();

  int64_t executors_ready = now + app.executor_start_delay_ms;
  for (int e = 1; e <= app.executors; ++e) {
    JsonWriter& w = out.Begin("SparkListenerExecutorAdded");
    w.Field("Timestamp", executors_ready + e * 300).Field("Executor ID", std::to_string(e));
    w.Key("Executor Info")
        .BeginObject()
        .Field("Host", app.executors_on_one_host ? std::string("127.0.0.1")
                                                 : "worker-" + std::to_string(e) + ".cluster.local")
        .Field("Total Cores", static_cast<int64_t>(app.cores_per_executor))
        .Key("Log Urls")
        .BeginObject()
        .EndObject()
        .Key("Attributes")
        .BeginObject()
        .EndObject()
        .Key("Resources")
        .BeginObject()
        .EndObject()
        .Field("Resource Profile Id", static_cast<int64_t>(0));
    if (app.executor_request_delay_ms >= 0) {
      w.Field("Request Time", app.start_ms + app.executor_request_delay_ms);
    }
    w.EndObject();
    out.End();
  }
  now = executors_ready + app.executors * 300 + 500;

  // One SQL execution spanning all jobs; its write node carries the commit metrics.
  const int64_t kTaskCommitAccumulator = 9001, kJobCommitAccumulator = 9002,
                kFilesAccumulator = 9003;
  {
    JsonWriter& w = out.Begin("org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart");
    w.Field("executionId", static_cast<int64_t>(0))
        .Field("description", app.sql_description)
        .Field("details", "org.apache.spark.sql.Dataset.save(Dataset.scala:120)")
        .Field(
            "physicalPlanDescription",
            "== Physical Plan ==\nExecute InsertIntoHadoopFsRelationCommand\n+- SortMergeJoin\n");
    w.Key("sparkPlanInfo")
        .BeginObject()
        .Field("nodeName", "Execute InsertIntoHadoopFsRelationCommand")
        .Field("simpleString", "Execute InsertIntoHadoopFsRelationCommand")
        .Key("children")
        .BeginArray()
        .EndArray()
        .Key("metadata")
        .BeginObject()
        .EndObject()
        .Key("metrics")
        .BeginArray()
        .BeginObject()
        .Field("name", "task commit time")
        .Field("accumulatorId", kTaskCommitAccumulator)
        .Field("metricType", "timing")
        .EndObject()
        .BeginObject()
        .Field("name", "job commit time")
        .Field("accumulatorId", kJobCommitAccumulator)
        .Field("metricType", "timing")
        .EndObject()
        .BeginObject()
        .Field("name", "number of written files")
        .Field("accumulatorId", kFilesAccumulator)
        .Field("metricType", "sum")
        .EndObject()
        .EndArray()
        .EndObject();
    w.Field("time", now).Key("modifiedConfigs").BeginObject().EndObject();
    out.End();
  }

  int64_t task_id = 0;
  for (size_t s = 0; s < app.stages.size(); ++s) {
    const SyntheticStage& stage = app.stages[s];
    const int stage_id = static_cast<int>(s);
    const int job_id = static_cast<int>(s);
    int64_t job_start = now;
    {
      JsonWriter& w = out.Begin("SparkListenerJobStart");
      w.Field("Job ID", static_cast<int64_t>(job_id)).Field("Submission Time", job_start);
      w.Key("Stage Infos").BeginArray();
      WriteStageInfo(w, stage_id, stage, 0, 0, false, nullptr);
      w.EndArray().Key("Stage IDs").BeginArray().Int(stage_id).EndArray();
      w.Key("Properties")
          .BeginObject()
          .Field("spark.sql.execution.id", "0")
          .Field("spark.job.description", app.sql_description)
          .EndObject();
      out.End();
    }
    int64_t stage_submitted = now + 20;
    {
      JsonWriter& w = out.Begin("SparkListenerStageSubmitted");
      w.Key("Stage Info");
      WriteStageInfo(w, stage_id, stage, stage_submitted, 0, true, nullptr);
      w.Key("Properties").BeginObject().Field("spark.sql.execution.id", "0").EndObject();
      out.End();
    }

    // Greedy scheduling on the earliest free slot; skewed tasks are the last partitions (the
    // first with skewed_first).
    using Slot = std::pair<int64_t, int>;  // free at, slot number
    std::priority_queue<Slot, std::vector<Slot>, std::greater<>> free_slots;
    for (int slot = 0; slot < slots; ++slot) free_slots.push({stage_submitted + 30, slot});
    struct Pending {
      int index;
      int attempt;
    };
    std::vector<Pending> queue;
    queue.reserve(static_cast<size_t>(std::max(stage.tasks, 0)));
    for (int i = 0; i < stage.tasks; ++i) queue.push_back({i, 0});
    std::vector<bool> slot_used(static_cast<size_t>(slots), false);
    int failures_left = stage.failed_attempts;
    int64_t stage_end = stage_submitted;
    int64_t task_commit_ms_total = 0;
    for (size_t q = 0; q < queue.size(); ++q) {
      Pending pending = queue[q];
      auto [free_at, slot] = free_slots.top();
      free_slots.pop();
      bool skewed = stage.skewed_first ? pending.index < stage.skewed_tasks
                                       : pending.index >= stage.tasks - stage.skewed_tasks;
      double factor = skewed ? stage.skew_factor : 1.0;
      int64_t run_ms = std::max<int64_t>(
          50, static_cast<int64_t>(stage.task_ms * factor * (1.0 + stage.jitter * jitter.Next())));
      if (!slot_used[static_cast<size_t>(slot)]) {
        slot_used[static_cast<size_t>(slot)] = true;
        run_ms += stage.first_wave_extra_ms;
      }
      bool fails = failures_left > 0 && pending.attempt == 0 && skewed;
      if (fails) {
        --failures_left;
        run_ms /= 2;
        queue.push_back({pending.index, 1});
      }
      int64_t launch = free_at;
      int64_t finish = launch + run_ms + 40;
      free_slots.push({finish + 5, slot});
      stage_end = std::max(stage_end, finish);
      std::string executor = std::to_string(slot / app.cores_per_executor + 1);
      int64_t id = task_id++;
      {
        JsonWriter& w = out.Begin("SparkListenerTaskStart");
        w.Field("Stage ID", static_cast<int64_t>(stage_id))
            .Field("Stage Attempt ID", static_cast<int64_t>(0))
            .Key("Task Info");
        WriteTaskInfo(w, id, pending.index, pending.attempt, launch, 0, executor, false);
        out.End();
      }
      int64_t task_commit_ms = stage.write_stage && !fails ? 150 + run_ms / 20 : 0;
      task_commit_ms_total += task_commit_ms;
      double share = fails ? 0.5 : 1.0;
      int64_t shuffle_read =
          static_cast<int64_t>(stage.shuffle_read_bytes_per_task * factor * share);
      JsonWriter& w = out.Begin("SparkListenerTaskEnd");
      w.Field("Stage ID", static_cast<int64_t>(stage_id))
          .Field("Stage Attempt ID", static_cast<int64_t>(0))
          .Field("Task Type", s + 1 == app.stages.size() ? "ResultTask" : "ShuffleMapTask");
      w.Key("Task End Reason").BeginObject();
      if (fails && stage.failure_reason == "FetchFailed") {
        std::string server =
            std::to_string((slot / app.cores_per_executor + 1) % app.executors + 1);
        w.Field("Reason", "FetchFailed")
            .Key("Block Manager Address")
            .BeginObject()
            .Field("Executor ID", server)
            .Field("Host", "worker-" + server + ".cluster.local")
            .Field("Port", static_cast<int64_t>(7337))
            .EndObject()
            .Field("Shuffle ID",
                   static_cast<int64_t>(stage.parents.empty() ? 0 : stage.parents.front()))
            .Field("Map ID", static_cast<int64_t>(0))
            .Field("Map Index", static_cast<int64_t>(0))
            .Field("Reduce ID", static_cast<int64_t>(pending.index))
            .Field("Message", stage.failure_message);
      } else if (fails) {
        w.Field("Reason", "ExceptionFailure")
            .Field("Class Name", stage.failure_class)
            .Field("Description", stage.failure_message)
            .Key("Stack Trace")
            .BeginArray()
            .EndArray()
            .Field("Full Stack Trace", stage.failure_class + ": " + stage.failure_message)
            .Key("Accumulator Updates")
            .BeginArray()
            .EndArray();
      } else {
        w.Field("Reason", "Success");
      }
      w.EndObject().Key("Task Info");
      WriteTaskInfo(w, id, pending.index, pending.attempt, launch, finish, executor, fails);
      w.Key("Task Executor Metrics")
          .BeginObject()
          .Field("JVMHeapMemory",
                 static_cast<int64_t>((app.executor_memory_mb << 20) * (skewed ? 0.92 : 0.55)))
          .Field("JVMOffHeapMemory", static_cast<int64_t>(180ll << 20))
          .Field("OnHeapExecutionMemory", static_cast<int64_t>(skewed ? 2ll << 30 : 256ll << 20))
          .Field("MajorGCCount", static_cast<int64_t>(skewed ? 6 : 0))
          .Field("MajorGCTime", static_cast<int64_t>(skewed ? run_ms / 10 : 0))
          .Field("TotalGCTime", static_cast<int64_t>(run_ms * stage.gc_fraction))
          .EndObject();
      bool spills = stage.skewed_tasks > 0 ? skewed : true;
      w.Key("Task Metrics")
          .BeginObject()
          .Field("Executor Deserialize Time", static_cast<int64_t>(12))
          .Field("Executor Deserialize CPU Time", static_cast<int64_t>(9'000'000))
          .Field("Executor Run Time", run_ms)
          .Field("Executor CPU Time", static_cast<int64_t>(run_ms * 800'000))
          .Field("Peak Execution Memory", static_cast<int64_t>(skewed ? 2ll << 30 : 200ll << 20))
          .Field("Result Size", static_cast<int64_t>(2400))
          .Field("JVM GC Time", static_cast<int64_t>(
                                    run_ms * (skewed ? stage.gc_fraction * 3 : stage.gc_fraction)))
          .Field("Result Serialization Time", static_cast<int64_t>(1))
          .Field("Memory Bytes Spilled", spills ? stage.memory_spill_bytes_per_task : 0)
          .Field("Disk Bytes Spilled", spills ? stage.disk_spill_bytes_per_task : 0);
      w.Key("Shuffle Read Metrics")
          .BeginObject()
          .Field("Remote Blocks Fetched",
                 static_cast<int64_t>(stage.shuffle_read_bytes_per_task > 0 ? 40 : 0))
          .Field("Local Blocks Fetched",
                 static_cast<int64_t>(stage.shuffle_read_bytes_per_task > 0 ? 10 : 0))
          .Field("Fetch Wait Time", stage.shuffle_fetch_wait_ms_per_task)
          .Field("Remote Bytes Read", shuffle_read * 3 / 4)
          .Field("Remote Bytes Read To Disk", static_cast<int64_t>(0))
          .Field("Local Bytes Read", shuffle_read - shuffle_read * 3 / 4)
          .Field("Total Records Read", shuffle_read / 100)
          .Field("Remote Requests Duration", stage.shuffle_fetch_wait_ms_per_task)
          .EndObject();
      w.Key("Shuffle Write Metrics")
          .BeginObject()
          .Field("Shuffle Bytes Written",
                 static_cast<int64_t>(stage.shuffle_write_bytes_per_task * share))
          .Field("Shuffle Write Time",
                 static_cast<int64_t>(stage.shuffle_write_bytes_per_task / 200))
          .Field("Shuffle Records Written", stage.shuffle_write_bytes_per_task / 100)
          .EndObject();
      w.Key("Input Metrics")
          .BeginObject()
          .Field("Bytes Read", static_cast<int64_t>(stage.input_bytes_per_task * share))
          .Field("Records Read", stage.input_bytes_per_task / 120)
          .EndObject();
      w.Key("Output Metrics")
          .BeginObject()
          .Field("Bytes Written", fails ? 0 : stage.output_bytes_per_task)
          .Field("Records Written", fails ? 0 : stage.output_bytes_per_task / 150)
          .EndObject();
      w.Key("Updated Blocks").BeginArray().EndArray();
      w.EndObject();
      out.End();
      if (!fails && skewed && pending.index >= stage.tasks - stage.speculative_copies) {
        // A copy on another executor from half-way, killed when the original finishes.
        std::string other = std::to_string((slot / app.cores_per_executor + 1) % app.executors + 1);
        int64_t copy_id = task_id++;
        int64_t copy_launch = launch + run_ms / 2;
        JsonWriter& s1 = out.Begin("SparkListenerTaskStart");
        s1.Field("Stage ID", static_cast<int64_t>(stage_id))
            .Field("Stage Attempt ID", static_cast<int64_t>(0))
            .Key("Task Info");
        WriteTaskInfo(s1, copy_id, pending.index, pending.attempt + 1, copy_launch, 0, other, false,
                      true);
        out.End();
        JsonWriter& e1 = out.Begin("SparkListenerTaskEnd");
        e1.Field("Stage ID", static_cast<int64_t>(stage_id))
            .Field("Stage Attempt ID", static_cast<int64_t>(0))
            .Field("Task Type", s + 1 == app.stages.size() ? "ResultTask" : "ShuffleMapTask");
        e1.Key("Task End Reason")
            .BeginObject()
            .Field("Reason", "TaskKilled")
            .Field("Kill Reason", "another attempt succeeded")
            .Key("Accumulator Updates")
            .BeginArray()
            .EndArray()
            .EndObject();
        e1.Key("Task Info");
        WriteTaskInfo(e1, copy_id, pending.index, pending.attempt + 1, copy_launch, finish + 2,
                      other, false, true);
        e1.Key("Task Metrics")
            .BeginObject()
            .Field("Executor Deserialize Time", static_cast<int64_t>(12))
            .Field("Executor Run Time", finish - copy_launch - 20)
            .Field("JVM GC Time", static_cast<int64_t>(0))
            .EndObject();
        out.End();
      }
    }
    int64_t stage_completed = stage_end + 30;
    std::vector<std::pair<int64_t, std::pair<std::string, int64_t>>> accumulables;
    if (stage.write_stage) {
      accumulables.push_back({kTaskCommitAccumulator, {"task commit time", task_commit_ms_total}});
      accumulables.push_back({kFilesAccumulator, {"number of written files", stage.tasks}});
    }
    {
      JsonWriter& w = out.Begin("SparkListenerStageCompleted");
      w.Key("Stage Info");
      WriteStageInfo(w, stage_id, stage, stage_submitted, stage_completed, true, &accumulables);
      out.End();
    }
    int64_t job_end = stage_completed + 10;
    if (stage.write_stage && stage.job_commit_ms > 0) {
      job_end += stage.job_commit_ms;
      JsonWriter& w =
          out.Begin("org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates");
      w.Field("executionId", static_cast<int64_t>(0))
          .Key("accumUpdates")
          .BeginArray()
          .BeginArray()
          .Int(kJobCommitAccumulator)
          .Int(stage.job_commit_ms)
          .EndArray()
          .EndArray();
      out.End();
    }
    out.Begin("SparkListenerJobEnd")
        .Field("Job ID", static_cast<int64_t>(job_id))
        .Field("Completion Time", job_end)
        .Key("Job Result")
        .BeginObject()
        .Field("Result", "JobSucceeded")
        .EndObject();
    out.End();
    now = job_end + app.driver_gap_ms;
  }
  out.Begin("org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd")
      .Field("executionId", static_cast<int64_t>(0))
      .Field("time", now - app.driver_gap_ms + 5);
  out.End();
  for (int e = 1; e <= app.removed_executors && e <= app.executors; ++e) {
    out.Begin("SparkListenerExecutorRemoved")
        .Field("Timestamp", now + e)
        .Field("Executor ID", std::to_string(e))
        .Field("Removed Reason", app.removed_reason);
    out.End();
  }
  if (app.end_application) {
    out.Begin("SparkListenerApplicationEnd").Field("Timestamp", now + 2000);
    out.End();
  }
  return out.Take();
}

}  // namespace sparkprof::testing
