#include "analyzer/diagnosis/diagnose.h"

#include <algorithm>
#include <utility>

#include "analyzer/diagnosis/diagnosis_input.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/severity.h"

namespace sparkprof::diagnosis {

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "info";
}

const char* CategoryName(Category category) {
  switch (category) {
    case Category::kResourceConfiguration:
      return "resource-configuration";
    case Category::kDataDistribution:
      return "data-distribution";
    case Category::kAlgorithmic:
      return "algorithmic";
  }
  return "resource-configuration";
}

const char* ConfidenceLevelName(ConfidenceLevel level) {
  switch (level) {
    case ConfidenceLevel::kLow:
      return "low";
    case ConfidenceLevel::kMedium:
      return "medium";
    case ConfidenceLevel::kHigh:
      return "high";
  }
  return "medium";
}

namespace {

// (symptom rule, root rule, whether they must share a stage). A symptom names its root only when
// the root was found in the same run (and, for stage findings, on one of the same stages).
struct SymptomLink {
  const char* symptom;
  const char* root;
  bool same_stage;
};
constexpr SymptomLink kSymptomLinks[] = {
    {"spill", "data-skew", true},
    {"spill", "too-few-partitions", true},
    {"gc-pressure", "data-skew", true},
    {"gc-pressure", "too-few-partitions", true},
    {"task-failures", "job-failures", false},
    {"task-failures", "data-skew", true},
    {"executor-loss", "job-failures", false},
    {"fetch-failures", "executor-loss", false},
    {"fetch-failures", "job-failures", false},
    {"scheduler-overhead", "too-many-small-tasks", false},
    {"idle-executors", "driver-bound", false},
    {"shuffle-bottleneck", "broadcast-join-missed", true},
    {"spill", "broadcast-join-missed", true},
    {"io-write-bound", "small-files", true},
    {"too-many-small-tasks", "small-files", true},
    {"spill", "exploding-join", true},
    {"data-skew", "exploding-join", true},
};

bool ShareStage(const Finding& a, const Finding& b) {
  for (int32_t id : a.stage_ids) {
    if (std::find(b.stage_ids.begin(), b.stage_ids.end(), id) != b.stage_ids.end()) return true;
  }
  return false;
}

}  // namespace

void RankFindings(std::vector<Finding>& findings) {
  // Link each finding to the first root present for it (in kSymptomLinks order). The table has no
  // cycles, so following the links ends at a root.
  std::vector<size_t> root_index(findings.size());
  for (size_t i = 0; i < findings.size(); ++i) {
    root_index[i] = i;
    Finding& symptom = findings[i];
    for (const SymptomLink& link : kSymptomLinks) {
      if (symptom.rule != link.symptom) continue;
      auto root = std::find_if(findings.begin(), findings.end(), [&](const Finding& r) {
        return r.rule == link.root && (!link.same_stage || ShareStage(symptom, r));
      });
      if (root != findings.end()) {
        symptom.symptom_of = link.root;
        root_index[i] = static_cast<size_t>(root - findings.begin());
        break;
      }
    }
  }
  auto root_of = [&](size_t i) {
    for (int depth = 0; depth < 8 && root_index[i] != i; ++depth) i = root_index[i];
    return i;
  };
  struct Key {
    bool failure;
    int64_t group_saving;
    int64_t group_cost;
    int depth;  // 0 = root
    int64_t saving;
    int64_t cost;
    int severity;
  };
  std::vector<std::pair<Key, size_t>> keys;
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    const Finding* root = &findings[root_of(i)];
    keys.push_back(
        {{root->rule == "job-failures", root->expected_saving_ms(), root->cost_ms,
          root == &f ? 0 : 1, f.expected_saving_ms(), f.cost_ms, static_cast<int>(f.severity)},
         i});
  }
  std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
    const Key& x = a.first;
    const Key& y = b.first;
    if (x.failure != y.failure) return x.failure;
    if (x.group_saving != y.group_saving) return x.group_saving > y.group_saving;
    if (x.group_cost != y.group_cost) return x.group_cost > y.group_cost;
    if (x.depth != y.depth) return x.depth < y.depth;
    if (x.saving != y.saving) return x.saving > y.saving;
    if (x.cost != y.cost) return x.cost > y.cost;
    return x.severity > y.severity;
  });
  std::vector<Finding> ordered;
  ordered.reserve(findings.size());
  for (const auto& [key, index] : keys) ordered.push_back(std::move(findings[index]));
  findings = std::move(ordered);
}

Diagnosis Diagnose(const model::ApplicationModel& model, const whatif::LazySimulator* simulator,
                   const profile::ApplicationProfile* profile,
                   const executor_logs::ExecutorLogs* logs) {
  DiagnosisInput input;
  MakeDiagnosisInput(model, input, simulator, profile, logs);
  Diagnosis result;
  for (const rules::Rule& rule : rules::AllRules()) {
    if (rule.evaluate != nullptr) rule.evaluate(input, result.findings);
  }
  CapSeverityBySaving(input, result.findings);
  RankFindings(result.findings);
  result.phases = input.phases;
  result.task_decompositions = std::move(input.task_decompositions);
  return result;
}

}  // namespace sparkprof::diagnosis
