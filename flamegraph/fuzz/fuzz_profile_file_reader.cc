// Fuzzes the *.sparkprof reader: arbitrary bytes must be refused or read, never trusted.
#include <cstdint>
#include <string>
#include <string_view>

#include "flamegraph/html_renderer.h"
#include "flamegraph/profile_file_reader.h"

namespace {

// Reads every byte of a monitor-wait row's views: they must all lie inside the batch.
void TouchMonitorWait(void* context, const sparkprof::flamegraph::MonitorWaitRow& row) {
  uint64_t& sum = *static_cast<uint64_t*>(context);
  auto touch = [&sum](std::string_view text) {
    for (char c : text) sum += static_cast<unsigned char>(c);
  };
  touch(row.executor_id);
  touch(row.monitor_class);
  touch(row.holder_thread);
  for (std::string_view frame : row.waiter_frames) touch(frame);
  for (std::string_view frame : row.holder_frames) touch(frame);
  if (!row.holder_looked && !row.holder_frames.empty()) __builtin_trap();
  sum += row.waits + row.wait_ns;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fg = sparkprof::flamegraph;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fg::ProfileFileReadOptions options;
  options.max_batch_bytes = 1 << 20;
  options.max_frames_per_stack = 512;
  uint64_t monitor_sum = 0;
  options.monitor_waits = &TouchMonitorWait;
  options.monitor_waits_context = &monitor_sum;
  fg::ProfileModel model;
  fg::ReadReport report;
  fg::ProfileFileSummary summary;
  if (!fg::ReadProfileFile(bytes, options, model, report, &summary).ok()) return 0;
  std::string html;
  fg::RenderHtml(model, {}, nullptr, html);
  volatile uint64_t sink = monitor_sum;  // used: nothing is optimised away
  (void)sink;
  return 0;
}
