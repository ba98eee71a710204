#include "analyzer/codec/lz4_java_checksum.h"

// xxHash's header-only mode (its documented XXH_INLINE_ALL): the hash is compiled into this file,
// so no binary (the CLI, the Python module, libsparkprof_driver.so) gains a runtime dependency.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sparkprof::codec {

uint32_t Lz4JavaBlockChecksum(std::string_view uncompressed) {
  // xxHash's precondition (no null input with a length) is checked there only by a debug-level
  // assertion. A string_view never breaks it, but clang's static analyzer, following xxHash's
  // own null test, assumes a null pointer with a length; it alone is told otherwise.
  const char* data = uncompressed.data();
#ifdef __clang_analyzer__
  if (data == nullptr) data = "";
#endif
  return XXH32(data, uncompressed.size(), kLz4JavaChecksumSeed) & kLz4JavaChecksumMask;
}

}  // namespace sparkprof::codec
