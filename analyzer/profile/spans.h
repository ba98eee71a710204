// Time spans, [start, end) in epoch ms, sorted and disjoint -- the phase sweep's driver-only and
// no-task stretches (diagnosis/phase_breakdown.h) -- and how much of a window in ns they cover,
// in exact integers (epoch ns do not fit a double's 53 bits).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace sparkprof::profile {

using SpansMs = std::vector<std::pair<int64_t, int64_t>>;

// A process's CPU and run delay over a window, in epoch ns (the Python driver program's, from its
// sampler: DriverProfile::PythonWindows, for ApplicationCpuUse::DriverRunDelayDuring).
struct ProcessWindow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t cpu_ns = 0;
  uint64_t run_delay_ns = 0;
};

// Epoch ms to ns, saturating (a hostile log's times must not overflow).
int64_t MsToNs(int64_t ms);

// `spans` less `minus` (both sorted and disjoint): what of `spans` no span of `minus` covers,
// sorted and disjoint.
SpansMs SubtractSpans(const SpansMs& spans, const SpansMs& minus);

// How many ns of [start_ns, end_ns) the sorted, disjoint `spans_ms` cover: a binary search for
// the first span ending after start_ns, then the spans up to end_ns.
int64_t OverlapNs(std::span<const std::pair<int64_t, int64_t>> spans_ms, int64_t start_ns,
                  int64_t end_ns);

}  // namespace sparkprof::profile
