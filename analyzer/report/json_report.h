// The machine-readable report, schema "sparkprof.report/v1" (docs/report-schema.md).
#pragma once

#include <string>
#include <vector>

#include "analyzer/report/analysis.h"
#include "common/json_writer.h"

namespace sparkprof::report {

// One report object.
void WriteJsonReport(const Analysis& analysis, JsonWriter& out);
// One application: the report object; several: {"schema": ..., "applications": [...]}.
std::string RenderJson(const std::vector<const Analysis*>& analyses);

}  // namespace sparkprof::report
