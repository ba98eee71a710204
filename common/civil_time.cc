#include "common/civil_time.h"

#include <algorithm>
#include <cctype>

namespace sparkprof {

namespace {

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

// Digits at `at`..`at+count` as a number, -1 when any is not a digit.
int DecimalDigits(std::string_view text, size_t at, size_t count) {
  if (at + count > text.size()) return -1;
  int value = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

int64_t CivilEpochMs(int year, int month, int day, int hour, int minute, int second, int ms) {
  if (year < 1970 || year > 9999 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 ||
      minute > 59 || second > 60 || hour < 0 || minute < 0 || second < 0) {
    return -1;
  }
  const int64_t days =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return ((days * 24 + hour) * 60 + minute) * 60000 + int64_t{second} * 1000 + std::max(ms, 0);
}

// Milliseconds of a fraction at `at` (".123", ",5"), 0 when none; `end` moves past it.
int FractionMs(std::string_view text, size_t at, size_t& end) {
  end = at;
  if (at >= text.size() || (text[at] != '.' && text[at] != ',')) return 0;
  int ms = 0, digits = 0;
  for (end = at + 1; end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]));
       ++end) {
    if (digits < 3) ms = ms * 10 + (text[end] - '0'), ++digits;
  }
  while (digits > 0 && digits < 3) ms *= 10, ++digits;
  return ms;
}

int64_t ParseIsoTime(std::string_view text) {
  const int year = DecimalDigits(text, 0, 4), month = DecimalDigits(text, 5, 2),
            day = DecimalDigits(text, 8, 2);
  if (year < 0 || text.size() < 19 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != ' ')) {
    return -1;
  }
  const int hour = DecimalDigits(text, 11, 2), minute = DecimalDigits(text, 14, 2),
            second = DecimalDigits(text, 17, 2);
  if (text[13] != ':' || text[16] != ':') return -1;
  size_t end = 19;
  const int ms = FractionMs(text, 19, end);
  int64_t epoch = CivilEpochMs(year, month, day, hour, minute, second, ms);
  if (epoch < 0) return -1;
  if (end < text.size() && (text[end] == '+' || text[end] == '-')) {
    const int zone_hours = DecimalDigits(text, end + 1, 2);
    const int zone_minutes =
        end + 3 < text.size() && text[end + 3] == ':' ? DecimalDigits(text, end + 4, 2) : 0;
    if (zone_hours >= 0 && zone_minutes >= 0) {
      const int64_t offset = (int64_t{zone_hours} * 60 + zone_minutes) * 60000;
      epoch += text[end] == '+' ? -offset : offset;
    }
  }
  return epoch;
}

}  // namespace sparkprof
