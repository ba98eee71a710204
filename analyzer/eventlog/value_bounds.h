// The bounds of every number an event carries, set here and nowhere else. The parser reads each
// integer within kMaxInteger and then bounds each event it gives (BoundValues) before any sink sees
// it, so the model builder, the live driver's counts and every rule form their sums, differences
// and products over these values without overflow. Spark's own values are far inside the bounds;
// only a broken or hostile log reaches them.
#pragma once

#include <cstdint>

#include "analyzer/eventlog/events.h"

namespace sparkprof::eventlog {

// Any integer a line holds: +-2^53 (epoch ms for 285,000 years, 9 PB, 104 days of ns). Ids and
// accumulator values stay within it only: a stage's summed nsTiming metric can pass 2^50.
inline constexpr int64_t kMaxInteger = int64_t{1} << 53;
// A task's counters, an executor's peaks, a block manager's or cached RDD's memory: +-2^50 (a
// petabyte, 13 days of ns in one task). Symmetric, so a real log's (rare) negative values stay as
// they are.
inline constexpr int64_t kMaxAmount = int64_t{1} << 50;
// Timestamps: -1 ("not in the log") to 2^45 ms (the year 3084).
inline constexpr int64_t kMaxTimeMs = int64_t{1} << 45;
// Counts an event declares (a stage's tasks, an executor's cores): 0 to 2^24.
inline constexpr int32_t kMaxDeclaredCount = 1 << 24;

// Clamps the event's times, amounts and declared counts to the bounds above.
void BoundValues(Event& event);

}  // namespace sparkprof::eventlog
