// Treats the input as a zip archive: discovery must survive any central directory, entry names
// and nested archives, and every part it finds must read to an end or a clean error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analyzer/source/log_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sparkprof::source::DiscoveryLimits limits;
  limits.max_nested_archive_bytes = 1 << 20;
  limits.max_nested_archive_total_bytes = 2 << 20;
  limits.max_archive_entries = 1000;
  limits.max_directory_depth = 8;
  sparkprof::source::DiscoveryResult result = sparkprof::source::DiscoverArchiveBytes(
      "fuzz.zip", std::string(reinterpret_cast<const char*>(data), size), limits);
  // Deflate can expand ~1000x; a cap per part keeps a zip bomb from stalling the fuzzer.
  constexpr uint64_t kMaxBytesPerPart = 1 << 20;
  char buffer[4096];
  for (const auto& application : result.applications) {
    for (const auto& part : application.parts) {
      auto stream = part.open();
      if (!stream.ok()) continue;
      uint64_t total = 0;
      while (total < kMaxBytesPerPart) {
        auto got = (*stream)->Read(buffer, sizeof(buffer));
        if (!got.ok() || *got == 0) break;
        total += *got;
      }
    }
  }
  return 0;
}
