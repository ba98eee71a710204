#include "analyzer/eventlog/parallel_line_parser.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace sparkprof::eventlog {

namespace {

struct OtherEvent {
  std::string name;
  int64_t timestamp_ms = -1;
};

// What one line gave the sink (each line gives at most one event).
using RecordedEvent =
    std::variant<std::monostate, LogStartEvent, DatabricksMetadataEvent, ApplicationStartEvent,
                 ApplicationEndEvent, EnvironmentUpdateEvent, ResourceProfileAddedEvent,
                 ExecutorAddedEvent, ExecutorRemovedEvent, ExclusionEvent, BlockManagerEvent,
                 JobStartEvent, JobEndEvent, StageSubmittedEvent, StageCompletedEvent,
                 TaskStartEvent, TaskEndEvent, StageExecutorMetricsEvent, SqlExecutionStartEvent,
                 SqlExecutionEndEvent, SqlAdaptiveUpdateEvent, SqlDriverAccumUpdatesEvent,
                 OtherEvent>;

// Keeps a copy of the event the parser delivers for the line being parsed.
class RecordingSink final : public EventSink {
 public:
  RecordedEvent* into = nullptr;

  void OnLogStart(const LogStartEvent& e) override { *into = e; }
  void OnDatabricksMetadata(const DatabricksMetadataEvent& e) override { *into = e; }
  void OnApplicationStart(const ApplicationStartEvent& e) override { *into = e; }
  void OnApplicationEnd(const ApplicationEndEvent& e) override { *into = e; }
  void OnEnvironmentUpdate(const EnvironmentUpdateEvent& e) override { *into = e; }
  void OnResourceProfileAdded(const ResourceProfileAddedEvent& e) override { *into = e; }
  void OnExecutorAdded(const ExecutorAddedEvent& e) override { *into = e; }
  void OnExecutorRemoved(const ExecutorRemovedEvent& e) override { *into = e; }
  void OnExclusion(const ExclusionEvent& e) override { *into = e; }
  void OnBlockManager(const BlockManagerEvent& e) override { *into = e; }
  void OnJobStart(const JobStartEvent& e) override { *into = e; }
  void OnJobEnd(const JobEndEvent& e) override { *into = e; }
  void OnStageSubmitted(const StageSubmittedEvent& e) override { *into = e; }
  void OnStageCompleted(const StageCompletedEvent& e) override { *into = e; }
  void OnTaskStart(const TaskStartEvent& e) override { *into = e; }
  void OnTaskEnd(const TaskEndEvent& e) override { *into = e; }
  void OnStageExecutorMetrics(const StageExecutorMetricsEvent& e) override { *into = e; }
  void OnSqlExecutionStart(const SqlExecutionStartEvent& e) override { *into = e; }
  void OnSqlExecutionEnd(const SqlExecutionEndEvent& e) override { *into = e; }
  void OnSqlAdaptiveUpdate(const SqlAdaptiveUpdateEvent& e) override { *into = e; }
  void OnSqlDriverAccumUpdates(const SqlDriverAccumUpdatesEvent& e) override { *into = e; }
  void OnOtherEvent(std::string_view name, int64_t timestamp_ms) override {
    *into = OtherEvent{std::string(name), timestamp_ms};
  }
};

void Replay(const RecordedEvent& recorded, EventSink& sink) {
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, LogStartEvent>) sink.OnLogStart(e);
        else if constexpr (std::is_same_v<T, DatabricksMetadataEvent>) sink.OnDatabricksMetadata(e);
        else if constexpr (std::is_same_v<T, ApplicationStartEvent>) sink.OnApplicationStart(e);
        else if constexpr (std::is_same_v<T, ApplicationEndEvent>) sink.OnApplicationEnd(e);
        else if constexpr (std::is_same_v<T, EnvironmentUpdateEvent>) sink.OnEnvironmentUpdate(e);
        else if constexpr (std::is_same_v<T, ResourceProfileAddedEvent>) {
          sink.OnResourceProfileAdded(e);
        } else if constexpr (std::is_same_v<T, ExecutorAddedEvent>) sink.OnExecutorAdded(e);
        else if constexpr (std::is_same_v<T, ExecutorRemovedEvent>) sink.OnExecutorRemoved(e);
        else if constexpr (std::is_same_v<T, ExclusionEvent>) sink.OnExclusion(e);
        else if constexpr (std::is_same_v<T, BlockManagerEvent>) sink.OnBlockManager(e);
        else if constexpr (std::is_same_v<T, JobStartEvent>) sink.OnJobStart(e);
        else if constexpr (std::is_same_v<T, JobEndEvent>) sink.OnJobEnd(e);
        else if constexpr (std::is_same_v<T, StageSubmittedEvent>) sink.OnStageSubmitted(e);
        else if constexpr (std::is_same_v<T, StageCompletedEvent>) sink.OnStageCompleted(e);
        else if constexpr (std::is_same_v<T, TaskStartEvent>) sink.OnTaskStart(e);
        else if constexpr (std::is_same_v<T, TaskEndEvent>) sink.OnTaskEnd(e);
        else if constexpr (std::is_same_v<T, StageExecutorMetricsEvent>) {
          sink.OnStageExecutorMetrics(e);
        } else if constexpr (std::is_same_v<T, SqlExecutionStartEvent>) sink.OnSqlExecutionStart(e);
        else if constexpr (std::is_same_v<T, SqlExecutionEndEvent>) sink.OnSqlExecutionEnd(e);
        else if constexpr (std::is_same_v<T, SqlAdaptiveUpdateEvent>) sink.OnSqlAdaptiveUpdate(e);
        else if constexpr (std::is_same_v<T, SqlDriverAccumUpdatesEvent>) {
          sink.OnSqlDriverAccumUpdates(e);
        } else if constexpr (std::is_same_v<T, OtherEvent>) {
          sink.OnOtherEvent(e.name, e.timestamp_ms);
        }
      },
      recorded);
}

}  // namespace

