// Detection plus decoding, as the event-log reader uses them; the last input byte picks a file
// name so the extension tie-breaks get exercised too.
#include <iterator>

#include "analyzer/codec/fuzz/fuzz_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkprof::codec;
  static const char* const kNames[] = {"app-1",      "app-1.lz4", "app-1.snappy.inprogress",
                                       "app-1.zstd", "app-1.lzf", "events_1_a.gz.compact",
                                       "a.zip",      "a.json"};
  std::string bytes(reinterpret_cast<const char*>(data), size);
  const char* name = kNames[size == 0 ? 0 : data[size - 1] % std::size(kNames)];
  DecoderLimits limits;
  limits.max_block_bytes = 1 << 20;
  limits.max_output_bytes = 32 << 20;
  auto opened = OpenDecoded(sparkprof::MakeMemoryInputStream(bytes), name, limits);
  if (!opened.ok()) return 0;
  fuzz::DrainForFuzzing(*opened->stream, 8192, limits.max_output_bytes);
  return 0;
}
