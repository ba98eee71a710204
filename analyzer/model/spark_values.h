// Spark's setting values read as numbers.
#pragma once

#include <cstdint>
#include <string>

namespace sparkprof::model {

// Spark size string parsing: "8g", "512m", "2gb", "4096" (MiB when unitless, as
// spark.executor.memory). Anything else -- negative, zero, under 1 MiB, NaN, infinite, more
// than kMaxSizeMiB, an unknown unit -- gives `fallback`: a hostile log never reaches undefined
// behaviour, and sums like memory + memory / 2 in a recommendation cannot overflow.
inline constexpr int64_t kMaxSizeMiB = int64_t{1} << 30;  // 1 PiB: more than any machine
int64_t ParseSizeMiB(const std::string& text, int64_t fallback);

}  // namespace sparkprof::model
