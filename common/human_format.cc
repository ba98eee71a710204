#include "common/human_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace sparkprof {

int64_t SaturatingInt64(double value) {
  if (!(value == value)) return 0;
  // 2^63 is exactly representable; every double below it converts.
  if (value >= 9223372036854775808.0) return INT64_MAX;
  if (value <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(value);
}

std::string HumanBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while ((value >= 1024.0 || value <= -1024.0) && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[32];
  if (unit == 0) {
    std::snprintf(buffer, sizeof(buffer), "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.1f %s", value, kUnits[unit]);
  }
  return buffer;
}

std::string HumanDurationMs(int64_t millis) {
  char buffer[48];
  if (millis < 0) return "n/a";
  if (millis < 1000) {
    std::snprintf(buffer, sizeof(buffer), "%lld ms", static_cast<long long>(millis));
  } else if (millis < 60'000) {
    std::snprintf(buffer, sizeof(buffer), "%.1f s", static_cast<double>(millis) / 1000.0);
  } else if (millis < 3'600'000) {
    std::snprintf(buffer, sizeof(buffer), "%lldm %02llds", static_cast<long long>(millis / 60'000),
                  static_cast<long long>((millis / 1000) % 60));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%lldh %02lldm",
                  static_cast<long long>(millis / 3'600'000),
                  static_cast<long long>((millis / 60'000) % 60));
  }
  return buffer;
}

std::string HumanDurationNs(uint64_t nanos) {
  if (nanos >= 10'000'000) return HumanDurationMs(static_cast<int64_t>(nanos / 1'000'000));
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2f ms", static_cast<double>(nanos) / 1e6);
  return buffer;
}

std::string Percent(double ratio) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f%%", ratio * 100.0);
  return buffer;
}

std::string Fixed(double value, int decimals) {
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

std::string CoreHoursRange(double low, double high, const char* dash) {
  // Finite, not negative, and short enough to print whole (a trillion core-hours).
  auto clean = [](double v) { return std::isfinite(v) && v > 0 ? std::min(v, 1e12) : 0.0; };
  low = clean(low);
  high = std::max(clean(high), low);
  char buffer[96];
  if (high >= 0.1 || high == 0) {
    std::snprintf(buffer, sizeof(buffer), "%.2f%s%.2f core-hours", low, dash, high);
  } else if (high >= 1.0 / 60) {
    std::snprintf(buffer, sizeof(buffer), "%.1f%s%.1f core-minutes", low * 60, dash, high * 60);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.0f%s%.0f core-seconds", low * 3600, dash, high * 3600);
  }
  return buffer;
}

std::string FormatEpochMs(int64_t epoch_ms) {
  if (epoch_ms <= 0) return "unknown";
  std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  if (gmtime_r(&seconds, &tm) == nullptr) return "unknown";
  char buffer[64];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buffer;
}

}  // namespace sparkprof
