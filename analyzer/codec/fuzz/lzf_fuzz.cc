#include "analyzer/codec/fuzz/fuzz_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sparkprof::codec::fuzz::FuzzDecoder(sparkprof::codec::Format::kLzf, data, size);
  return 0;
}
