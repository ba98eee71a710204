// Fuzzes the live feed's entry (DriverAggregator::OnEvent, as the listener's JNI call reaches it):
// the input is split into lines and fed as listener events; snapshots (scrapes) are taken between
// them and the application is finished at the end. Nothing may crash, whatever the lines say
// (events out of order, duplicated, missing, hostile values), and every scrape must be valid
// UTF-8 (Prometheus rejects a whole scrape for one bad byte, e.g. in an application name).
// Seeds: corpus/live_events/.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "common/utf8.h"
#include "driver-aggregator/driver_aggregator.h"

namespace {

void CheckValidUtf8(std::string_view text) {
  while (!text.empty()) {
    uint32_t code_point = 0;
    size_t length = sparkprof::utf8::Decode(text, code_point);
    if (length == 0) __builtin_trap();
    text.remove_prefix(length);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sparkprof::driver::AggregatorOptions options;
  options.live_refresh_interval_ms = 0;  // every render recomputes the live figures
  options.live_extend_to_now = (size % 2) == 0;
  options.live.max_line_bytes = 1 << 16;
  auto started = sparkprof::driver::DriverAggregator::Start(options);
  if (!started.ok()) return 0;
  sparkprof::driver::DriverAggregator& aggregator = **started;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t lines = 0;
  while (!input.empty()) {
    size_t end = input.find('\n');
    std::string_view line = input.substr(0, end);
    (void)aggregator.OnEvent(line);
    if (++lines % 16 == 0) CheckValidUtf8(aggregator.registry().Render());
    if (end == std::string_view::npos) break;
    input.remove_prefix(end + 1);
  }
  CheckValidUtf8(aggregator.registry().Render());
  (void)aggregator.FinishApplication();  // no output directory: the analysis runs, no files
  CheckValidUtf8(aggregator.registry().Render());
  return 0;
}
