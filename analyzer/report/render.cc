#include "analyzer/report/render.h"

#include "analyzer/report/html_report.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/markdown_report.h"
#include "analyzer/report/text_report.h"

namespace sparkprof::report {

bool IsReportFormat(std::string_view format) {
  return format == "text" || format == "md" || format == "json" || format == "html";
}

std::string RenderReport(std::string_view format, const std::vector<const Analysis*>& analyses) {
  if (format == "json") return RenderJson(analyses);
  if (format == "html") return RenderHtml(analyses);
  const bool markdown = format == "md";
  std::string text;
  for (size_t i = 0; i < analyses.size(); ++i) {
    if (i > 0) text += markdown ? "\n---\n\n" : "\n" + std::string(78, '-') + "\n\n";
    text += markdown ? RenderMarkdown(*analyses[i]) : RenderText(*analyses[i]);
  }
  return text;
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
