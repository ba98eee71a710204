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
//   Structured Streaming: while a query runs (QueryLifetimes, streaming_batches.h) the time with
//   no task is the query's own -- waits for its trigger and its batches' steps on the driver
//   (planning, offsets, the checkpoint, the sink's commit) -- which falling-behind,
//   batch-over-trigger, batch-overhead, slow-source and slow-commit judge with the batches'
//   figures. It is left out here (named as streaming_queries_driver_only_ms): the driver-only time,
//   its share and the gaps are what remains outside the queries.
//   Time when tasks were ready but no executor was alive (all lost, or refused at start-up:
//   PhaseBreakdown::waiting_without_slots_spans) is a wait for resources, not the driver's work,
//   and is left out the same way.
//   The longest no-task gap is reported so the user can find it in the job timeline.
//   With the driver's own samples (profile::DriverProfile: the driver JVM's agent, and the Python
//   driver program when its sampler runs), the finding says what the driver did in the gaps: its
//   threads' CPU there and the activities (thread and frame) that held most of it, named as frame
//   evidence: at most 3, each holding at least 10% of the threads' sampled time (smaller ones are
//   noise beside the cause). No threshold decides anything: the samples explain, the rule fires as
//   before. When the driver's threads were on CPU for under half of the sampled gap time, most of
//   the gap was spent waiting (I/O, sleep, a Python driver program the JVM waited for): said so,
//   since CPU samples cannot name a wait. When the application's own frames on CPU hold at least
//   half of the driver-only time, the expected impact is that code moved onto the executors' slots
//   (its time x (1 - 1/slots) high, half that low) instead of 25-75% of the driver-only time; a
//   wait (the Python driver's own time off CPU: a sleep, a call to another system) does not count:
//   spreading it over slots need not shorten it.
//   With the driver's threads' run delay polled (CpuUse.run_delay_steps, the driver's agent), the
//   finding says how long they waited for a CPU in the gaps, and recommends CPUs for the driver
//   when the longest-waiting thread's wait (the JVM's, or the Python driver program's main
//   thread's when its sampler ran) holds at least 10% of the driver-only time -- the share
//   below which a cause cannot shorten the gaps by more than their own variation, as for the
//   profile rules (profile_judgement.h). The saving stays the gaps' (a driver given CPUs still
//   runs the code); cpu-oversubscription claims what other processes' CPUs cost.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "analyzer/diagnosis/rules/expected_impact.h"
#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/diagnosis/streaming_batches.h"
#include "analyzer/profile/cpu_use.h"
#include "analyzer/profile/driver_profile.h"
#include "analyzer/profile/spans.h"

