// driver-bound: long stretches with no task running after executors exist: the driver plans,
// collects results, lists files, or runs plain Python/Scala code between jobs while every executor
// waits.
//
// Thresholds and sources (analyzer-facts.md):
//   * driver-only time >= 30% of wall time AND >= 60 s -> warning; >= 60% -> critical.
//     Sparklens reports driver time (app duration - job time) without a threshold; the Databricks
//     Spark UI guide treats gaps of over a minute between jobs as driver work: hence the 60 s
//     floor. Short runs: one gap of >= 20 s with driver-only time >= 50% of the wall (ours).
//   Interactive sessions (application name containing "shell": Spark shell, PySparkShell,
//   Databricks Shell) are reported as info: the gaps are mostly the user's think time.
//   The longest no-task gap is reported so the user can find it in the job timeline.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kWarningShare = 0.30;
constexpr double kCriticalShare = 0.60;
constexpr int64_t kMinDriverMs = 60'000;
constexpr int64_t kShortRunGapMs = 20'000;
constexpr double kShortRunShare = 0.50;
}  // namespace

void DriverBound(const DiagnosisInput& input, std::vector<Finding>& out) {
  const PhaseBreakdown& p = input.phases;
  const double share = p.Ratio(p.driver_only_ms);
  const model::ApplicationModel& m = *input.model;
  const NoTaskGap gap = LongestNoTaskGap(input);
  const int64_t longest_gap = gap.ms;
  const int64_t gap_start = gap.start_ms;
  // Short runs: one long driver-only stretch that is half the run.
  const bool short_run_gap = longest_gap >= kShortRunGapMs && share >= kShortRunShare;
  if ((p.driver_only_ms < kMinDriverMs || share < kWarningShare) && !short_run_gap) return;
  int64_t result_bytes = 0;
  for (const model::TaskAttempt& task : m.tasks) result_bytes += task.metrics.result_size_bytes;

  Finding f;
  f.rule = "driver-bound";
  f.category = Category::kAlgorithmic;
  f.confidence = {ConfidenceLevel::kMedium,
                  "inferred: wall time with no task running while executors were held; the log "
                  "does not say what the driver did then"};
  // Interactive shells idle between the user's commands: reported, but as info.
  std::string name = m.app_name;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool interactive = name.find("shell") != std::string::npos;
  f.severity = interactive               ? Severity::kInfo
               : share >= kCriticalShare ? Severity::kCritical
                                         : Severity::kWarning;
  f.recipe = "docs/recipes/troubleshoot/slow-spark-jobs.md";
  f.evidence = {
      {"driver_only_ms", static_cast<double>(p.driver_only_ms), "ms"},
      {"driver_only_share", share, "ratio"},
      {"longest_gap_ms", static_cast<double>(longest_gap), "ms"},
      {"longest_gap_start_offset_ms",
       static_cast<double>(gap_start >= 0 ? gap_start - m.start_time_ms : -1), "ms"},
      {"result_bytes_to_driver", static_cast<double>(result_bytes), "bytes"},
      {"peak_slots", static_cast<double>(p.peak_slots), "cores"},
  };
  f.title = "The driver worked alone for " + Millis(p.driver_only_ms) + " (" +
            Fixed(100 * share, 0) + "% of the run)";
  f.explanation = "For " + Millis(p.driver_only_ms) +
                  " no task ran although executors were there: "
                  "the driver was planning queries, listing files, collecting results or running "
                  "code outside Spark, while " +
                  std::to_string(p.peak_slots) +
                  " task slots waited. "
                  "The longest such gap was " +
                  Millis(longest_gap) + ", starting " +
                  Millis(std::max<int64_t>(gap_start - m.start_time_ms, 0)) +
                  " into the run. Tasks "
                  "sent " +
                  Bytes(result_bytes) + " of results to the driver in total." +
                  (interactive ? std::string(" This is an interactive shell session: gaps between "
                                             "the user's commands count here too.")
                               : std::string());
  f.recommendations.push_back({"",
                               "look at what the application does in the gap (driver log, job "
                               "descriptions): replace collect()/toPandas() loops and per-row "
                               "driver work with DataFrame operations; submit independent jobs "
                               "from several threads",
                               "the executors are idle for the whole driver-only time"});
  if (result_bytes >= (1ll << 30)) {
    f.recommendations.push_back({"", "write large results to storage instead of collecting them",
                                 Bytes(result_bytes) + " of task results went to the driver"});
  }
  f.impact.time_saved_ms_low = p.driver_only_ms / 4;
  f.impact.time_saved_ms_high = p.driver_only_ms * 3 / 4;
  f.impact.core_hours_saved_low = CoreHours(f.impact.time_saved_ms_low, p.peak_slots);
  f.impact.core_hours_saved_high = CoreHours(f.impact.time_saved_ms_high, p.peak_slots);
  f.impact.method =
      "25-75% of the driver-only time (some planning is unavoidable; the rest is code "
      "that can move to the executors or run concurrently); core-hours: all slots "
      "are held meanwhile unless executors are released";
  f.cost_ms = f.impact.time_saved_ms_high;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
