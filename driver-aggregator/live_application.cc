#include "driver-aggregator/live_application.h"

#include <algorithm>
#include <unordered_set>

#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/diagnosis/stage_stats.h"
#include "analyzer/diagnosis/streaming_batches.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/summary.h"
#include "common/json_writer.h"

namespace sparkprof::driver {

// Forwards every event (its values bounded by the parser: value_bounds.h) to the ModelBuilder,
// then updates the counts that must be current at every scrape. Same definitions as the engine's
// phase sweep (phase_breakdown.h): a task runs from its start to its end; a submitted stage attempt
// has num_tasks pending, each launch of one of its tasks takes one (floored at 0), its completion
// releases the rest.
class LiveApplication::Tee final : public eventlog::EventSink {
 public:
  Tee(model::ModelBuilder& builder, LiveCounts& counts) : builder_(builder), counts_(counts) {}

  void OnEvent(const eventlog::Event& event) override {
    builder_.OnEvent(event);
    std::visit([this](const auto& e) { Count(e); }, event);
  }

 private:
  // One per event type (a type without one does not compile): the counts it changes.
  void Count(const eventlog::LogStartEvent&) {}
  void Count(const eventlog::DatabricksMetadataEvent&) {}
  void Count(const eventlog::ApplicationStartEvent&) {}
  void Count(const eventlog::ApplicationEndEvent&) { counts_.application_ended = true; }
  void Count(const eventlog::EnvironmentUpdateEvent&) {}
  void Count(const eventlog::ResourceProfileAddedEvent&) {}
  void Count(const eventlog::ExecutorAddedEvent& e) {
    executor_cores_[e.executor_id] = e.total_cores;  // 0 to kMaxDeclaredCount
    Recount();
  }
  void Count(const eventlog::ExecutorRemovedEvent& e) {
    executor_cores_.erase(e.executor_id);
    Recount();
  }
  void Count(const eventlog::ExclusionEvent&) {}
  void Count(const eventlog::BlockManagerEvent&) {}
  void Count(const eventlog::JobStartEvent&) {}
  void Count(const eventlog::JobEndEvent&) {}
  void Count(const eventlog::StageSubmittedEvent& e) {
    StageKey key{e.stage.stage_id, e.stage.attempt};
    if (completed_.count(key) != 0 || pending_.count(key) != 0) return;
    int64_t tasks = e.stage.num_tasks;  // 0 to kMaxDeclaredCount
    // Tasks may be reported before the submission (listener order is not guaranteed on retries).
    auto launched = launched_early_.find(key);
    if (launched != launched_early_.end()) {
      tasks = std::max<int64_t>(tasks - launched->second, 0);
      launched_early_.erase(launched);
    }
    pending_[key] = tasks;
    counts_.pending_tasks += tasks;
  }
  void Count(const eventlog::StageCompletedEvent& e) {
    StageKey key{e.stage.stage_id, e.stage.attempt};
    auto it = pending_.find(key);
    if (it != pending_.end()) {
      counts_.pending_tasks -= it->second;
      pending_.erase(it);
    }
    if (completed_.insert(key).second) ++counts_.stages_completed;
  }
  void Count(const eventlog::TaskStartEvent& e) {
    if (ended_tasks_.count(e.info.task_id) == 0 && running_.insert(e.info.task_id).second) {
      ++counts_.running_tasks;
    }
    StageKey key{e.stage_id, e.stage_attempt};
    auto it = pending_.find(key);
    if (it != pending_.end()) {
      if (it->second > 0) {
        --it->second;
        --counts_.pending_tasks;
      }
    } else if (completed_.count(key) == 0) {
      ++launched_early_[key];
    }
  }
  void Count(const eventlog::TaskEndEvent& e) {
    if (running_.erase(e.info.task_id) != 0) --counts_.running_tasks;
    // Bounded: task ids are remembered only so a late duplicate TaskStart does not count.
    if (ended_tasks_.size() < kMaxEndedTasksRemembered) ended_tasks_.insert(e.info.task_id);
  }
  void Count(const eventlog::StageExecutorMetricsEvent&) {}
  void Count(const eventlog::SqlExecutionStartEvent&) {}
  void Count(const eventlog::SqlExecutionEndEvent&) {}
  void Count(const eventlog::SqlAdaptiveUpdateEvent&) {}
  void Count(const eventlog::SqlDriverAccumUpdatesEvent&) {}
  // Streaming queries: the builder's model has them; Snapshot reads them (streaming_metrics.h).
  void Count(const eventlog::StreamingQueryStartedEvent&) {}
  void Count(const eventlog::StreamingQueryProgressEvent&) {}
  void Count(const eventlog::StreamingQueryIdleEvent&) {}
  void Count(const eventlog::StreamingQueryTerminatedEvent&) {}
  void Count(const eventlog::OtherEvent&) {}

