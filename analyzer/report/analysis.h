// One application analysed end to end: read its log parts into a model, summarise and diagnose it.
// Both report renderers and the diagnosis rules take an Analysis.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/cost/cost.h"
#include "analyzer/diagnosis/finding.h"
#include "analyzer/diagnosis/phase_breakdown.h"
#include "analyzer/diagnosis/task_decomposition.h"
#include "analyzer/eventlog/event_log_reader.h"
#include "analyzer/model/application_model.h"
#include "analyzer/profile/stage_profiles.h"
#include "analyzer/report/summary.h"
#include "analyzer/source/log_source.h"

namespace sparkprof::executor_logs {
struct ExecutorLogs;  // analyzer/executor_logs/executor_logs.h
}  // namespace sparkprof::executor_logs

namespace sparkprof::report {

inline constexpr const char* kReportSchema = "sparkprof.report/v1";
// Additions within v1 (docs/report-schema.md, "Versioning"): 1 = jobs[], per-SQL-execution totals,
// counts.resubmitted_tasks, findings' category and confidence; 2 = cost, and
// counts.photon_peak_memory_tasks; 3 = stages[].job_id; 4 = driver (the plugin's reports);
// 5 = profile, stages[].profile, findings[].frames (the agent's samples); 6 = the Python
// workers' profile (profile top_python, python_worker_off_cpu_ms); 7 = phases.slot_starved_wall_ms
// and phases.peak_queued_tasks (the backlog after the first slot); 8 = stages[].profile.tasks
// (the slowest and the median task's sampled time) and profile.task_rows_left_out; 9 =
// input.not_read (what the source held around the log and was not read, with why) and
// stages[].profile.sites[].inlined_callees_unknown and counts.photon_shuffle_write_tasks; 10 =
// totals.photon_peak_memory_largest_operator_bytes_max, the several-application document's
// not_analysed and not_analysed_left_out, zips compressed as logs in input.not_read,
// profile.driver and driver-bound's frames of the driver (stage_id -1); 11 =
// executors.list[].memory and executors.driver_memory (the agents' memory readings); 12 = the
// monitors task threads waited to enter (stages[].profile.monitors and monitor_*,
// profile.monitor_*), and on lock-contention frames[].looks and the monitor evidence. 14 = logs
// (what the executors' and the driver's own logs said, `analyze --logs`) and the kill causes'
// evidence log_line and log_line_repeats. 15-17 and each minor's keys: docs/report-schema.md.
inline constexpr int64_t kReportSchemaMinor = 17;

struct TaskTimeline;  // html_report.h

struct Analysis {
  std::string log_name;  // ApplicationLog::name
  std::string layout;    // single, rolling, databricks, zip
  bool in_progress_by_name = false;
  // What the source held around this log and was not read, with why (source::ApplicationLog's
  // warnings): input.not_read in the JSON report.
  std::vector<source::DiscoveryWarning> not_read;
  uint64_t not_read_left_out = 0;
  eventlog::ReadReport read;
  model::ApplicationModel model;
  ApplicationSummary summary;
  diagnosis::PhaseBreakdown phases;
  std::vector<diagnosis::Finding> findings;  // ordered by cost_ms, most first
  cost::RunCost cost;
  // Reports the Spark plugin's driver writes: its live feed's batches by outcome, as counted in
  // sparkprof_driver_batches_total ("accepted", ..., "queue_full"); empty for `analyze`.
  std::vector<std::pair<std::string, uint64_t>> driver_batches;
  // The agent's samples of this application (`analyze --profile`, or the driver's own
  // profile.sparkprof); null without one. Set before CompleteAnalysis: the rules read it.
  std::shared_ptr<const profile::ApplicationProfile> profile;
  // Why no profile was read although one was asked for ("" otherwise): reports say it.
  std::string profile_error;
  // What the executors' and the driver's own logs said (`analyze --logs`); null without them.
  // Set before CompleteAnalysis: the kill causes read it.
  std::shared_ptr<const executor_logs::ExecutorLogs> logs;
  // Why no logs were read although they were asked for ("" otherwise): reports say it.
  std::string logs_error;
  // With a profile: per stage attempt, its slowest and median tasks with their sampled time
  // (drawn from the task records by CompleteAnalysis, so it outlives ReleaseTaskRecords).
  std::vector<diagnosis::StageTaskDecomposition> task_decompositions;
  // The HTML timeline's view of the task records, kept when they are freed (KeepTaskTimeline);
  // null: the HTML report reads the model's records.
  std::shared_ptr<const TaskTimeline> task_timeline;
};

// The applications of the input that gave no report (no Spark event in their files, out of
// memory), each with where it is and why, in the input's order: the several-application report
// lists them after the applications (JSON `not_analysed`), at most kMax like input.not_read,
// the rest counted.
struct NotAnalysedList {
  static constexpr size_t kMax = source::ApplicationLog::kMaxWarningsPerLog;
  std::vector<source::DiscoveryWarning> entries;  // path: the log's one file or its parts' folder
  uint64_t left_out = 0;