namespace sparkprof::diagnosis::rules {

namespace {
constexpr double kWarningShare = 0.30;
constexpr size_t kDriverFrames = 3;
constexpr double kDriverFrameShare = 0.10;
constexpr double kMostlyWaitingShare = 0.5;
constexpr double kDriverWaitShare = 0.10;

int64_t NsToMs(uint64_t ns) { return static_cast<int64_t>(ns / 1'000'000); }

// What the driver's samples say of the no-task gaps: evidence, frames and one paragraph (empty
// without driver samples over the gaps).
std::string ExplainDriverSamples(const DiagnosisInput& input, const profile::SpansMs& gaps,
                                 Finding& f, uint64_t& application_ns) {
  application_ns = 0;
  if (input.profile == nullptr || input.profile->driver.empty()) return "";
  const profile::DriverProfile& driver = input.profile->driver;
  int64_t gap_ms = 0;
  for (const auto& [from, to] : gaps) gap_ms += to - from;
  const profile::DriverTime time = driver.Within(gaps);
  if (time.covered_ms <= 0) return "";
  const uint64_t on_cpu_ns = time.threads_ns - std::min(time.off_cpu_ns, time.threads_ns);
  for (const profile::DriverActivityTime& entry : time.activities) {
    const profile::DriverActivity& activity = driver.activities[entry.activity];
    if (activity.application && !activity.off_cpu) application_ns += entry.ns;
  }
  const double cpu_share =
      static_cast<double>(NsToMs(on_cpu_ns)) / static_cast<double>(time.covered_ms);
  f.evidence.push_back({"driver_sampled_gap_ms", static_cast<double>(time.covered_ms), "ms"});
  f.evidence.push_back({"driver_threads_cpu_ms", static_cast<double>(NsToMs(on_cpu_ns)), "ms"});
  f.evidence.push_back({"driver_jvm_threads_ms", static_cast<double>(NsToMs(time.jvm_ns)), "ms"});
  std::string text =
      " The driver was sampled over " + HumanDurationMs(time.covered_ms) + " of the " +
      HumanDurationMs(gap_ms) + " with no task running: its threads were on CPU for " +
      HumanDurationMs(NsToMs(on_cpu_ns)) + " (" + Fixed(100 * std::min(cpu_share, 9.99), 0) +
      "% of that time" +
      (time.jvm_ns >= 1'000'000
           ? "; the JVM's own GC and compiler threads " + HumanDurationMs(NsToMs(time.jvm_ns))
           : std::string()) +
      ")";
  std::string listed;
  for (size_t i = 0; i < time.activities.size() && i < kDriverFrames; ++i) {
    const profile::DriverActivityTime& entry = time.activities[i];
    const profile::DriverActivity& activity = driver.activities[entry.activity];
    if (entry.ns < 1'000'000 ||
        static_cast<double>(entry.ns) < kDriverFrameShare * static_cast<double>(time.threads_ns)) {
      break;
    }
    FrameEvidence frame;
    frame.stage_id = -1;
    frame.frame = activity.frame;
    frame.application_frame = activity.application ? activity.frame : std::string();
    frame.category = !activity.python   ? "driver_cpu"
                     : activity.off_cpu ? "python_driver_off_cpu"
                                        : "python_driver";
    frame.ms = static_cast<double>(entry.ns) / 1e6;
    f.frames.push_back(frame);
    listed += std::string(listed.empty() ? "" : "; ") + HumanDurationMs(NsToMs(entry.ns)) +
              (activity.off_cpu ? " off CPU in " : " in ") + activity.frame +
              (activity.thread.empty() ? "" : " (thread " + activity.thread + ")");
  }
  if (!listed.empty()) text += ", most of it: " + listed;
  text += ".";
  if (cpu_share < kMostlyWaitingShare) {
    text += time.python
                ? " For the rest of the sampled gap the driver's threads were not on CPU: they "
                  "waited (file listing and other I/O, sleeps, results)."
                : " For the rest of the sampled gap the driver JVM's threads were not on CPU: "
                  "they waited (file listing and other I/O, sleeps, results, or a Python driver "
                  "program, whose own time the JVM's samples do not show; "
                  "spark.pyspark.driver.python=sparkprof-python samples it).";
  }
  if (!f.frames.empty() && !f.frames.front().application_frame.empty()) {
    f.recommendations.insert(
        f.recommendations.begin(),
        {"",
         "look at " + f.frames.front().frame +
             ": it ran on the driver while the executors "
             "waited; move its work into DataFrame/RDD operations on the executors, or run it "
             "concurrently with the jobs",
         HumanDurationMs(NsToMs(static_cast<uint64_t>(f.frames.front().ms * 1e6))) +
             " of the driver's CPU in the gaps with no task was in it (sampled)"});
  }
  f.confidence = {ConfidenceLevel::kHigh, "sampled: the driver's own CPU samples over " +
                                              HumanDurationMs(time.covered_ms) +
                                              " of the gaps with no task running show what it did"};
  return text;
}
constexpr double kCriticalShare = 0.60;
constexpr int64_t kMinDriverMs = 60'000;
constexpr int64_t kShortRunGapMs = 20'000;
constexpr double kShortRunShare = 0.50;
}  // namespace

namespace {

// The driver's threads' wait for CPUs in the gaps (header): said, with a recommendation, when the
// longest-waiting thread's holds kDriverWaitShare of the driver-only time.
void ExplainDriversWaitForCpus(const DiagnosisInput& input, const profile::SpansMs& alone,
                               int64_t driver_only_ms, Finding& f) {
  const profile::DriverRunDelay driver =
      DriversWaitWhileNoTaskRan(input, alone, driver_only_ms, f, false);
  if (driver.covered_s <= 0) return;
  // The Python driver program's main thread is one more thread that waited.
  const double longest = std::max(driver.busiest_ns, driver.python_ns);
  if (longest < kDriverWaitShare * static_cast<double>(driver_only_ms) * 1e6) return;
  f.explanation += " The driver was short of CPUs too: in the gaps its threads waited " +
                   HumanDurationNs(std::llround(driver.total_ns)) +
                   " for one together (the longest-waiting thread of each moment " +
                   HumanDurationNs(std::llround(driver.busiest_ns)) + ", the kernel's run delay)" +
                   (driver.python_ns >= 1e6 ? ", the Python driver program's main thread " +
                                                  HumanDurationNs(std::llround(driver.python_ns))
                                            : std::string()) +
                   ", while other processes on its host used " + Fixed(driver.others_cpus, 2) +
                   " CPUs.";
  f.recommendations.push_back(
      {"",
       "give the driver the CPUs it waits for: spark.driver.cores (cluster mode), or a host or "
       "container where other processes do not take them",
       "the driver's threads were ready to run but had no CPU for " +
           HumanDurationNs(std::llround(longest)) + " of the " + HumanDurationMs(driver_only_ms) +
           " it worked alone"});
}

}  // namespace

void DriverBound(const DiagnosisInput& input, std::vector<Finding>& out) {
  const PhaseBreakdown& p = input.phases;
  const model::ApplicationModel& m = *input.model;
  // While a streaming query runs, the time with no task is its own (header): left out.
  const profile::SpansMs queries = QueryLifetimes(m.streaming, m.end_time_ms);
  profile::SpansMs alone =
      queries.empty() ? p.driver_only_spans : profile::SubtractSpans(p.driver_only_spans, queries);
  profile::SpansMs gaps =
      queries.empty() ? p.no_task_spans : profile::SubtractSpans(p.no_task_spans, queries);
  int64_t driver_only_ms = p.driver_only_ms;
  if (!queries.empty()) {
    driver_only_ms = 0;
    for (const auto& [from, to] : alone) driver_only_ms += to - from;
  }
  const int64_t left_to_queries = p.driver_only_ms - driver_only_ms;
  // Ready tasks with no executor alive (lost, or refused at start-up): the application waited
  // for resources; no executor waited for the driver (header).
  if (!p.waiting_without_slots_spans.empty()) {
    alone = profile::SubtractSpans(alone, p.waiting_without_slots_spans);
    gaps = profile::SubtractSpans(gaps, p.waiting_without_slots_spans);
    driver_only_ms = 0;
    for (const auto& [from, to] : alone) driver_only_ms += to - from;
  }
  const double share = p.Ratio(driver_only_ms);
  int64_t longest_gap = 0, gap_start = -1;
  for (const auto& [from, to] : gaps) {
    if (to - from > longest_gap) {  // the first of equal ones
      longest_gap = to - from;
      gap_start = from;
    }
  }
  // Short runs: one long driver-only stretch that is half the run.
  const bool short_run_gap = longest_gap >= kShortRunGapMs && share >= kShortRunShare;
  if ((driver_only_ms < kMinDriverMs || share < kWarningShare) && !short_run_gap) return;
  int64_t result_bytes = 0;
  for (const model::TaskAttempt& task : m.tasks) result_bytes += task.metrics.result_size_bytes;

  Finding f = NewFinding("driver-bound");
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
  f.evidence = {
      {"driver_only_ms", static_cast<double>(driver_only_ms), "ms"},
      {"driver_only_share", share, "ratio"},
      {"longest_gap_ms", static_cast<double>(longest_gap), "ms"},
      {"longest_gap_start_offset_ms",
       static_cast<double>(gap_start >= 0 ? gap_start - m.start_time_ms : -1), "ms"},
      {"result_bytes_to_driver", static_cast<double>(result_bytes), "bytes"},
      {"peak_slots", static_cast<double>(p.peak_slots), "cores"},
  };
  if (left_to_queries > 0) {
    f.evidence.push_back(
        {"streaming_queries_driver_only_ms", static_cast<double>(left_to_queries), "ms"});
  }
  f.title = "The driver worked alone for " + HumanDurationMs(driver_only_ms) + " (" +
            Fixed(100 * share, 0) + "% of the run)";
  f.explanation = "For " + HumanDurationMs(driver_only_ms) +
                  " no task ran although executors were there: "
                  "the driver was planning queries, listing files, collecting results or running "
                  "code outside Spark, while " +
                  std::to_string(p.peak_slots) +
                  " task slots waited. "
                  "The longest such gap was " +
                  HumanDurationMs(longest_gap) + ", starting " +
                  HumanDurationMs(std::max<int64_t>(gap_start - m.start_time_ms, 0)) +
                  " into the run. Tasks "
                  "sent " +
                  HumanBytes(result_bytes) + " of results to the driver in total." +
                  (interactive ? std::string(" This is an interactive shell session: gaps between "
                                             "the user's commands count here too.")
                               : std::string());
  if (left_to_queries > 0) {
    f.explanation += " Another " + HumanDurationMs(left_to_queries) +
                     " with no task running passed while streaming queries ran: their trigger "
                     "waits and their batches' steps on the driver, which the streaming findings "
                     "judge.";
  }
  uint64_t application_ns = 0;
  f.explanation += ExplainDriverSamples(input, gaps, f, application_ns);
  ExplainDriversWaitForCpus(input, alone, driver_only_ms, f);
  f.recommendations.push_back({"",
                               "look at what the application does in the gap (driver log, job "
                               "descriptions): replace collect()/toPandas() loops and per-row "
                               "driver work with DataFrame operations; submit independent jobs "
                               "from several threads",
                               "the executors are idle for the whole driver-only time"});
  if (result_bytes >= (1ll << 30)) {
    f.recommendations.push_back({"", "write large results to storage instead of collecting them",
                                 HumanBytes(result_bytes) + " of task results went to the driver"});
  }
  // Sampled: the application's own code on the driver is the work that can move. Spread over
  // the executors' slots it takes about 1/slots of its time, so moving it saves its time
  // x (1 - 1/slots) at best (high) and half that (low: the rows must reach the executors, and
  // not every loop splits evenly). Used when that code holds at least half of the driver-only
  // time -- then it is what the finding is about; otherwise the estimate below stands.
  const int64_t application_ms = NsToMs(application_ns);
  const int64_t slots = std::max<int64_t>(p.peak_slots, 1);
  if (application_ms > 0 && 2 * application_ms >= driver_only_ms) {
    const int64_t saved_ms = std::min(application_ms - application_ms / slots, driver_only_ms);
    f.impact = WallTimeSaving(
        saved_ms / 2, saved_ms, p.peak_slots,
        "the application's own code sampled on the driver in the gaps (" +
            HumanDurationMs(application_ms) + ") moved onto the executors' " +
            std::to_string(slots) + " task slots, where it takes about 1/" + std::to_string(slots) +
            " of its time: its time x (1 - 1/" + std::to_string(slots) +
            ") at best, half that at worst (the rows must reach the executors); core-hours: all "
            "slots are held meanwhile unless executors are released");
    AddCostingItsSaving(std::move(f), out);
    return;
  }
  f.impact = WallTimeSaving(driver_only_ms / 4, driver_only_ms * 3 / 4, p.peak_slots,
                            "25-75% of the driver-only time (some planning is unavoidable; the "
                            "rest is code that can move to the executors or run concurrently); "
                            "core-hours: all slots are held meanwhile unless executors are "
                            "released");
  AddCostingItsSaving(std::move(f), out);
}

}  // namespace sparkprof::diagnosis::rules
