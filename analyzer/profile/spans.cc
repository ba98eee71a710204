#include "analyzer/profile/spans.h"

#include <algorithm>

namespace sparkprof::profile {

int64_t MsToNs(int64_t ms) {
  constexpr int64_t kLimit = INT64_MAX / 1'000'000;
  return std::clamp(ms, -kLimit, kLimit) * 1'000'000;
}

SpansMs SubtractSpans(const SpansMs& spans, const SpansMs& minus) {
  SpansMs out;
  auto cut = minus.begin();
  for (auto [from, to] : spans) {
    while (cut != minus.end() && cut->second <= from) ++cut;
    for (auto it = cut; it != minus.end() && it->first < to; ++it) {
      if (it->first > from) out.emplace_back(from, it->first);
      from = std::max(from, it->second);
      if (from >= to) break;
    }
    if (from < to) out.emplace_back(from, to);
  }
  return out;
}

int64_t OverlapNs(std::span<const std::pair<int64_t, int64_t>> spans_ms, int64_t start_ns,
                  int64_t end_ns) {
  if (end_ns <= start_ns || spans_ms.empty()) return 0;
  auto it = std::upper_bound(
      spans_ms.begin(), spans_ms.end(), start_ns,
      [](int64_t at, const std::pair<int64_t, int64_t>& span) { return at < MsToNs(span.second); });
  int64_t covered = 0;
  for (; it != spans_ms.end() && MsToNs(it->first) < end_ns; ++it) {
    const int64_t from = std::max(start_ns, MsToNs(it->first));
    const int64_t to = std::min(end_ns, MsToNs(it->second));
    if (to > from) covered += to - from;
  }
  return covered;
}

}  // namespace sparkprof::profile
