#include "analyzer/report/render.h"

#include "analyzer/report/html_report.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/markdown_report.h"
#include "analyzer/report/text_report.h"

namespace sparkprof::report {

bool IsReportFormat(std::string_view format) {
  return format == "text" || format == "md" || format == "json" || format == "html";
}

bool IsSectionFormat(std::string_view format) {
  return format == "text" || format == "md" || format == "json";
}

std::string RenderSection(std::string_view format, const Analysis& analysis) {
  if (format == "md") return RenderMarkdown(analysis);
  if (format == "json") return RenderJsonSection(analysis);
  return RenderText(analysis);
}

ReportAssembler::ReportAssembler(std::string_view format) : format_(format) {}

std::string ReportAssembler::Add(std::string section) {
  ++applications_;
  if (format_ == "json") {
    if (applications_ == 1) {
      held_ = std::move(section);
      return {};
    }
    std::string out;
    if (applications_ == 2) {
      out = JsonApplicationsHead();
      AppendJsonApplication(held_, true, out);
      held_ = {};
    }
    AppendJsonApplication(section, false, out);
    return out;
  }
  if (applications_ == 1) return section;
  const std::string rule = format_ == "md" ? "\n---\n\n" : "\n" + std::string(78, '-') + "\n\n";
  return rule + section;
}

std::string ReportAssembler::Finish(const NotAnalysedList& not_analysed) {
  if (applications_ == 0) return {};
  if (format_ == "json") {
    if (applications_ == 1) return std::move(held_) + "\n";
    return JsonApplicationsTail(not_analysed);
  }
  // One application's report stays exactly the report of it alone (stderr names the others).
  if (applications_ == 1 || not_analysed.empty()) return {};
  if (format_ == "md") return "\n---\n\n" + RenderMarkdownNotAnalysed(not_analysed);
  return "\n" + std::string(78, '-') + "\n\n" + RenderTextNotAnalysed(not_analysed);
}

std::string RenderReport(std::string_view format, const std::vector<const Analysis*>& analyses,
                         const NotAnalysedList& not_analysed) {
  if (format == "html") return RenderHtml(analyses, not_analysed);
  ReportAssembler assembler(format);
  std::string out;
  for (const Analysis* analysis : analyses) out += assembler.Add(RenderSection(format, *analysis));
  out += assembler.Finish(not_analysed);
  return out;
}

bool AnyFindingAtOrAbove(const std::vector<const Analysis*>& analyses,
                         diagnosis::Severity threshold) {
  for (const Analysis* analysis : analyses) {
    for (const diagnosis::Finding& finding : analysis->findings) {
      if (finding.severity >= threshold) return true;
    }
  }
  return false;
}

}  // namespace sparkprof::report