  // `why` for `log`, named by its file (a single-file log) or the folder holding its parts.
  void Add(const source::ApplicationLog& log, std::string why);
  bool empty() const { return entries.empty() && left_out == 0; }
};

// Why reading `read` gave nothing to analyse: its files' problems ("x.gz: a zip archive ..."),
// or that it was empty, or that none of its lines was a Spark event.
std::string NothingAnalysableWhy(const eventlog::ReadReport& read);

// `profile_path` (optional): a saved profile (*.sparkprof), or a directory holding the driver's
// per-application folders (profile::FindProfileFor); the application's profile is read into
// Analysis::profile before the diagnosis, or why it could not be into profile_error.
// `logs_path` (optional): the executors' and the driver's logs (executor_logs.h), read for this
// application into Analysis::logs before the diagnosis, or why not into logs_error.
Analysis Analyze(const source::ApplicationLog& log, const eventlog::ReaderOptions& options = {},
                 const cost::CostOptions& cost_options = {}, const std::string& profile_path = "",
                 const std::string& logs_path = "");

// Reads the application's executor and driver logs from `logs_path` into `analysis` (its model
// must be built: the application id picks its processes).
// Bounded by executor_logs::LogReadLimits' defaults (docs/limits.md).
void AttachExecutorLogs(Analysis& analysis, const std::string& logs_path);

// Reads the application's profile from `profile_path` (see Analyze) into `analysis`.
void AttachProfile(Analysis& analysis, const std::string& profile_path,
                   const profile::ProfileLoadOptions& options = {});

// ProfileLoadOptions::decoder for a profile kept compressed as event logs are (zstd, gzip, lz4,
// snappy, lzf: the event logs' decoders, bounded by the profile size limit); a file that starts
// like a profile is read as it is. Analyze uses it; it lives with the log reading (codecs).
Result<std::unique_ptr<InputStream>> DecodeProfileFile(std::unique_ptr<InputStream> file,
                                                       const std::string& path, uint64_t max_bytes);

// What Analyze does once the model is built (the driver's live path builds its own model):
// summary, diagnosis, cost.
void CompleteAnalysis(Analysis& analysis, const cost::CostOptions& cost_options = {});

// The decoded JSON a log's parts probably hold, from their sizes: plain parts as they are,
// compressed ones (known by file name) at `decoded_per_compressed_byte` (real logs: 1x to 40x).
uint64_t EstimatedJsonBytes(const source::ApplicationLog& log,
                            uint64_t decoded_per_compressed_byte);

// Frees the model's per-task records (attempts, failures, their order by stage) once the
// analysis is complete: the text, Markdown and JSON reports read only what the analysis drew
// from them (the HTML report's timeline reads them). A directory of thousands of logs then
// keeps a few hundred KB per application until the report is written, not every task. For the
// HTML report, KeepTaskTimeline (html_report.h) first.
void ReleaseTaskRecords(Analysis& analysis);

}  // namespace sparkprof::report
