// Turns one event-log JSON line into a typed event (events.h, its values bounded by
// value_bounds.h) and hands it to an EventSink.
// Knows every key variation from Spark 1.2 to 4.1 and Databricks (spark-facts.md section 4).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "analyzer/eventlog/events.h"
#include "common/status.h"

namespace sparkprof::eventlog {

struct ParserLimits {
  size_t max_plan_text_bytes = 64 * 1024;  // physical plan text kept per SQL execution
  size_t max_message_bytes = 512;          // failure messages keep their first line, this long
  int max_plan_depth = 512;                // sparkPlanInfo nesting (hostile input guard)
  size_t max_plan_nodes = 20000;           // plan nodes kept per plan (the metrics are all kept)
  size_t max_plan_string_bytes = 400;      // a node's simpleString and metadata values, cut
};

class EventParser {
 public:
  explicit EventParser(EventSink& sink, ParserLimits limits = {});
  // Without a sink: only ParseLineUncounted, whose caller takes each event.
  explicit EventParser(ParserLimits limits);
  ~EventParser();
  EventParser(const EventParser&) = delete;
  EventParser& operator=(const EventParser&) = delete;

  // Parses one line (without its newline). `capacity` is how many bytes are readable from
  // `data`; it must be at least size + kRequiredPadding (the JSON parser reads ahead).
  // On error nothing is delivered to the sink and the returned message says what was wrong
  // (the caller adds file, line and byte offset).
  Status ParseLine(const char* data, size_t size, size_t capacity);

  static constexpr size_t kRequiredPadding = 64;

  // For a reader that parses lines on several threads (ParallelLineParser): ParseLine without
  // delivering or counting the event, which the caller does with CountEvent() as it delivers
  // lines in log order.
  struct LineInfo {
    std::string event_name;    // as written in "Event" (empty when the line has none)
    bool interpreted = true;   // false: counted as unknown too
    bool photon_plan = false;  // the line held a plan with a Photon node
    // The line's event when it parsed: the parser's own, valid until its next line.
    const Event* event = nullptr;
  };
  Status ParseLineUncounted(const char* data, size_t size, size_t capacity, LineInfo* info);
  void CountEvent(std::string_view event_name, bool interpreted);

  // Once a plan with a Photon node was seen, a TaskEnd's "Accumulables" are read for Photon's
  // peak memory; before, they are skipped. The only state one line leaves for the next.
  bool photon_plan_seen() const;
  void set_photon_plan_seen(bool seen);

  // Events seen, by "Event" name as written.
  const std::map<std::string, int64_t, std::less<>>& event_counts() const { return event_counts_; }
  EventSink& sink() const;  // a parser made with one
  // Events the parser does not interpret, by name (a subset of event_counts).
  const std::map<std::string, int64_t, std::less<>>& unknown_events() const {
    return unknown_events_;
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::map<std::string, int64_t, std::less<>> event_counts_;
  std::map<std::string, int64_t, std::less<>> unknown_events_;
};

// First line of `text`, at most `max_bytes` long (cut on a UTF-8 boundary).
std::string FirstLine(std::string_view text, size_t max_bytes);
// The innermost cause an exception's text names, its first line at most `max_bytes` long: the
// exception a Python traceback ends with (its last traceback's first unindented line), else
// what the last "Caused by: " of a Java stack trace names; "" when the text has neither.
std::string RootCauseLine(std::string_view text, size_t max_bytes);

}  // namespace sparkprof::eventlog