  using StageKey = std::pair<int32_t, int32_t>;
  static constexpr size_t kMaxEndedTasksRemembered = 1u << 20;

  void Recount() {
    counts_.executors = 0;
    counts_.task_slots = 0;
    for (const auto& entry : executor_cores_) {
      if (entry.first != "driver") ++counts_.executors;
      counts_.task_slots += entry.second;
    }
  }

  model::ModelBuilder& builder_;
  LiveCounts& counts_;
  std::unordered_set<int64_t> running_;
  std::unordered_set<int64_t> ended_tasks_;
  std::map<StageKey, int64_t> pending_;
  std::map<StageKey, int64_t> launched_early_;
  std::set<StageKey> completed_;
  std::map<std::string, int32_t> executor_cores_;
};

LiveApplication::LiveApplication(LiveOptions options)
    : options_(options),
      tee_(std::make_unique<Tee>(builder_, counts_)),
      parser_(std::make_unique<eventlog::EventParser>(*tee_)) {
  read_.files.push_back({});
}

LiveApplication::~LiveApplication() = default;

Status LiveApplication::OnEventLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_)
    return InvalidArgument("the application has ended and its report was written; event ignored");
  eventlog::FileReadReport& file = read_.files.front();
  ++read_.lines;
  ++file.lines;
  file.decoded_bytes += line.size() + 1;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return Status::Ok();  // blank
  Status status;
  if (line.size() > options_.max_line_bytes) {
    status = TooLarge("line of " + std::to_string(line.size()) + " bytes exceeds the limit of " +
                      std::to_string(options_.max_line_bytes) + " bytes; skipped");
  } else {
    line_buffer_.assign(line.data(), line.size());
    line_buffer_.resize(line.size() + eventlog::EventParser::kRequiredPadding, '\0');
    status = parser_->ParseLine(line_buffer_.data(), line.size(), line_buffer_.size());
  }
  if (status.ok()) {
    ++read_.events;
    ++file.events;
    ++counts_.events;
    return status;
  }
  ++read_.bad_line_count;
  ++counts_.rejected_lines;
  if (read_.bad_lines.size() < options_.max_bad_lines_kept) {
    read_.bad_lines.push_back(
        {file.file, read_.lines, file.decoded_bytes - line.size() - 1, status.message()});
  }
  return status;
}

LiveCounts LiveApplication::Counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

std::string LiveApplication::ApplicationId() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const model::ApplicationModel& model = builder_.model();
  if (!model.app_id.empty()) return model.app_id;
  const std::string* id = model.SparkProperty("spark.app.id");
  return id != nullptr ? *id : std::string();
}

bool LiveApplication::finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_;
}

