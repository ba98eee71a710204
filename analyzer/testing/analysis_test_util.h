// Test helpers: analyse a synthetic log held in memory, or one shared event log by its facts label.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/diagnosis/finding.h"
#include "analyzer/report/analysis.h"
#include "common/input_stream.h"

namespace sparkprof::test_util {

using diagnosis::Evidence;
using diagnosis::Finding;
using diagnosis::Recommendation;

// `logs_path` (optional): the executors' and the driver's logs, as `analyze --logs`.
inline report::Analysis AnalyzeText(const std::string& log_text,
                                    const std::string& logs_path = "") {
  source::ApplicationLog log;
  log.name = "synthetic";
  log.layout = "single";
  source::LogPart part;
  part.display_name = "synthetic.json";
  part.open = [log_text]() -> Result<std::unique_ptr<InputStream>> {
    return MakeMemoryInputStream(log_text);
  };
  log.parts.push_back(part);
  return report::Analyze(log, {}, {}, "", logs_path);
}

inline const std::filesystem::path kEventLogs = SPARKPROF_SHARED_EVENTLOGS;

// A plain (or compressed) event log file, analysed; nullopt when absent.
inline std::optional<report::Analysis> AnalyzeFile(const std::filesystem::path& path,
                                                   const std::string& name) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  source::ApplicationLog log;
  log.name = name;
  log.layout = "single";
  source::LogPart part;
  part.display_name = path.string();
  std::string file = path.string();
  part.open = [file]() { return OpenFileInputStream(file); };
  log.parts.push_back(part);
  return report::Analyze(log);
}

// A plain file under the shared event logs (no archives); nullopt when absent.
inline std::optional<report::Analysis> AnalyzeShared(const std::string& label) {
  return AnalyzeFile(kEventLogs / label, label);
}

inline std::vector<const Finding*> FindingsOf(const report::Analysis& analysis,
                                              const std::string& rule) {
  std::vector<const Finding*> out;
  for (const Finding& f : analysis.findings) {
    if (f.rule == rule) out.push_back(&f);
  }
  return out;
}

inline double EvidenceValue(const Finding& f, const std::string& name) {
  for (const Evidence& e : f.evidence) {
    if (e.name == name) return e.value;
  }
  return -1;
}

inline bool RecommendsKey(const Finding& f, const std::string& key) {
  for (const Recommendation& r : f.recommendations) {
    if (r.config_key == key) return true;
  }
  return false;
}

// The value a finding recommends for `key`; "" when it recommends none.
inline std::string RecommendedValue(const Finding& f, const std::string& key) {
  for (const Recommendation& r : f.recommendations) {
    if (r.config_key == key) return r.value;
  }
  return "";
}

}  // namespace sparkprof::test_util
