// Civil (UTC calendar) times as epoch milliseconds: what the log readers share to read the times
// Spark and its platforms write as text (ISO 8601 in streaming progress and Kubernetes status,
// "yy/MM/dd HH:mm:ss" in log4j lines).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sparkprof {

// Digits at `at`..`at+count` as a number, -1 when any is not a digit.
int DecimalDigits(std::string_view text, size_t at, size_t count);
// A UTC calendar time in epoch ms, -1 when a field is out of range (years 1970 to 9999).
int64_t CivilEpochMs(int year, int month, int day, int hour, int minute, int second, int ms);
// Milliseconds of a fraction at `at` (".123", ",5"), 0 when none; `end` moves past it.
int FractionMs(std::string_view text, size_t at, size_t& end);
// An ISO 8601 time ("2026-11-29T16:30:20Z", fractions and +hh:mm allowed) in epoch ms, -1 when
// it is not one (Kubernetes' finishedAt, a streaming progress's timestamp).
int64_t ParseIsoTime(std::string_view text);

}  // namespace sparkprof
