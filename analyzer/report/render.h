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

// json: one report object, or {"schema", "applications": [...], "not_analysed": [...]} for
// several; html: one page with a section per application; text and md: one report per
// application, separated by a rule. With several applications, every format ends with the
// applications of the input that gave no report (`not_analysed`), with why.
std::string RenderReport(std::string_view format, const std::vector<const Analysis*>& analyses,
                         const NotAnalysedList& not_analysed = {});

// A report written application by application as each is ready, so that a directory of thousands
// of applications needs only the ones in flight in memory. RenderSection renders one application
// (any thread); a ReportAssembler joins the sections in report order into exactly RenderReport's
// bytes. Every format but html (one page whose head names all applications).
bool IsSectionFormat(std::string_view format);
std::string RenderSection(std::string_view format, const Analysis& analysis);

class ReportAssembler {
 public:
  explicit ReportAssembler(std::string_view format);
  // What to write after the next application's section. json holds the first section back until
  // a second one shows the report is the several-application document.
  std::string Add(std::string section);
  // What ends the report (json: the held section when it was the only one); with several
  // applications, the list of those not analysed (every format).
  std::string Finish(const NotAnalysedList& not_analysed = {});
  int64_t applications() const { return applications_; }

 private:
  std::string format_;
  std::string held_;
  int64_t applications_ = 0;
};

// Does any application have a finding of `threshold` severity or worse? (`--fail-on`)
bool AnyFindingAtOrAbove(const std::vector<const Analysis*>& analyses,
                         diagnosis::Severity threshold);

}  // namespace sparkprof::report
