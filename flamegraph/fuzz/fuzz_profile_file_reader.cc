// Fuzzes the *.sparkprof reader: arbitrary bytes must be refused or read, never trusted.
#include <cstdint>
#include <string>
#include <string_view>

#include "flamegraph/html_renderer.h"
#include "flamegraph/profile_file_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fg = sparkprof::flamegraph;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fg::ProfileFileReadOptions options;
  options.max_batch_bytes = 1 << 20;
  options.max_frames_per_stack = 512;
  fg::ProfileModel model;
  fg::ReadReport report;
  fg::ProfileFileSummary summary;
  if (!fg::ReadProfileFile(bytes, options, model, report, &summary).ok()) return 0;
  std::string html;
  fg::RenderHtml(model, {}, nullptr, html);
  return 0;
}
