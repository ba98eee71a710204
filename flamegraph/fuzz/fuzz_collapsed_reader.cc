// Fuzzes the collapsed-stack reader and what is written from its model (collapsed, HTML,
// speedscope), checking the round trip is stable: write(read(write(read(x)))) == write(read(x)).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "flamegraph/collapsed_reader.h"
#include "flamegraph/collapsed_writer.h"
#include "flamegraph/html_renderer.h"
#include "flamegraph/speedscope_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fg = sparkprof::flamegraph;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  fg::CollapsedReadOptions options;
  options.max_frames_per_stack = 256;
  fg::ProfileModel model;
  fg::ReadReport report;
  if (!fg::ReadCollapsed(text, options, model, report).ok()) return 0;

  std::string collapsed;
  fg::WriteCollapsed(model, {}, collapsed);
  fg::ProfileModel reread;
  fg::ReadReport reread_report;
  (void)fg::ReadCollapsed(collapsed, options, reread, reread_report);
  std::string again;
  fg::WriteCollapsed(reread, {}, again);
  if (again != collapsed || reread.total_weight() != model.total_weight()) std::abort();

  fg::ProfileModel pruned = model.Pruned(model.total_weight() / 50);
  std::string html;
  fg::DiffProfile diff = fg::ComputeDiff(reread, pruned);
  fg::RenderHtml(pruned, {}, &diff, html);
  std::string speedscope;
  fg::WriteSpeedscope(pruned, {}, speedscope);
  return 0;
}