struct ParallelLineParser::Batch {
  struct Entry {
    size_t offset;  // of the line's bytes in `bytes`
    size_t size;
    Position position;
    // Filled by the worker.
    Status status;
    EventParser::LineInfo info;
    bool photon_plan_seen = false;  // the state the line was parsed with
    RecordedEvent event;
  };
  std::string bytes;  // the lines, each followed by the parser's padding
  std::vector<Entry> lines;
  bool done = false;  // guarded by the parser's mutex
};

ParallelLineParser::ParallelLineParser(EventParser& ordered, EventSink& sink,
                                       const ParserLimits& limits, int workers, OnLine on_line)
    : ordered_(ordered),
      sink_(sink),
      limits_(limits),
      on_line_(std::move(on_line)),
      max_in_flight_(2 * static_cast<size_t>(std::max(workers, 1))) {
  photon_plan_seen_ = ordered_.photon_plan_seen();
  for (int i = 0; i < std::max(workers, 1); ++i) {
    try {
      workers_.emplace_back([this] { Work(); });
    } catch (const std::system_error&) {
      break;
    }
  }
}

ParallelLineParser::~ParallelLineParser() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ParallelLineParser::Add(const Line& line) {
  if (line.size > kParseInOrderLineBytes) {
    Submit();
    DeliverAll();
    Status status = ordered_.ParseLine(line.data, line.size, line.capacity);
    on_line_({line.number, line.byte_offset, line.last_without_newline}, status);
    photon_plan_seen_ = ordered_.photon_plan_seen();
    return;
  }
  if (!filling_) {
    if (!spare_.empty()) {
      filling_ = std::move(spare_.back());
      spare_.pop_back();
      filling_->bytes.clear();
      filling_->lines.clear();
      filling_->done = false;
    } else {
      filling_ = std::make_unique<Batch>();
      filling_->bytes.reserve(kParseBatchBytes + kParseInOrderLineBytes +
                              EventParser::kRequiredPadding);
    }
  }
  Batch& batch = *filling_;
  Batch::Entry& entry = batch.lines.emplace_back();
  entry.offset = batch.bytes.size();
  entry.size = line.size;
  entry.position = {line.number, line.byte_offset, line.last_without_newline};
  batch.bytes.append(line.data, line.size);
  batch.bytes.append(EventParser::kRequiredPadding, '\0');
  if (batch.bytes.size() >= kParseBatchBytes || batch.lines.size() >= kParseBatchLines) Submit();
}

