// Fuzzes the driver's batch ingest: whatever bytes arrive, Ingest() counts or merges them and
// never crashes, and the metrics still render. Seeds: real agent batches (corpus/driver_ingest/,
// where scripts/test.sh finds them).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "driver-aggregator/driver_aggregator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<sparkprof::driver::DriverAggregator> aggregator = [] {
    sparkprof::driver::AggregatorOptions options;
    options.max_nodes_per_stage = 5000;  // reach the folding path quickly
    options.max_stages = 8;
    options.max_batches_per_second = UINT32_MAX;
    return std::move(sparkprof::driver::DriverAggregator::Start(options)).value();
  }();
  aggregator->Ingest(std::span<const uint8_t>(data, size));
  if (size % 16 == 0) aggregator->registry().Render();
  return 0;
}
