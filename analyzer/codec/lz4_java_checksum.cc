#include "analyzer/codec/lz4_java_checksum.h"

// xxHash's header-only mode (its documented XXH_INLINE_ALL): the hash is compiled into this file,
// so no binary (the CLI, the Python module, libsparkprof_driver.so) gains a runtime dependency.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sparkprof::codec {

uint32_t Lz4JavaBlockChecksum(std::string_view uncompressed) {
  // xxHash's precondition (no null input with a length), checked there only by a debug-level
  // assertion, which the static analyzer cannot see; a string_view never breaks it.
  if (uncompressed.data() == nullptr && !uncompressed.empty()) __builtin_unreachable();
  return XXH32(uncompressed.data(), uncompressed.size(), kLz4JavaChecksumSeed) &
         kLz4JavaChecksumMask;
}

}  // namespace sparkprof::codec
