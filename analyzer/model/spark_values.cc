#include "analyzer/model/spark_values.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace sparkprof::model {

int64_t ParseSizeMiB(const std::string& text, int64_t fallback) {
  // strtod takes "nan", "inf", "1e999" and hex ("0x10"): a size is none of them.
  if (text.empty() || text.find_first_of("xX") != std::string::npos) return fallback;
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(number) || number <= 0) return fallback;
  std::string suffix(end);
  while (!suffix.empty() && std::isspace(static_cast<unsigned char>(suffix.back()))) {
    suffix.pop_back();
  }
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (suffix.size() == 2 && suffix[1] == 'b' && suffix[0] != 'b') suffix.pop_back();  // "gb"
  double scale = 0;  // MiB per unit
  if (suffix.empty() || suffix == "m")
    scale = 1;
  else if (suffix == "b")
    scale = 1.0 / (1 << 20);
  else if (suffix == "k")
    scale = 1.0 / 1024;
  else if (suffix == "g")
    scale = 1024;
  else if (suffix == "t")
    scale = 1024.0 * 1024;
  else if (suffix == "p")
    scale = 1024.0 * 1024 * 1024;
  else
    return fallback;  // "4gx", "lots"
  const double mib = number * scale;
  if (!(mib >= 1) || mib > static_cast<double>(kMaxSizeMiB)) return fallback;
  return static_cast<int64_t>(mib);
}

int64_t ParseSizeBytes(const std::string& text, int64_t unit) {
  if (text.empty()) return -1;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value >= 0) || value > 1e15) return -1;
  std::string suffix(end);
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (suffix.size() == 2 && suffix[1] == 'b' && suffix[0] != 'b') suffix.pop_back();  // "mb"
  double scale = static_cast<double>(unit);
  if (suffix == "b")
    scale = 1;
  else if (suffix == "k")
    scale = 1024.0;
  else if (suffix == "m")
    scale = 1024.0 * 1024;
  else if (suffix == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (suffix == "t")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!suffix.empty())
    return -1;
  const double bytes = value * scale;
  return bytes > 9e18 ? -1 : static_cast<int64_t>(bytes);
}

int64_t ParseDurationMs(const std::string& text, int64_t unit_ms) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value >= 0) || value > 1e12) return -1;
  const std::string suffix(end);
  double scale = static_cast<double>(unit_ms);
  if (suffix == "ms")
    scale = 1;
  else if (suffix == "s")
    scale = 1000;
  else if (suffix == "m" || suffix == "min")
    scale = 60'000;
  else if (suffix == "h")
    scale = 3'600'000;
  else if (!suffix.empty())
    return -1;
  return static_cast<int64_t>(std::min(value * scale, static_cast<double>(kMaxDurationMs)));
}

std::vector<std::string_view> SplitJavaOptions(std::string_view java_options) {
  std::vector<std::string_view> options;
  for (size_t at = 0; at < java_options.size();) {
    size_t end = java_options.find_first_of(" \t", at);
    if (end == std::string_view::npos) end = java_options.size();
    if (end > at) options.push_back(java_options.substr(at, end - at));
    at = end + 1;
  }
  return options;
}

std::optional<std::string_view> LastJavaOptionValue(std::string_view java_options,
                                                    std::string_view prefix) {
  std::optional<std::string_view> value;
  for (std::string_view option : SplitJavaOptions(java_options)) {
    if (option.starts_with(prefix)) value = option.substr(prefix.size());
  }
  return value;
}

}  // namespace sparkprof::model
