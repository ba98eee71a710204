// The report for a set of analysed applications in one of the output formats, exactly as
// `sparkprof analyze --format ...` writes it; the CLI and the Python package both render here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/diagnosis/finding.h"
#include "analyzer/report/analysis.h"

namespace sparkprof::report {

// True for the formats RenderReport knows: "text", "md", "json", "html".
bool IsReportFormat(std::string_view format);

// json: one report object, or {"schema", "applications": [...]} for several; html: one page with a
// section per application; text and md: one report per application, separated by a rule.
std::string RenderReport(std::string_view format, const std::vector<const Analysis*>& analyses);

// Does any application have a finding of `threshold` severity or worse? (`--fail-on`)
bool AnyFindingAtOrAbove(const std::vector<const Analysis*>& analyses,
                         diagnosis::Severity threshold);

}  // namespace sparkprof::report