LiveSnapshot LiveApplication::Snapshot(int64_t now_ms) {
  std::lock_guard<std::mutex> snapshot_lock(snapshot_mutex_);  // one snapshot at a time
  LiveSnapshot snapshot;
  std::optional<model::ModelBuilder> copy;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    snapshot.counts = counts_;
    if (finished_) return snapshot;
    copy.emplace(builder_);
  }
  model::ApplicationModel model = copy->Finish();
  copy.reset();
  snapshot.has_model_figures = true;
  diagnosis::PhaseBreakdownOptions phase_options;
  if (!model.complete && now_ms > model.end_time_ms && model.start_time_ms >= 0) {
    model.end_time_ms = now_ms;
    // Every event since the start went through here: no executor yet means none registered yet.
    phase_options.live_model = true;
  }
  snapshot.application_id = model.app_id;
  snapshot.application_name = model.app_name;
  snapshot.model_end_ms = model.end_time_ms;
  snapshot.phases = diagnosis::ComputePhaseBreakdown(model, phase_options);
  std::map<uint32_t, int64_t> task_peak_by_executor;  // StringTable index -> max task peak
  for (const model::TaskAttempt& task : model.tasks) {
    if (!task.has_metrics) continue;
    snapshot.memory_spill_bytes += task.metrics.memory_bytes_spilled;
    snapshot.disk_spill_bytes += task.metrics.disk_bytes_spilled;
    int64_t& peak = task_peak_by_executor[task.executor];
    peak = std::max(peak, task.metrics.peak_execution_memory_bytes);
  }
  for (const model::Executor& executor : model.executors) {
    if (executor.is_driver()) continue;
    ExecutorSnapshot& out = snapshot.executors.emplace_back();
    out.executor_id = executor.executor_id;
    out.removed = executor.removed_time_ms >= 0;
    out.removed_reason = executor.removed_reason;
    out.peaks = executor.peaks;
  }
  for (const auto& [index, peak] : task_peak_by_executor) {
    if (index == model::kNone) continue;
    std::string_view id = model.strings.Get(index);
    for (ExecutorSnapshot& executor : snapshot.executors) {
      if (executor.executor_id == id) executor.peak_task_execution_memory_bytes = peak;
    }
  }
  snapshot.spark_properties = model.spark_properties;
  for (const model::StreamingQueryRun& run : model.streaming.runs) {
    StreamingRunSnapshot& out = snapshot.streaming_runs.emplace_back();
    out.label = run.name.empty() ? run.query_id : run.name;
    out.active = !run.terminated;
    out.batches_total = run.batches_total;
    out.input_rows_total = run.input_rows_total;
    out.latest = run.latest;
    out.latest_input_span_ms = run.latest_input_span_ms;
    out.trigger_interval_ms = run.trigger_interval_ms;
    const diagnosis::FallingBehindPattern pattern = diagnosis::JudgeFallingBehind(run);
    if (pattern.window.valid()) out.busy_share = pattern.window.busy_share();
    out.falling_behind = pattern.falling_behind;
  }

  // Skew of the current stages: running ones, and those completed within skew_window_ms of the
  // model's end. ratio = max(longest successful task, longest elapsed running task) / median
  // successful task, over stages with >= skew_min_tasks successful tasks and a median > 0.
  const int64_t end = model.end_time_ms;
  for (const diagnosis::StageStats& stats : diagnosis::ComputeStageStats(model)) {
    auto found = model.stages.find({stats.stage_id, stats.attempt});
    if (found == model.stages.end()) continue;
    const model::StageAttempt& stage = found->second;
    const bool completed = stage.completed_event;
    auto [begin, stop] = model.TasksOf(stage);
    if (completed && reported_stages_.insert({stats.stage_id, stats.attempt}).second) {
      CompletedStage done{stats.stage_id, stats.attempt, stats.write_stage, {}, {}};
      for (const uint32_t* it = begin; it != stop; ++it) {
        const model::TaskAttempt& task = model.tasks[*it];
        if (task.end == model::TaskEndKind::kSuccess && task.duration_ms() >= 0) {
          done.successful_task_ms.push_back(task.duration_ms());
          done.successful_task_executor_ids.push_back(
              task.executor != model::kNone ? std::string(model.strings.Get(task.executor))
                                            : std::string());
        }
      }
      snapshot.newly_completed.push_back(std::move(done));
    }
    const bool current = !completed || (stage.completion_time_ms >= 0 &&
                                        stage.completion_time_ms >= end - options_.skew_window_ms);
    if (!current || stats.successful_tasks < options_.skew_min_tasks || stats.median_task_ms <= 0) {
      continue;
    }
    int64_t longest = stats.max_task_ms;
    for (const uint32_t* it = begin; it != stop; ++it) {
      const model::TaskAttempt& task = model.tasks[*it];
      if (!task.ended() && task.launch_time_ms >= 0 && end > task.launch_time_ms) {
        longest = std::max(longest, end - task.launch_time_ms);
      }
    }
    double ratio = static_cast<double>(longest) / static_cast<double>(stats.median_task_ms);
    if (ratio > snapshot.worst_skew_ratio) {
      snapshot.worst_skew_ratio = ratio;
      snapshot.worst_skew_stage_id = stats.stage_id;
    }
  }
  return snapshot;
}

