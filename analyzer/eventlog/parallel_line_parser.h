// Parses event-log lines on several threads and delivers them in log order, as one EventParser
// would: the sink sees the same events in the same order, the caller the same status per line.
//
// Batches of lines are views into the line reader's buffers (kept, not copied); each worker
// parses whole batches with its own EventParser into copies of their events (so does the read-ahead
// thread decompressing the log, while it waits for the caller to take its bytes: on two cores,
// a worker beside it would take its core from the decompression); the calling thread reads
// the lines, delivers finished batches' events in order to the sink and counts their events on the
// `ordered` parser. When enough batches are in flight it parses too instead of waiting: the
// oldest batch no worker took, straight into the sink with `ordered` when every line before it
// was delivered. The one state a line leaves for the next -- whether a Photon plan was seen --
// is shared between the threads as soon as one sees it; a line parsed with another value than
// its place in the log gives is parsed again, in order, by `ordered` (at most the lines around
// the first Photon plan).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "analyzer/eventlog/event_parser.h"
#include "analyzer/eventlog/line_reader.h"
#include "common/parallel.h"
#include "common/read_ahead_stream.h"

namespace sparkprof::eventlog {

// A batch is handed to a worker at this many bytes or lines, whichever comes first; at most two
// batches per thread are in flight, holding the line reader's buffers (kParallelReadBufferBytes
// each) until delivered: small batches keep few of them held. A line longer than
// kParseInOrderLineBytes (a big SQL plan) is parsed in order by `ordered` once the lines before
// it are delivered: the workers' JSON parsers stay small (peak memory matters on logs whose
// zstd window alone takes 128 MiB).
inline constexpr size_t kParseBatchBytes = 64 << 10;
inline constexpr size_t kParseBatchLines = 512;
inline constexpr size_t kParseInOrderLineBytes = 64 << 10;
// The line reader's buffers when lines are parsed in parallel.
inline constexpr size_t kParallelReadBufferBytes = 256 << 10;

class ParallelLineParser {
 public:
  // Where a delivered line was in the log (Line without its bytes).
  struct Position {
    int64_t number;
    uint64_t byte_offset;
    bool last_without_newline;
  };
  // Called on the caller's thread, in log order, once per line added.
  using OnLine = std::function<void(const Position& line, const Status& status)>;

  // `threads` threads parse with `limits`, the caller's included (threads - 1 workers start);
  // events go to `sink`, counts and the Photon state to `ordered` (whose sink must be `sink`).
  // With `reading` (the read-ahead stream the lines come from), its thread parses while it
  // waits for free buffers, and counts as one of the threads (threads - 2 workers start).
  ParallelLineParser(EventParser& ordered, EventSink& sink, const ParserLimits& limits, int threads,
                     OnLine on_line, ReadAheadStream* reading = nullptr);
  // Delivers nothing more; stops and joins the workers. On the thread that made it (the workers
  // were kept on other CPUs than that thread while it parsed: its CPUs are given back).
  ~ParallelLineParser();
  ParallelLineParser(const ParallelLineParser&) = delete;
  ParallelLineParser& operator=(const ParallelLineParser&) = delete;

  // Keeps the line's buffer (a line without one, or a long one, is parsed here in order); may
  // deliver earlier lines (and parses or waits when enough are in flight).
  void Add(const Line& line);
  // Delivers every line added.
  void Finish();

  struct Batch;     // public for the implementation's helpers
  struct Recorder;  // a parser whose events are copied into the batch

 private:
  void Submit();
  // Delivers finished batches in order until fewer than `in_flight` are undelivered.
  void Deliver(size_t in_flight);
  void DeliverFront();
  void ParseHere(std::shared_ptr<Batch> batch);
  void Recycle(std::shared_ptr<Batch> batch);
  void Work();
  // Parses `batch`, taken from todo_, with `recorder` and marks it done (off the caller's thread).
  void ParseTaken(Recorder& recorder, std::shared_ptr<Batch> batch);
  // The reading thread's idle work: parses one batch no thread took; whether there was one.
  bool HelpWhileReading();

  EventParser& ordered_;
  EventSink& sink_;
  ParserLimits limits_;
  OnLine on_line_;
  size_t max_in_flight_;
  std::shared_ptr<Batch> filling_;
  std::deque<std::shared_ptr<Batch>> in_order_;  // submitted, not yet delivered
  std::vector<std::shared_ptr<Batch>> spare_;    // delivered, kept for their vectors
  std::unique_ptr<Recorder> helper_;             // this thread's, for batches out of order

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable batch_done_;
  std::deque<std::shared_ptr<Batch>> todo_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
  std::atomic<bool> photon_plan_seen_{false};
  ReadAheadStream* reading_ = nullptr;          // helps parse while it waits (null: it does not)
  std::optional<ApartOnCpus> apart_;            // the workers on other CPUs than this thread
  std::unique_ptr<Recorder> reading_recorder_;  // used on the reading thread only
};

}  // namespace sparkprof::eventlog
