// The spark.sparkprof.* keys that set the driver aggregator's limits, and the one place their
// defaults (AggregatorOptions' member initialisers), ranges and checks live. The plugin passes
// only the keys the user set (io.sparkprof.SparkProfConfig#driverSettings), with sizes already
// in bytes and durations in milliseconds (it reads Spark's units with Spark's own parser), as
// key, value, key, value...; docs/quickstart-spark.md's settings table states the same defaults
// (driver_settings_test checks it).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "driver-aggregator/driver_aggregator.h"

namespace sparkprof::driver {

// How a key's value is written: a count, a size in bytes or a duration in milliseconds.
enum class SettingUnit : uint8_t { kCount, kBytes, kMilliseconds };

struct DriverSetting {
  std::string_view key;  // "spark.sparkprof.maxBatchBytes"
  SettingUnit unit;
  // A value outside [min_accepted, max_accepted] is refused (the default is used and said);
  // one inside is then clamped to [min_used, max_used].
  int64_t min_accepted;
  int64_t max_accepted;
  int64_t min_used;
  int64_t max_used;
  int64_t (*get)(const AggregatorOptions& options);
  void (*set)(AggregatorOptions& options, int64_t value);
};

// Every key, in the order of the documentation.
std::span<const DriverSetting> DriverSettings();

struct AppliedSettings {
  AggregatorOptions options;
  // One sentence per refused value: "KEY=VALUE is not valid (allowed: ...), using DEFAULT".
  std::vector<std::string> problems;
};

// `options` with the settings applied; `key_values` alternates key and value. A value that is not
// a whole number in the key's range, an unknown key and a key without a value are problems, not
// errors: the value's default stays (a typo in a profiler key never stops a job).
AppliedSettings ApplyDriverSettings(AggregatorOptions options,
                                    std::span<const std::string> key_values);

// A value as the documentation writes it: counts as digits, sizes with the largest binary unit
// that divides them ("16m", "1g", "1000"), durations likewise ("1s", "250ms", "10m").
std::string FormatSettingValue(SettingUnit unit, int64_t value);

}  // namespace sparkprof::driver
