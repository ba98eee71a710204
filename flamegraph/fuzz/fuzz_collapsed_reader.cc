// Fuzzes the collapsed-stack reader and what is written from its model (collapsed, HTML,
// speedscope). Checks the round trip: the first write cleans names (';' and line breaks), which
// may merge two names into one, so from the second generation on write(read(c)) must equal c,
// and the total weight must never change. Reading in pieces must give what reading the whole
// gives, and pruning must keep the total and draw nothing narrower than its threshold.
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

  // Read in pieces (as a file is, 1 MiB at a time), split where the input says: the same model.
  {
    size_t piece = size == 0 ? 1 : 1 + data[0] % 17;
    fg::ProfileModel streamed;
    fg::ReadReport streamed_report;
    fg::CollapsedReader reader(options, streamed, streamed_report);
    for (size_t start = 0; start < text.size(); start += piece) {
      reader.Feed(text.substr(start, piece));
    }
    if (!reader.Finish().ok() || streamed.total_weight() != model.total_weight() ||
        streamed.node_count() != model.node_count() ||
        streamed_report.messages != report.messages) {
      std::abort();
    }
  }

  uint64_t total = 0;
  std::string first = WriteRead(text, options, total);
  std::string second = WriteRead(first, options, total);
  std::string third = WriteRead(second, options, total);
  if (third != second || total != model.total_weight()) std::abort();

  // Pruning keeps the weight: what it drops is merged into markers or left as gaps narrower
  // than the threshold, never more than that per kept parent.
  uint64_t min_total = model.total_weight() / 50;
  fg::ProfileModel pruned = model.Pruned(min_total);
  if (pruned.total_weight() != model.total_weight()) std::abort();
  for (fg::NodeId node = 1; node < pruned.node_count(); ++node) {
    if (pruned.node(node).total < min_total) std::abort();
  }
  std::string html;
  fg::DiffProfile diff = fg::ComputeDiff(model, pruned);
  fg::RenderHtml(pruned, {}, &diff, html);
  std::string speedscope;
  fg::WriteSpeedscope(pruned, {}, speedscope);
  return 0;
}
