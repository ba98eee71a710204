#include "analyzer/eventlog/parallel_line_parser.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <span>
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

// Keeps a copy of the event the parser delivers for the line being parsed (into an entry that
// may hold an earlier line's event: assigning reuses its strings and vectors).
class RecordingSink final : public EventSink {
 public:
  RecordedEvent* into = nullptr;
  bool recorded = false;  // whether the line gave an event

  void OnLogStart(const LogStartEvent& e) override { Record(e); }
  void OnDatabricksMetadata(const DatabricksMetadataEvent& e) override { Record(e); }
  void OnApplicationStart(const ApplicationStartEvent& e) override { Record(e); }
  void OnApplicationEnd(const ApplicationEndEvent& e) override { Record(e); }
  void OnEnvironmentUpdate(const EnvironmentUpdateEvent& e) override { Record(e); }
  void OnResourceProfileAdded(const ResourceProfileAddedEvent& e) override { Record(e); }
  void OnExecutorAdded(const ExecutorAddedEvent& e) override { Record(e); }
  void OnExecutorRemoved(const ExecutorRemovedEvent& e) override { Record(e); }
  void OnExclusion(const ExclusionEvent& e) override { Record(e); }
  void OnBlockManager(const BlockManagerEvent& e) override { Record(e); }
  void OnJobStart(const JobStartEvent& e) override { Record(e); }
  void OnJobEnd(const JobEndEvent& e) override { Record(e); }
  void OnStageSubmitted(const StageSubmittedEvent& e) override { Record(e); }
  void OnStageCompleted(const StageCompletedEvent& e) override { Record(e); }
  void OnTaskStart(const TaskStartEvent& e) override { Record(e); }
  void OnTaskEnd(const TaskEndEvent& e) override { Record(e); }
  void OnStageExecutorMetrics(const StageExecutorMetricsEvent& e) override { Record(e); }
  void OnSqlExecutionStart(const SqlExecutionStartEvent& e) override { Record(e); }
  void OnSqlExecutionEnd(const SqlExecutionEndEvent& e) override { Record(e); }
  void OnSqlAdaptiveUpdate(const SqlAdaptiveUpdateEvent& e) override { Record(e); }
  void OnSqlDriverAccumUpdates(const SqlDriverAccumUpdatesEvent& e) override { Record(e); }
  void OnOtherEvent(std::string_view name, int64_t timestamp_ms) override {
    Record(OtherEvent{std::string(name), timestamp_ms});
  }

 private:
  template <typename Event>
  void Record(Event&& event) {
    *into = std::forward<Event>(event);
    recorded = true;
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
    const char* data;  // in one of `buffers`
    size_t size;
    size_t capacity;
    Position position;
    // Filled by the thread that parses the batch out of order.
    Status status;
    EventParser::LineInfo info;
    bool photon_plan_seen = false;  // the state the line was parsed with
    RecordedEvent event;
  };
  std::vector<LineBuffer> buffers;  // hold the lines' bytes
  // The first `size` entries are this batch's lines; the others are kept from an earlier use of
  // the batch, so that their strings and vectors are reused (not freed and allocated again).
  std::vector<Entry> entries;
  size_t size = 0;
  size_t bytes = 0;
  bool done = false;  // guarded by the parser's mutex

  std::span<Entry> lines() { return {entries.data(), size}; }
};

struct ParallelLineParser::Recorder {
  explicit Recorder(const ParserLimits& limits) : parser(sink, limits) {}
  RecordingSink sink;
  EventParser parser;

