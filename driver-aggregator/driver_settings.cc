#include "driver-aggregator/driver_settings.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>

namespace sparkprof::driver {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kTiB = int64_t{1} << 40;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Ranges as the plugin has always read these keys (docs/quickstart-spark.md).
constexpr DriverSetting kSettings[] = {
    {"spark.sparkprof.maxBatchBytes", SettingUnit::kBytes, 1, kTiB, 1024, kGiB,
     [](const AggregatorOptions& o) { return static_cast<int64_t>(o.max_batch_bytes); },
     [](AggregatorOptions& o, int64_t v) { o.max_batch_bytes = static_cast<size_t>(v); }},
    {"spark.sparkprof.maxBatchesPerSecond", SettingUnit::kCount, 1, 1'000'000, 1, 1'000'000,
     [](const AggregatorOptions& o) { return static_cast<int64_t>(o.max_batches_per_second); },
     [](AggregatorOptions& o, int64_t v) { o.max_batches_per_second = static_cast<uint32_t>(v); }},
    {"spark.sparkprof.maxNodesPerStage", SettingUnit::kCount, 100, 100'000'000, 100, 100'000'000,
     [](const AggregatorOptions& o) { return static_cast<int64_t>(o.max_nodes_per_stage); },
     [](AggregatorOptions& o, int64_t v) { o.max_nodes_per_stage = static_cast<size_t>(v); }},
    {"spark.sparkprof.maxStages", SettingUnit::kCount, 1, 1'000'000, 1, 1'000'000,
     [](const AggregatorOptions& o) { return static_cast<int64_t>(o.max_stages); },
     [](AggregatorOptions& o, int64_t v) { o.max_stages = static_cast<size_t>(v); }},
    {"spark.sparkprof.maxTotalNodes", SettingUnit::kCount, 1'000, 1'000'000'000, 1'000,
     1'000'000'000,
     [](const AggregatorOptions& o) { return static_cast<int64_t>(o.max_total_nodes); },
     [](AggregatorOptions& o, int64_t v) { o.max_total_nodes = static_cast<size_t>(v); }},
    {"spark.sparkprof.ingestQueue.maxBatches", SettingUnit::kCount, 1, 65'534, 1, 65'534,
     [](const AggregatorOptions& o) { return static_cast<int64_t>(o.ingest_queue.max_batches); },
     [](AggregatorOptions& o, int64_t v) { o.ingest_queue.max_batches = static_cast<size_t>(v); }},
    {"spark.sparkprof.ingestQueue.maxBytes", SettingUnit::kBytes, 1, kTiB, kMiB, kTiB,
     [](const AggregatorOptions& o) { return static_cast<int64_t>(o.ingest_queue.max_bytes); },
     [](AggregatorOptions& o, int64_t v) { o.ingest_queue.max_bytes = static_cast<uint64_t>(v); }},
    {"spark.sparkprof.maxProfileFileBytes", SettingUnit::kBytes, 0, kTiB, 0, kTiB,
     [](const AggregatorOptions& o) { return static_cast<int64_t>(o.max_profile_file_bytes); },
     [](AggregatorOptions& o, int64_t v) { o.max_profile_file_bytes = static_cast<uint64_t>(v); }},
    {"spark.sparkprof.metricsRefreshInterval", SettingUnit::kMilliseconds, 0, kMax, 1, 600'000,
     [](const AggregatorOptions& o) { return o.live_refresh_interval_ms; },
     [](AggregatorOptions& o, int64_t v) { o.live_refresh_interval_ms = v; }},
};

const DriverSetting* FindSetting(std::string_view key) {
  for (const DriverSetting& setting : kSettings) {
    if (setting.key == key) return &setting;
  }
  return nullptr;
}

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool ParseWholeNumber(std::string_view text, int64_t& value) {
  text = Trimmed(text);
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

std::string Allowed(const DriverSetting& setting) {
  std::string allowed = FormatSettingValue(setting.unit, setting.min_accepted);
  if (setting.max_accepted == kMax) return allowed + " or more";
  return allowed + " to " + FormatSettingValue(setting.unit, setting.max_accepted);
}

}  // namespace

std::span<const DriverSetting> DriverSettings() { return kSettings; }

std::string FormatSettingValue(SettingUnit unit, int64_t value) {
  struct Suffix {
    int64_t factor;
    const char* name;
  };
  static constexpr Suffix kByteSuffixes[] = {{kTiB, "t"}, {kGiB, "g"}, {kMiB, "m"}, {1024, "k"}};
  static constexpr Suffix kTimeSuffixes[] = {{3'600'000, "h"}, {60'000, "min"}, {1'000, "s"}};
  if (unit == SettingUnit::kCount || value == 0) return std::to_string(value);
  const std::span<const Suffix> suffixes =
      unit == SettingUnit::kBytes ? std::span<const Suffix>(kByteSuffixes) : kTimeSuffixes;
  for (const Suffix& suffix : suffixes) {
    if (value % suffix.factor == 0) return std::to_string(value / suffix.factor) + suffix.name;
  }
  return std::to_string(value) + (unit == SettingUnit::kMilliseconds ? "ms" : "");
}

AppliedSettings ApplyDriverSettings(AggregatorOptions options,
                                    std::span<const std::string> key_values) {
  AppliedSettings applied{std::move(options), {}};
  for (size_t i = 0; i < key_values.size(); i += 2) {
    const std::string& key = key_values[i];
    const DriverSetting* setting = FindSetting(key);
    if (setting == nullptr) {
      applied.problems.push_back(key + " is not a driver aggregator setting; ignored");
      continue;
    }
    if (i + 1 == key_values.size()) {
      applied.problems.push_back(key + " has no value; ignored");
      continue;
    }
    const std::string& text = key_values[i + 1];
    int64_t value = 0;
    if (!ParseWholeNumber(text, value) || value < setting->min_accepted ||
        value > setting->max_accepted) {
      applied.problems.push_back(key + "=" + text + " is not valid (" + Allowed(*setting) +
                                 "), using " +
                                 FormatSettingValue(setting->unit, setting->get(applied.options)));
      continue;
    }
    setting->set(applied.options, std::clamp(value, setting->min_used, setting->max_used));
  }
  return applied;
}

}  // namespace sparkprof::driver
