// Numbers as people read them, in every report and every finding's explanation: one way to print
// a size, a duration or a share, so one figure reads the same wherever it appears.
#pragma once

#include <cstdint>
#include <string>

namespace sparkprof {

// A double (evidence values, ratios of hostile inputs) as int64, saturating; NaN becomes 0.
int64_t SaturatingInt64(double value);

std::string HumanBytes(int64_t bytes);        // "1.5 GiB", "512 B", "-2.0 KiB"
std::string HumanDurationMs(int64_t millis);  // "2h 03m", "4m 12s", "8.3 s", "120 ms"; "n/a" < 0
// A duration that may be short (a mean wait): below 10 ms with two decimals ("0.35 ms",
// "7.50 ms"), from 10 ms on as HumanDurationMs.
std::string HumanDurationNs(uint64_t nanos);
std::string Percent(double ratio);                  // "12.5%"
std::string Fixed(double value, int decimals = 1);  // "3.1"
std::string FormatEpochMs(int64_t epoch_ms);        // "2024-02-13 18:58:22 UTC"
// A range of core-hours in the unit its high end reads best in, both ends alike, `dash` between:
// "0.25-1.40 core-hours" from 0.1 core-hours up, "1.2-4.8 core-minutes" from one core-minute,
// "8-11 core-seconds" below (where two decimals of core-hours printed "0.00-0.00").
std::string CoreHoursRange(double low, double high, const char* dash = "-");

}  // namespace sparkprof