  // Parses every line of `batch` into its entries, with the Photon state `photon_plan_seen`
  // has as each line starts (and sets it when a line holds a Photon plan).
  void Parse(Batch& batch, std::atomic<bool>& photon_plan_seen) {
    for (Batch::Entry& entry : batch.lines()) {
      entry.photon_plan_seen = photon_plan_seen.load(std::memory_order_relaxed);
      parser.set_photon_plan_seen(entry.photon_plan_seen);
      sink.into = &entry.event;
      sink.recorded = false;
      try {
        entry.status = parser.ParseLineUncounted(entry.data, entry.size, entry.capacity,
                                                 &entry.info);
      } catch (const std::bad_alloc&) {
        entry.status = Internal("out of memory while parsing this line");
      }
      if (!entry.status.ok() || !sink.recorded) entry.event = std::monostate{};
      if (entry.info.photon_plan) photon_plan_seen.store(true, std::memory_order_relaxed);
    }
  }
};

ParallelLineParser::ParallelLineParser(EventParser& ordered, EventSink& sink,
                                       const ParserLimits& limits, int threads, OnLine on_line,
                                       ReadAheadStream* reading)
    : ordered_(ordered),
      sink_(sink),
      limits_(limits),
      on_line_(std::move(on_line)),
      max_in_flight_(2 * static_cast<size_t>(std::max(threads, 1))) {
  photon_plan_seen_ = ordered_.photon_plan_seen();
  int workers = threads - 1;
  if (reading != nullptr && threads > 1) {
    try {
      reading_recorder_ = std::make_unique<Recorder>(limits_);
      if (reading->SetIdleWork([this] { return HelpWhileReading(); })) {
        reading_ = reading;
        --workers;
      } else {
        reading_recorder_.reset();
      }
    } catch (const std::bad_alloc&) {
      // Workers parse instead.
    }
  }
  for (int i = 0; i < workers; ++i) {
    try {
      workers_.emplace_back([this] { Work(); });
    } catch (const std::system_error&) {
      break;  // fewer workers; this thread parses what they do not take
    }
  }
  if (!workers_.empty()) {
    // This thread hands the workers batches and takes them back all the time (reading a
    // compressed log, it is kept apart from the read-ahead thread already: the workers, which
    // started on its one CPU, go to others).
    try {
      std::vector<pthread_t> workers;
      for (std::thread& worker : workers_) workers.push_back(worker.native_handle());
      apart_.emplace(workers);
    } catch (const std::bad_alloc&) {
      // Left where Linux puts them (the workers are running: the constructor must not throw).
    }
  }
}

ParallelLineParser::~ParallelLineParser() {
  if (reading_ != nullptr) reading_->SetIdleWork(nullptr);  // returns once it stopped helping
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  apart_.reset();  // this thread's CPUs back
}

void ParallelLineParser::Add(const Line& line) {
  if (line.size > kParseInOrderLineBytes || line.buffer == nullptr) {
    Submit();
    Deliver(0);
    Status status = ordered_.ParseLine(line.data, line.size, line.capacity);
    on_line_({line.number, line.byte_offset, line.last_without_newline}, status);
    photon_plan_seen_ = ordered_.photon_plan_seen();
    return;
  }
  if (!filling_) {
    if (!spare_.empty()) {
      filling_ = std::move(spare_.back());
      spare_.pop_back();
    } else {
      filling_ = std::make_shared<Batch>();
    }
  }
  Batch& batch = *filling_;
  if (batch.buffers.empty() || batch.buffers.back() != *line.buffer) {
    batch.buffers.push_back(*line.buffer);
  }
  if (batch.size == batch.entries.size()) batch.entries.emplace_back();
  Batch::Entry& entry = batch.entries[batch.size++];
  entry.data = line.data;
  entry.size = line.size;
  // The line reader keeps the padding unchanged while the buffer is held, not what follows.
  entry.capacity = std::min(line.capacity, line.size + EventParser::kRequiredPadding);
  entry.position = {line.number, line.byte_offset, line.last_without_newline};
  batch.bytes += line.size;
  if (batch.bytes >= kParseBatchBytes || batch.size >= kParseBatchLines) Submit();
}

void ParallelLineParser::Submit() {
  if (!filling_ || filling_->size == 0) return;
  std::shared_ptr<Batch> batch = std::move(filling_);
  in_order_.push_back(batch);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    todo_.push_back(std::move(batch));
  }
  if (!workers_.empty()) work_ready_.notify_one();
  if (reading_ != nullptr) reading_->WakeForIdleWork();
  Deliver(max_in_flight_);
}