std::string LiveApplication::EndedJobsJson(const std::vector<int32_t>& job_ids) const {
  std::optional<model::ModelBuilder> copy;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return {};
    copy.emplace(builder_);
  }
  const model::ApplicationModel model = copy->Finish();
  copy.reset();
  const report::ApplicationSummary summary = report::Summarize(model);
  const std::set<int32_t> wanted(job_ids.begin(), job_ids.end());
  std::set<int32_t> ended;
  JsonWriter out;
  out.BeginObject();
  out.Key("application")
      .BeginObject()
      .Field("id", model.app_id)
      .Field("name", model.app_name)
      .Field("start_ms", model.start_time_ms)
      .EndObject();
  out.Key("jobs").BeginArray();
  for (const report::JobSummary& job : summary.jobs) {
    if (!wanted.contains(job.job_id) || job.result == "unknown") continue;
    ended.insert(job.job_id);
    report::WriteJobSummary(job, out);
  }
  out.EndArray();
  out.Key("stages").BeginArray();
  for (const report::StageSummary& stage : summary.stages) {
    if (ended.contains(stage.job_id)) report::WriteStageSummary(stage, out);
  }
  out.EndArray();
  out.EndObject();
  return out.Take();
}

namespace {

// The live feed is no file: the report's input names the application, codec "live".
void NameLiveInput(const std::string& input_name, report::Analysis& analysis) {
  analysis.log_name = input_name;
  analysis.layout = "live";
  if (!analysis.read.files.empty()) {
    eventlog::FileReadReport& file = analysis.read.files.front();
    file.file = input_name;
    file.codec = "live";
    file.compressed_bytes = file.decoded_bytes;
  }
  for (eventlog::BadLine& bad : analysis.read.bad_lines) bad.file = input_name;
}

}  // namespace

Result<report::Analysis> LiveApplication::Finish(
    const std::string& input_name, const std::function<void(model::ApplicationModel&)>& amend,
    const std::string& profile_path) {
  report::Analysis analysis;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_)
      return InvalidArgument("the application has ended and its report was written; event ignored");
    finished_ = true;
    analysis.model = builder_.Finish();
    if (amend) amend(analysis.model);
    analysis.read = std::move(read_);
    analysis.read.event_counts = parser_->event_counts();
    analysis.read.unknown_events = parser_->unknown_events();
  }
  NameLiveInput(input_name, analysis);
  // As report::Analyze does after reading a log; inside the driver the right-sizing replays are
  // held to a smaller budget (about a second of CPU at the application's end).
  cost::CostOptions cost_options;
  cost_options.max_simulated_tasks = 2'000'000;
  // The profile as `sparkprof analyze --profile` reads it: the same file, the same summary.
  if (!profile_path.empty()) report::AttachProfile(analysis, profile_path);
  report::CompleteAnalysis(analysis, cost_options);
  return analysis;
}

Result<report::Analysis> LiveApplication::AnalysisSoFar(const std::string& input_name) const {
  report::Analysis analysis;
  std::optional<model::ModelBuilder> copy;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return InvalidArgument("the application has ended; its report is written");
    copy.emplace(builder_);
    analysis.read = read_;
    analysis.read.event_counts = parser_->event_counts();
    analysis.read.unknown_events = parser_->unknown_events();
  }
  analysis.model = copy->Finish();
  copy.reset();
  NameLiveInput(input_name, analysis);
  cost::CostOptions cost_options;
  cost_options.frontier = false;  // the end's report has it; a page view stays cheap
  cost_options.threads = 1;
  report::CompleteAnalysis(analysis, cost_options);
  return analysis;
}

}  // namespace sparkprof::driver
