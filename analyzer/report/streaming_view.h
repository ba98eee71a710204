// The streaming section of every report: per run of a Structured Streaming query, its batches,
// rates, batch time by part, worst batches and state trend, computed once here (from the model
// and diagnosis/streaming_batches.h, the figures the rules read) for the JSON, text, Markdown and
// HTML reports. Bounded: at most kMaxReportedRuns runs in the text, Markdown and HTML reports, a
// timeline of at most kTimelinePoints points per run in the JSON report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/diagnosis/streaming_batches.h"
#include "analyzer/model/application_model.h"

namespace sparkprof::report {

inline constexpr size_t kMaxReportedRuns = 20;
inline constexpr size_t kTimelinePoints = 100;

struct StreamingRunView {
  const model::StreamingQueryRun* run = nullptr;
  std::string label;   // query "name" or query <id>
  std::string status;  // "stopped", "failed: <exception>", "no end in the log"
  // Over all of the run's batches.
  model::StreamingBatch all;  // every record merged: sums over the run, the last levels
  int64_t first_state_rows = -1;
  diagnosis::StreamingWindow recent;  // invalid when the run has too few batches
  // At most kTimelinePoints consecutive groups of records, each merged.
  std::vector<model::StreamingBatch> timeline;
};

std::vector<StreamingRunView> StreamingViews(const model::ApplicationModel& model);

// The section as lines of plain text (strings from the log unescaped: each renderer escapes).
// The run's heading first, then its lines.
std::string StreamingHeading(const StreamingRunView& view);
std::vector<std::string> StreamingLines(const StreamingRunView& view);

}  // namespace sparkprof::report