void ParallelLineParser::Finish() {
  Submit();
  Deliver(0);
}

void ParallelLineParser::Deliver(size_t in_flight) {
  while (!in_order_.empty()) {
    std::shared_ptr<Batch> take;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!in_order_.front()->done) {
        if (in_order_.size() < in_flight) return;
        if (todo_.empty()) {
          batch_done_.wait(lock, [&] { return in_order_.front()->done; });
        } else {
          // Parse here rather than wait: the oldest batch no worker took.
          take = std::move(todo_.front());
          todo_.pop_front();
        }
      }
    }
    if (take) {
      ParseHere(std::move(take));
    } else {
      DeliverFront();
    }
  }
}

void ParallelLineParser::ParseHere(std::shared_ptr<Batch> batch) {
  if (batch == in_order_.front()) {
    // Every line before it was delivered: parse in order, straight into the sink.
    in_order_.pop_front();
    for (const Batch::Entry& entry : batch->lines()) {
      Status status = ordered_.ParseLine(entry.data, entry.size, entry.capacity);
      if (ordered_.photon_plan_seen()) photon_plan_seen_.store(true, std::memory_order_relaxed);
      on_line_(entry.position, status);
    }
    Recycle(std::move(batch));
    return;
  }
  if (!helper_) helper_ = std::make_unique<Recorder>(limits_);
  helper_->Parse(*batch, photon_plan_seen_);
  std::lock_guard<std::mutex> lock(mutex_);
  batch->done = true;
}

void ParallelLineParser::DeliverFront() {
  std::shared_ptr<Batch> batch = std::move(in_order_.front());
  in_order_.pop_front();
  for (Batch::Entry& entry : batch->lines()) {
    if (entry.photon_plan_seen != ordered_.photon_plan_seen()) {
      // Parsed with a Photon state this line does not have in log order: parse it again here.
      EventParser::LineInfo info;
      Status status = ordered_.ParseLineUncounted(entry.data, entry.size, entry.capacity, &info);
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
  Recycle(std::move(batch));
}

void ParallelLineParser::Recycle(std::shared_ptr<Batch> batch) {
  // The line reader reuses a buffer once no batch holds it; released on this thread.
  batch->buffers.clear();
  if (batch.use_count() == 1 && spare_.size() < max_in_flight_) {
    // Only this thread holds it now (the worker let go before marking it done): reuse it.
    for (Batch::Entry& entry : batch->lines()) {
      // Task events come back with the same fields; others (plans) would hold their memory.
      if (!std::holds_alternative<TaskEndEvent>(entry.event) &&
          !std::holds_alternative<TaskStartEvent>(entry.event)) {
        entry.event = std::monostate{};
      }
    }
    batch->size = 0;
    batch->bytes = 0;
    batch->done = false;
    spare_.push_back(std::move(batch));
  }
}

void ParallelLineParser::Work() {
  Recorder recorder(limits_);
  while (true) {
    std::shared_ptr<Batch> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || !todo_.empty(); });
      if (todo_.empty()) return;
      batch = std::move(todo_.front());
      todo_.pop_front();
    }
    ParseTaken(recorder, std::move(batch));
  }
}

void ParallelLineParser::ParseTaken(Recorder& recorder, std::shared_ptr<Batch> batch) {
  recorder.Parse(*batch, photon_plan_seen_);
  Batch* finished = batch.get();
  batch.reset();  // the caller's reference is the last: it may reuse the vectors
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished->done = true;
  }
  batch_done_.notify_all();
}

bool ParallelLineParser::HelpWhileReading() {
  std::shared_ptr<Batch> batch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || todo_.empty()) return false;
    batch = std::move(todo_.front());
    todo_.pop_front();
  }
  ParseTaken(*reading_recorder_, std::move(batch));
  return true;
}

}  // namespace sparkprof::eventlog
