#include "analyzer/eventlog/parallel_line_parser.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <system_error>
#include <utility>

namespace sparkprof::eventlog {

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
    Event event;                    // a copy of the parser's, when the line parsed
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
  explicit Recorder(const ParserLimits& limits) : parser(limits) {}
  EventParser parser;

  // Parses every line of `batch` into its entries, with the Photon state `photon_plan_seen`
  // has as each line starts (and sets it when a line holds a Photon plan).
  void Parse(Batch& batch, std::atomic<bool>& photon_plan_seen) {
    for (Batch::Entry& entry : batch.lines()) {
      entry.photon_plan_seen = photon_plan_seen.load(std::memory_order_relaxed);
      parser.set_photon_plan_seen(entry.photon_plan_seen);
      try {
        entry.status =
            parser.ParseLineUncounted(entry.data, entry.size, entry.capacity, &entry.info);
        // Assigning into the entry's event from an earlier use reuses its strings and vectors.
        if (entry.status.ok()) entry.event = *entry.info.event;
      } catch (const std::bad_alloc&) {
        entry.status = Internal("out of memory while parsing this line");
      }
      entry.info.event = nullptr;  // the parser's, overwritten by its next line
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
      if (status.ok()) {
        sink_.OnEvent(*info.event);
        ordered_.CountEvent(info.event_name, info.interpreted);
      }
      on_line_(entry.position, status);
      continue;
    }
    if (entry.info.photon_plan) ordered_.set_photon_plan_seen(true);
    if (entry.status.ok()) {
      sink_.OnEvent(entry.event);
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
        entry.event = Event{};
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
