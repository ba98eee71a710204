// Spark's setting values read as numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkprof::model {

// Spark size string parsing: "8g", "512m", "2gb", "4096" (MiB when unitless, as
// spark.executor.memory). Anything else -- negative, zero, under 1 MiB, NaN, infinite, more
// than kMaxSizeMiB, an unknown unit -- gives `fallback`: a hostile log never reaches undefined
// behaviour, and sums like memory + memory / 2 in a recommendation cannot overflow.
inline constexpr int64_t kMaxSizeMiB = int64_t{1} << 30;  // 1 PiB: more than any machine
int64_t ParseSizeMiB(const std::string& text, int64_t fallback);

// A Spark size ("512m", "8g", "1t", "64k", "1048576b"; a bare number in `unit` bytes) in bytes;
// -1 when it is not one (or negative, or past 10^15 units).
int64_t ParseSizeBytes(const std::string& text, int64_t unit);
// A Spark duration ("60s", "500ms", "2min", "1h"; a bare number in `unit_ms`) in ms, at most
// kMaxDurationMs; -1 when it is not one.
inline constexpr int64_t kMaxDurationMs = 365ll * 24 * 3600 * 1000;  // a year
int64_t ParseDurationMs(const std::string& text, int64_t unit_ms);

// JVM options as Spark passes them (spark.executor.extraJavaOptions and its kin): the options
// separated by spaces or tabs, in order, none empty.
std::vector<std::string_view> SplitJavaOptions(std::string_view java_options);
// The value after `prefix` (e.g. "-XX:MaxDirectMemorySize=") of the last option that starts with
// it -- the JVM takes the last of a repeated option; nullopt when none does.
std::optional<std::string_view> LastJavaOptionValue(std::string_view java_options,
                                                    std::string_view prefix);

}  // namespace sparkprof::model
