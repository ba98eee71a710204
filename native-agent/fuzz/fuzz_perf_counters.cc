// Fuzzes the reader of HotSpot's performance counter region (jvm_counters.h): arbitrary bytes are
// refused with a reason or indexed, every kept value pointer inside the region and aligned.
#include <cstdint>
#include <cstring>
#include <vector>

#include "native-agent/jvm_counters.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace agent = sparkprof::agent;
  // An 8-byte aligned copy, as HotSpot's region is.
  std::vector<int64_t> aligned((size + 7) / 8);
  if (size > 0) std::memcpy(aligned.data(), data, size);
  const char* base = reinterpret_cast<const char*>(aligned.data());
  auto parsed = agent::ParsePerfCounters(base, size, nullptr);
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) __builtin_trap();
    return 0;
  }
  for (const agent::PerfCounter& counter : *parsed) {
    if (counter.name.empty() || counter.name.size() > 1024 || counter.text.size() > 256) {
      __builtin_trap();
    }
    if (counter.value != nullptr) {
      const auto* p = reinterpret_cast<const char*>(const_cast<const int64_t*>(counter.value));
      if (p < base || p + sizeof(int64_t) > base + size) __builtin_trap();
      volatile int64_t sink = *counter.value;
      (void)sink;
    }
  }
  if (auto opened = agent::JvmCounters::Open(base, size); opened.ok()) {
    agent::JvmMemoryReading reading = (*opened)->Read();
    (*opened)->OnGcFinish();
    volatile uint64_t sink = reading.heap_used_bytes;
    (void)sink;
    delete *opened;
  }
  return 0;
}
