// Fuzzes the collapsed-stack reader and what is written from its model (collapsed, HTML,
// speedscope). Checks the round trip: the first write cleans names (';' and line breaks), which
// may merge two names into one, so from the second generation on write(read(c)) must equal c,
// and the total weight must never change.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "flamegraph/collapsed_reader.h"
#include "flamegraph/collapsed_writer.h"
#include "flamegraph/html_renderer.h"
#include "flamegraph/speedscope_writer.h"

namespace fg = sparkprof::flamegraph;

static std::string WriteRead(std::string_view text, const fg::CollapsedReadOptions& options,
                             uint64_t& total) {
  fg::ProfileModel model;
  fg::ReadReport report;
  (void)fg::ReadCollapsed(text, options, model, report);
  total = model.total_weight();
  std::string out;
  fg::WriteCollapsed(model, {}, out);
  return out;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  fg::CollapsedReadOptions options;
  options.max_frames_per_stack = 256;
  fg::ProfileModel model;
  fg::ReadReport report;
  if (!fg::ReadCollapsed(text, options, model, report).ok()) return 0;

  uint64_t total = 0;
  std::string first = WriteRead(text, options, total);
  std::string second = WriteRead(first, options, total);
  std::string third = WriteRead(second, options, total);
  if (third != second || total != model.total_weight()) std::abort();

  fg::ProfileModel pruned = model.Pruned(model.total_weight() / 50);
  std::string html;
  fg::DiffProfile diff = fg::ComputeDiff(model, pruned);
  fg::RenderHtml(pruned, {}, &diff, html);
  std::string speedscope;
  fg::WriteSpeedscope(pruned, {}, speedscope);
  return 0;
}
