#include "analyzer/codec/lz4_java_checksum.h"

// xxHash's header-only mode (its documented XXH_INLINE_ALL): the hash is compiled into this file,
// so no binary (the CLI, the Python module, libsparkprof_driver.so) gains a runtime dependency.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sparkprof::codec {

uint32_t Lz4JavaBlockChecksum(std::string_view uncompressed) {
  return XXH32(uncompressed.data(), uncompressed.size(), kLz4JavaChecksumSeed) &
         kLz4JavaChecksumMask;
}

}  // namespace sparkprof::codec
