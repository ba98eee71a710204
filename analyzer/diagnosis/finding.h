// One diagnosis finding: what is slow, the numbers that show it, why, what to change, and what the
// change is expected to save. Rules (analyzer/diagnosis/rules/) produce these; the JSON, text and
// (later) Markdown/HTML reports print them. JSON keys: docs/report-schema.md, `findings[]`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sparkprof::diagnosis {

enum class Severity { kInfo, kWarning, kCritical };
const char* SeverityName(Severity severity);  // "info", "warning", "critical"

// What kind of change fixes it (the advisor framework's three families): settings of the cluster
// and the application; how the data is spread over partitions and keys; what the query or code
// does (joins, UDFs, caching, failing code).
enum class Category { kResourceConfiguration, kDataDistribution, kAlgorithmic };
// "resource-configuration", "data-distribution", "algorithmic"
const char* CategoryName(Category category);

// How sure the rule is that this is a problem worth fixing, and why (which evidence is direct,
// which is inferred, what the log could not show).
enum class ConfidenceLevel { kLow, kMedium, kHigh };
const char* ConfidenceLevelName(ConfidenceLevel level);  // "low", "medium", "high"
struct Confidence {
  ConfidenceLevel level = ConfidenceLevel::kMedium;
  std::string reason;
};

// One named number. unit: "ms", "bytes", "ratio", "count", "tasks", "cores", "percent".
struct Evidence {
  std::string name;
  double value = 0;
  std::string unit;
};

// A frame of the agent's profile that shows the problem: where the time went (the innermost
// frame outside the JDK for a category's time; the application's frame beneath it, if any).
struct FrameEvidence {
  int32_t stage_id = -1;
  std::string frame;
  std::string application_frame;  // "" when no frame of the user's code is on those samples
  std::string category;           // the task-time category ("serialization", "lock_wait", ...)
  double ms = 0;                  // sampled task time in that frame and category
  // lock-contention's monitor_holder frames: how many looks at a monitor's owner saw it there
  // (ms 0); -1 for every other frame.
  int64_t looks = -1;
};

// A configuration change (config_key set) or a code change (config_key empty, value holds the
// change, e.g. "salt the join key"). reason: why this value, with this run's numbers.
// What a memory setting would cost: the run priced as it was and with the setting (filled after
// the rules by report::CompleteAnalysis, cost::PriceSettings; docs/cost.md). Not priced: every
// other recommendation, and runs whose cost is unavailable.
struct SettingPrice {
  bool priced = false;
  double before = 0;
  double after = 0;
  std::string currency;
  std::string words;  // the change and how it was priced, in one sentence
};

struct Recommendation {
  Recommendation() = default;
  Recommendation(std::string config_key, std::string value, std::string reason)
      : config_key(std::move(config_key)), value(std::move(value)), reason(std::move(reason)) {}

  std::string config_key;
  std::string value;
  std::string reason;
  SettingPrice price;
};

// Ranges, because every estimate here rests on assumptions that `method` states.
struct ExpectedImpact {
  int64_t time_saved_ms_low = 0;
  int64_t time_saved_ms_high = 0;
  double core_hours_saved_low = 0;
  double core_hours_saved_high = 0;
  std::string method;
};

struct Finding {
  std::string rule;  // rule id, e.g. "data-skew"
  Severity severity = Severity::kInfo;
  Category category = Category::kResourceConfiguration;
  Confidence confidence;
  std::vector<int32_t> stage_ids;
  std::string title;
  std::vector<Evidence> evidence;
  std::vector<FrameEvidence> frames;  // profile rules only
  std::string explanation;
  std::vector<Recommendation> recommendations;
  ExpectedImpact impact;
  std::string recipe;   // docs path, e.g. "docs/recipes/troubleshoot/data-skew-diagnosis.md"
  int64_t cost_ms = 0;  // wall time this problem costs this run
  // The rule id of the root cause this finding is a consequence of, when that finding is in the
  // same report (Diagnose() links them and ranks the symptom right after its root); "" otherwise.
  std::string symptom_of;

  // What fixing it is expected to save: the middle of the impact range (the ranking key).
  int64_t expected_saving_ms() const {
    return impact.time_saved_ms_low + (impact.time_saved_ms_high - impact.time_saved_ms_low) / 2;
  }
};

}  // namespace sparkprof::diagnosis
