// Fuzzes `sparkprof analyze` end to end on one in-memory log: reader, model, summary, phase
// breakdown, every diagnosis rule and all four report writers, with the values exactly as the log
// gives them (the live feed clamps values first; this path must survive them unclamped). Seeds:
// corpus/analyze/.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "analyzer/report/analysis.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/markdown_report.h"
#include "analyzer/report/text_report.h"
#include "common/input_stream.h"
#include "common/terminal_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkprof;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  source::ApplicationLog log;
  log.name = "fuzz.json";
  log.layout = "single";
  source::LogPart part;
  part.display_name = "fuzz.json";
  part.size_bytes = size;
  part.open = [bytes]() -> Result<std::unique_ptr<InputStream>> {
    return MakeMemoryInputStream(bytes);
  };
  log.parts.push_back(std::move(part));
  report::Analysis analysis = report::Analyze(log);
  // The text and Markdown reports go to terminals: whatever the log holds, nothing in them may
  // act on one (C0/C1 controls, bidi overrides, invalid UTF-8); newlines are their own layout.
  for (std::string text : {report::RenderText(analysis), report::RenderMarkdown(analysis)}) {
    for (char& c : text) {
      if (c == '\n') c = ' ';
    }
    if (SanitizeForTerminal(text) != text) __builtin_trap();
  }
  (void)report::RenderJson({&analysis});
  (void)report::RenderHtml(analysis);
  return 0;
}
