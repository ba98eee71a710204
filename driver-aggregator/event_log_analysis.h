// An application's event log analysed inside Spark's History Server, for the sparkprof tab of an
// application whose driver stored no profile beside its log. The History Server's Java side reads
// the log through Spark's own reader (any Hadoop file system, any codec Spark writes, rolling
// logs) and hands the decoded bytes here in chunks of any size; the lines go through the live
// feed's LiveApplication (the engine's parser and model builder), and the report is the one
// `sparkprof analyze` writes for the same lines, without the right-sizing frontier (the cost of
// a page view stays small; `sparkprof analyze` has it).
//
// Bounded: a line longer than LiveOptions::max_line_bytes is kept only up to that length and
// refused as too long (a counted bad line); the caller bounds the bytes and the time it spends
// (io.sparkprof.HistoryEventLogAnalysis, docs/limits.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "driver-aggregator/live_application.h"

namespace sparkprof::driver {

class EventLogAnalysis {
 public:
  explicit EventLogAnalysis(LiveOptions options = {});

  // Decoded bytes of the log, split anywhere: lines end at '\n' ("\r\n" too).
  void Add(std::string_view bytes);

  // Ends the last line and returns the report document (RenderJson's several-application form,
  // as the driver's report.json), the log named `input_name`. An error when no line was an
  // event (not an event log), or when called twice.
  Result<std::string> ReportJson(const std::string& input_name);

  uint64_t bytes_added() const { return bytes_added_; }

 private:
  void EndLine();

  LiveOptions options_;
  LiveApplication live_;
  std::string pending_;  // the start of a line not ended yet, at most max_line_bytes + 1 bytes
  uint64_t bytes_added_ = 0;
  bool reported_ = false;
};

}  // namespace sparkprof::driver