void ParallelLineParser::Submit() {
  if (!filling_ || filling_->lines.empty()) return;
  std::shared_ptr<Batch> batch(filling_.release());
  in_order_.push_back(batch);
  if (workers_.empty()) {
    // No thread could be started: parse here, in order.
    std::unique_lock<std::mutex> lock(mutex_);
    todo_.push_back(batch);
    stopping_ = true;
    lock.unlock();
    Work();
    stopping_ = false;
  } else {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      todo_.push_back(batch);
    }
    work_ready_.notify_one();
  }
  // Deliver what is finished; wait for the oldest when enough is in flight.
  while (!in_order_.empty()) {
    bool front_done;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (in_order_.size() >= max_in_flight_) {
        batch_done_.wait(lock, [&] { return in_order_.front()->done; });
      }
      front_done = in_order_.front()->done;
    }
    if (!front_done) break;
    DeliverFront();
  }
}

void ParallelLineParser::Finish() {
  Submit();
  DeliverAll();
}

void ParallelLineParser::DeliverAll() {
  while (!in_order_.empty()) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      batch_done_.wait(lock, [&] { return in_order_.front()->done; });
    }
    DeliverFront();
  }
}

void ParallelLineParser::DeliverFront() {
  std::shared_ptr<Batch> batch = std::move(in_order_.front());
  in_order_.pop_front();
  for (Batch::Entry& entry : batch->lines) {
    if (entry.photon_plan_seen != ordered_.photon_plan_seen()) {
      // Parsed with a Photon state this line does not have in log order: parse it again here.
      EventParser::LineInfo info;
      Status status = ordered_.ParseLineUncounted(
          batch->bytes.data() + entry.offset, entry.size,
          batch->bytes.size() - entry.offset, &info);
      if (status.ok()) ordered_.CountEvent(info.event_name, info.interpreted);
      on_line_(entry.position, status);
      continue;
    }
    if (entry.info.photon_plan) ordered_.set_photon_plan_seen(true);
    if (entry.status.ok()) {
      Replay(entry.event, sink_);
      ordered_.CountEvent(entry.info.event_name, entry.info.interpreted);
    }
    on_line_(entry.position, entry.status);
  }
  if (batch.use_count() == 1 && spare_.size() < max_in_flight_) {
    // Only this thread holds it now (the worker let go before marking it done): reuse it.
    auto reused = std::make_unique<Batch>();
    std::swap(reused->bytes, batch->bytes);
    std::swap(reused->lines, batch->lines);
    spare_.push_back(std::move(reused));
  }
}

void ParallelLineParser::Work() {
  RecordingSink recorder;
  EventParser parser(recorder, limits_);
  while (true) {
    std::shared_ptr<Batch> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || !todo_.empty(); });
      if (todo_.empty()) return;
      batch = std::move(todo_.front());
      todo_.pop_front();
    }
    for (Batch::Entry& entry : batch->lines) {
      entry.photon_plan_seen = photon_plan_seen_.load(std::memory_order_relaxed);
      parser.set_photon_plan_seen(entry.photon_plan_seen);
      recorder.into = &entry.event;
      try {
        entry.status = parser.ParseLineUncounted(batch->bytes.data() + entry.offset, entry.size,
                                                 batch->bytes.size() - entry.offset, &entry.info);
      } catch (const std::bad_alloc&) {
        entry.status = Internal("out of memory while parsing this line");
      }
      if (!entry.status.ok()) entry.event = std::monostate{};
      if (entry.info.photon_plan) photon_plan_seen_.store(true, std::memory_order_relaxed);
    }
    Batch* finished = batch.get();
    batch.reset();  // the caller's reference is the last: it may reuse the buffers
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished->done = true;
    }
    batch_done_.notify_all();
  }
}

}  // namespace sparkprof::eventlog
