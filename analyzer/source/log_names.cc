#include "analyzer/source/log_names.h"

#include <array>

namespace sparkprof::source {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Matches `text` against `pattern`, where '9' stands for any digit and every other character
// for itself.
bool MatchesDigitPattern(std::string_view text, std::string_view pattern) {
  if (text.size() != pattern.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (pattern[i] == '9' ? !IsDigit(text[i]) : text[i] != pattern[i]) return false;
  }
  return true;
}

std::string_view StripSuffix(std::string_view name, std::string_view suffix) {
  if (name.ends_with(suffix)) name.remove_suffix(suffix.size());
  return name;
}

}  // namespace

bool IsJunkName(std::string_view name) {
  return name.empty() || name.starts_with('.') || name == "__MACOSX" || name.ends_with(".crc");
}

bool IsSparkprofOutputsFolder(std::string_view folder_name) {
  return folder_name.size() > kSparkprofOutputsSuffix.size() &&
         folder_name.ends_with(kSparkprofOutputsSuffix);
}

bool HasInProgressSuffix(std::string_view name) { return name.ends_with(kInProgressSuffix); }

std::string_view StripCodecExtension(std::string_view name) {
  static constexpr std::array<std::string_view, 5> kCodecExtensions = {".lz4", ".snappy", ".zstd",
                                                                       ".lzf", ".gz"};
  for (std::string_view extension : kCodecExtensions) {
    if (name.size() > extension.size() && name.ends_with(extension)) {
      return name.substr(0, name.size() - extension.size());
    }
  }
  return name;
}

std::string_view StripArchiveAndCodecExtensions(std::string_view name) {
  constexpr std::string_view kZip = ".zip";
  for (int i = 0; i < 4; ++i) {
    std::string_view stripped = StripCodecExtension(name);
    if (stripped.size() == name.size() && name.size() > kZip.size() && name.ends_with(kZip)) {
      stripped = name.substr(0, name.size() - kZip.size());
    }
    if (stripped.size() == name.size()) break;
    name = stripped;
  }
  return name;
}

std::string CompressedArchiveName(std::string_view path, std::string_view codec_extension) {
  const size_t cut = path.find_last_of("/!");
  const std::string_view name = cut == std::string_view::npos ? path : path.substr(cut + 1);
  return std::string(StripCodecExtension(name)) + ".zip" + std::string(codec_extension);
}

std::optional<RollingEventFileName> ParseRollingEventFileName(std::string_view name) {
  constexpr std::string_view kPrefix = "events_";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  std::string_view rest = name.substr(kPrefix.size());
  size_t digits = 0;
  while (digits < rest.size() && IsDigit(rest[digits])) ++digits;
  // 18 digits keep the index inside uint64_t; Spark's indices are small positive ints anyway.
  if (digits == 0 || digits > 18 || digits + 1 >= rest.size() || rest[digits] != '_') {
    return std::nullopt;
  }
  RollingEventFileName parsed;
  for (size_t i = 0; i < digits; ++i) parsed.index = parsed.index * 10 + (rest[i] - '0');
  // Spark's codecName() strips ".compact" and then ".inprogress"; accept either order.
  std::string_view tail = StripSuffix(rest, kInProgressSuffix);
  parsed.compact = tail.ends_with(".compact");
  return parsed;
}

bool IsAppStatusName(std::string_view name) {
  constexpr std::string_view kPrefix = "appstatus_";
  return name.starts_with(kPrefix) && name.size() > kPrefix.size();
}

bool HasRollingDirectoryPrefix(std::string_view name) {
  return name.starts_with(kRollingDirectoryPrefix) && name.size() > kRollingDirectoryPrefix.size();
}

std::optional<DatabricksPartName> ParseDatabricksPartName(std::string_view name) {
  std::string_view stem = StripCodecExtension(name);
  if (stem == kDatabricksCurrentPart) return DatabricksPartName{.current = true, .time_key = {}};
  constexpr std::string_view kDatedPattern = "eventlog-9999-99-99--99-99";
  if (!MatchesDigitPattern(stem, kDatedPattern)) return std::nullopt;
  // The fixed-width, most-significant-first layout makes string order equal time order.
  return DatabricksPartName{
      .current = false, .time_key = std::string(stem.substr(kDatabricksCurrentPart.size() + 1))};
}

}  // namespace sparkprof::source
