#include "analyzer/model/spark_values.h"

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
  if (suffix.empty() || suffix == "m") scale = 1;
  else if (suffix == "b") scale = 1.0 / (1 << 20);
  else if (suffix == "k") scale = 1.0 / 1024;
  else if (suffix == "g") scale = 1024;
  else if (suffix == "t") scale = 1024.0 * 1024;
  else if (suffix == "p") scale = 1024.0 * 1024 * 1024;
  else return fallback;  // "4gx", "lots"
  const double mib = number * scale;
  if (!(mib >= 1) || mib > static_cast<double>(kMaxSizeMiB)) return fallback;
  return static_cast<int64_t>(mib);
}

}  // namespace sparkprof::model
