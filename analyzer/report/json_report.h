// The machine-readable report, schema "sparkprof.report/v1" (docs/report-schema.md).
#pragma once

#include <string>
#include <vector>

#include "analyzer/report/analysis.h"
#include "common/json_writer.h"

namespace sparkprof::report {

// One `stages[]` / `jobs[]` entry of the report (also the driver's live job spans read them).
void WriteStageSummary(const StageSummary& stage, JsonWriter& out);
void WriteJobSummary(const JobSummary& job, JsonWriter& out);
// One report object.
void WriteJsonReport(const Analysis& analysis, JsonWriter& out);
// One application: the report object; several: {"schema": ..., "applications": [...]}.
std::string RenderJson(const std::vector<const Analysis*>& analyses);

}  // namespace sparkprof::report
