// Human-readable numbers for the text, Markdown and HTML reports.
#pragma once

#include <cstdint>
#include <string>

namespace sparkprof::report {

// A double (evidence values, ratios of hostile inputs) as int64, saturating; NaN becomes 0.
int64_t SaturatingInt64(double value);

std::string HumanBytes(int64_t bytes);        // "1.5 GiB"
std::string HumanDurationMs(int64_t millis);  // "2h 03m", "4m 12s", "8.3 s", "120 ms"
std::string Percent(double ratio);            // "12.5%"
std::string FormatEpochMs(int64_t epoch_ms);  // "2024-02-13 18:58:22 UTC"

}  // namespace sparkprof::report
