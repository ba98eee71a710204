#include "driver-aggregator/event_log_analysis.h"

#include <algorithm>
#include <vector>

#include "analyzer/report/json_report.h"

namespace sparkprof::driver {

EventLogAnalysis::EventLogAnalysis(LiveOptions options) : options_(options), live_(options) {}

void EventLogAnalysis::Add(std::string_view bytes) {
  bytes_added_ += bytes.size();
  while (!bytes.empty()) {
    const size_t end = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, end);
    // Past the limit the line is refused whole: its first max_line_bytes + 1 bytes are enough
    // for LiveApplication to say so, the rest is not kept.
    const size_t room =
        options_.max_line_bytes + 1 - std::min(pending_.size(), options_.max_line_bytes + 1);
    pending_.append(piece.substr(0, room));
    if (end == std::string_view::npos) return;
    EndLine();
    bytes.remove_prefix(end + 1);
  }
}

void EventLogAnalysis::EndLine() {
  // A bad line is counted (and kept for the report's input section) by LiveApplication.
  (void)live_.OnEventLine(pending_);
  pending_.clear();
}

Result<std::string> EventLogAnalysis::ReportJson(const std::string& input_name) {
  if (reported_) return InvalidArgument("the event log's report was made already");
  reported_ = true;
  if (!pending_.empty()) EndLine();
  if (live_.Counts().events == 0) {
    return InvalidArgument(input_name + ": no line of " + std::to_string(bytes_added_) +
                           " bytes is a Spark event (not an event log?)");
  }
  Result<report::Analysis> analysis = live_.AnalysisSoFar(input_name);
  if (!analysis.ok()) return analysis.status();
  analysis->layout = "history-server";
  const std::vector<const report::Analysis*> one = {&analysis.value()};
  return report::RenderJson(one);
}

}  // namespace sparkprof::driver
