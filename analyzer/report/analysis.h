// One application analysed end to end: read its log parts into a model, summarise and diagnose it.
// Both report renderers and the diagnosis rules take an Analysis.
#pragma once

#include <string>
#include <vector>

#include "analyzer/diagnosis/finding.h"
#include "analyzer/diagnosis/phase_breakdown.h"
#include "analyzer/eventlog/event_log_reader.h"
#include "analyzer/model/application_model.h"
#include "analyzer/report/summary.h"
#include "analyzer/source/log_source.h"

namespace sparkprof::report {

inline constexpr const char* kReportSchema = "sparkprof.report/v1";
// Additions within v1 (docs/report-schema.md, "Versioning"): 1 = jobs[], per-SQL-execution totals,
// counts.resubmitted_tasks, findings' category and confidence.
inline constexpr int64_t kReportSchemaMinor = 1;

struct Analysis {
  std::string log_name;  // ApplicationLog::name
  std::string layout;    // single, rolling, databricks, zip
  bool in_progress_by_name = false;
  eventlog::ReadReport read;
  model::ApplicationModel model;
  ApplicationSummary summary;
  diagnosis::PhaseBreakdown phases;
  std::vector<diagnosis::Finding> findings;  // ordered by cost_ms, most first
};

Analysis Analyze(const source::ApplicationLog& log, const eventlog::ReaderOptions& options = {});

}  // namespace sparkprof::report
