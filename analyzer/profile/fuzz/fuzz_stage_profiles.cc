// Fuzzes the profile summary the diagnosis reads: arbitrary bytes are refused or summarised per
// stage (every stage's frames, sites and patterns walked), never trusted.
#include <cstdint>
#include <string>
#include <string_view>

#include "analyzer/profile/stage_profiles.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace profile = sparkprof::profile;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  sparkprof::Result<profile::ApplicationProfile> loaded =
      profile::ApplicationProfileFromBytes(bytes, "fuzz.sparkprof");
  if (!loaded.ok()) return 0;
  uint64_t sum = 0;
  for (const profile::StageProfile& stage : loaded->stages) {
    sum += stage.RunnableNs(stage.on_cpu_ns) + stage.top_self.size() + stage.sites.size();
    for (const profile::PatternTime& pattern : stage.patterns) sum += pattern.ns;
    profile::StageProfile combined = loaded->Combined(stage.stage_id);
    sum += combined.task_ns;
  }
  volatile uint64_t sink = sum;  // the sums are used: nothing is optimised away
  (void)sink;
  return 0;
}
