#include "analyzer/report/markdown_report.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <string_view>

#include "analyzer/executor_logs/executor_logs.h"
#include "analyzer/report/cost_section.h"
#include "analyzer/report/logs_view.h"
#include "analyzer/report/profile_view.h"
#include "analyzer/report/streaming_view.h"
#include "common/human_format.h"
#include "common/terminal_text.h"

namespace sparkprof::report {

namespace {

// Long log strings (stage names with a whole call site, SQL text) are cut by character, as in
// the text report.
std::string Cell(std::string_view text, size_t max_characters = 120) {
  size_t cut = Utf8PrefixBytes(text, max_characters);
  std::string escaped = EscapeMarkdown(text.substr(0, cut));
  if (cut < text.size()) escaped += "...";
  return escaped;
}

// A code span when the text can sit in one unchanged; otherwise escaped prose.
std::string Code(std::string_view text) {
  bool plain = !text.empty() && std::none_of(text.begin(), text.end(), [](char c) {
    return c == '`' || c == '|' || c == '<';
  }) && SanitizeForTerminal(text) == text;
  return plain ? "`" + std::string(text) + "`" : EscapeMarkdown(text);
}

void WriteHeader(const Analysis& analysis, std::ostringstream& out) {
  const model::ApplicationModel& m = analysis.model;
  out << "# sparkprof report: " << Cell(m.app_name.empty() ? "(unnamed)" : m.app_name) << "\n\n";
  out << "- **Application:** " << Cell(m.app_id.empty() ? "(unknown id)" : m.app_id);
  if (!m.attempt_id.empty()) out << " attempt " << Cell(m.attempt_id);
  out << "\n- **Spark:** " << Cell(m.spark_version.empty() ? "unknown" : m.spark_version)
      << (m.databricks ? " (Databricks)" : "") << "\n";
  out << "- **Started:** " << FormatEpochMs(m.start_time_ms) << ", **ran** "
      << HumanDurationMs(m.duration_ms())
      << (m.complete ? "" : " (incomplete log: no ApplicationEnd; duration up to the last event)")
      << "\n";
}

void WriteWork(const Analysis& analysis, std::ostringstream& out) {
  const ApplicationSummary& s = analysis.summary;
  const Counts& c = s.counts;
  out << "\n## Work\n\n";
  out << "- " << c.jobs << " jobs (" << c.failed_jobs << " failed), " << c.stages << " stages in "
      << c.stage_attempts << " attempts (" << c.failed_stage_attempts << " failed), "
      << c.task_attempts << " task attempts";
  if (c.speculative_task_attempts > 0)
    out << " (" << c.speculative_task_attempts << " speculative)";
  out << ", " << c.sql_executions << " SQL executions\n";
  out << "- executors: " << s.executors.added << " added, " << s.executors.removed
      << " removed, at most " << s.executors.max_concurrent << " at once\n";
  if (c.task_start_without_end > 0) {
    out << "- " << c.task_start_without_end
        << " task attempts started but never ended in this log\n";
  }

  const Totals& t = s.totals;
  out << "\n## Task time (summed over task attempts)\n\n";
  out << "| run time | CPU | GC | shuffle read | fetch wait | shuffle write | input | output | "
         "spill (memory) | spill (disk) |\n";
  out << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  out << "| " << HumanDurationMs(t.executor_run_time_ms) << " | "
      << HumanDurationMs(t.executor_cpu_time_ns / 1'000'000) << " | "
      << HumanDurationMs(t.jvm_gc_time_ms);
  if (t.executor_run_time_ms > 0) {
    out << " (" << Percent(static_cast<double>(t.jvm_gc_time_ms) / t.executor_run_time_ms) << ")";
  }
  out << " | " << HumanBytes(t.shuffle_read_bytes) << " | "
      << HumanDurationMs(t.shuffle_fetch_wait_time_ms) << " | " << HumanBytes(t.shuffle_write_bytes)
      << " | " << HumanBytes(t.input_bytes) << " | " << HumanBytes(t.output_bytes) << " | "
      << HumanBytes(t.memory_bytes_spilled) << " | " << HumanBytes(t.disk_bytes_spilled) << " |\n";
  if (const std::string photon = PhotonPeakMemoryText(t); !photon.empty()) {
    out << "\n" << EscapeMarkdown(photon) << ".\n";
  }

  if (!s.task_end_reasons.empty() &&
      !(s.task_end_reasons.size() == 1 && s.task_end_reasons.count("Success") == 1)) {
    out << "\n## Task ends by reason\n\n| reason | task attempts |\n|---|---:|\n";
    for (const auto& [reason, count] : s.task_end_reasons) {
      out << "| " << Cell(reason) << " | " << count << " |\n";
    }
  }
}

void WritePhases(const diagnosis::PhaseBreakdown& p, const profile::ApplicationProfile* profile,
                 std::ostringstream& out) {
  if (p.wall_ms <= 0) return;
  out << "\n## Phase breakdown\n\nWall time " << HumanDurationMs(p.wall_ms) << ", peak "
      << p.peak_slots << " task slots.\n\n| phase | time | share of wall time |\n|---|---:|---:|\n";
  for (const PhaseRow& row : PhaseRows(p, profile)) {
    out << "| " << (row.kind ? "&nbsp;&nbsp;" + Code(row.name) : row.name) << " | "
        << HumanDurationMs(row.ms) << " | " << Percent(p.Ratio(row.ms)) << " |\n";
  }
  const std::string backlog = BacklogText(p);
  if (!backlog.empty()) {
    out << "\n"
        << static_cast<char>(std::toupper(static_cast<unsigned char>(backlog[0])))
        << backlog.substr(1) << ".\n";
  }
}

void WriteFinding(int number, const diagnosis::Finding& f, std::ostringstream& out) {
  out << "\n### " << number << ". " << diagnosis::SeverityName(f.severity) << ": "
      << Cell(f.title, 300) << "\n\n";
  out << "**Rule:** " << Code(f.rule);
  if (!f.stage_ids.empty()) {
    out << " · **Stages:** ";
    for (size_t i = 0; i < f.stage_ids.size(); ++i) out << (i ? ", " : "") << f.stage_ids[i];
  }
  out << " · **Category:** " << diagnosis::CategoryName(f.category) << " · **Confidence:** "
      << diagnosis::ConfidenceLevelName(f.confidence.level);
  if (!f.confidence.reason.empty()) out << " (" << Cell(f.confidence.reason, 600) << ")";
  if (!f.symptom_of.empty()) out << " · **Follows from:** " << Code(f.symptom_of);
  out << "\n\n";
  if (!f.evidence.empty()) {
    out << "| evidence | value |\n|---|---:|\n";
    for (const diagnosis::Evidence& e : f.evidence) {
      out << "| " << Code(e.name) << " | " << FormatEvidenceValue(e) << " |\n";
    }
    out << "\n";
  }
  if (!f.frames.empty()) {
    out << "| stage | category | sampled | frame | application frame |\n|---:|---|---:|---|---|\n";
    for (const diagnosis::FrameEvidence& frame : f.frames) {
      out << "| " << (frame.stage_id >= 0 ? std::to_string(frame.stage_id) : "driver") << " | "
          << Cell(frame.category, 40) << " | " << FrameAmountText(frame) << " | "
          << Code(frame.frame) << " | "
          << (frame.application_frame.empty() ? std::string("-") : Code(frame.application_frame))
          << " |\n";
    }
    out << "\n";
  }
  out << Cell(f.explanation, 4000) << "\n\n";
  if (!f.recommendations.empty()) {
    out << "**Recommendations**\n\n";
    for (const diagnosis::Recommendation& r : f.recommendations) {
      if (r.config_key.empty()) {
        out << "- code: " << Cell(r.value, 300);
      } else {
        out << "- " << Code(r.config_key + "=" + r.value);
      }
      out << " — because " << Cell(r.reason, 1000);
      if (!r.price.words.empty()) out << "; cost: " << Cell(r.price.words, 1000);
      out << "\n";
    }
    out << "\n";
  }
  const std::string hours =
      CoreHoursRange(f.impact.core_hours_saved_low, f.impact.core_hours_saved_high, "–");
  out << "**Expected impact:** " << HumanDurationMs(f.impact.time_saved_ms_low) << " to "
      << HumanDurationMs(f.impact.time_saved_ms_high) << " saved, " << hours << " ("
      << Cell(f.impact.method, 1000) << ")\n";
  if (!f.recipe.empty()) {
    out << "\n**Recipe:** [" << Cell(f.recipe) << "](" << EscapeMarkdown(f.recipe) << ")\n";
  }
}

void WriteFindings(const Analysis& analysis, std::ostringstream& out) {
  out << "\n## Findings";
  if (analysis.findings.empty()) {
    out << "\n\nNone: no rule found a problem worth its threshold.\n";
    return;
  }
  out << " (most important first: failures, then by expected saving, root causes before their "
         "symptoms)\n";
  int number = 0;
  for (const diagnosis::Finding& f : analysis.findings) WriteFinding(++number, f, out);

  auto changes = PasteableConfigChanges(analysis.findings);
  if (changes.empty()) return;
  // The fence must be longer than any backtick run inside it.
  size_t longest_run = 0;
  for (const auto& [key, value] : changes) {
    for (const std::string* text : {&key, &value}) {
      size_t run = 0;
      for (char c : *text) {
        run = c == '`' ? run + 1 : 0;
        longest_run = std::max(longest_run, run);
      }
    }
  }
  std::string fence(std::max<size_t>(3, longest_run + 1), '`');
  out << "\n## Configuration changes\n\nFrom the findings above, most important first:\n\n"
      << fence << "sh\n";
  for (const auto& [key, value] : changes) out << "--conf " << key << "=" << value << "\n";
  out << fence << "\n";
}

void WriteLongestStages(const ApplicationSummary& s, std::ostringstream& out) {
  std::vector<const StageSummary*> longest;
  for (const StageSummary& stage : s.stages) {
    if (stage.duration_ms >= 0) longest.push_back(&stage);
  }
  if (longest.empty()) return;
  std::stable_sort(
      longest.begin(), longest.end(),
      [](const StageSummary* a, const StageSummary* b) { return a->duration_ms > b->duration_ms; });
  longest.resize(std::min<size_t>(longest.size(), 10));
  out << "\n## Longest stages\n\n"
      << "| stage | duration | tasks | p50 | p95 | max | spill (disk) | shuffle read | name |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const StageSummary* stage : longest) {
    out << "| " << stage->stage_id << "." << stage->attempt << " | "
        << HumanDurationMs(stage->duration_ms) << " | " << stage->task_attempts << " | "
        << HumanDurationMs(stage->task_duration_ms.p50) << " | "
        << HumanDurationMs(stage->task_duration_ms.p95) << " | "
        << HumanDurationMs(stage->task_duration_ms.max) << " | "
        << HumanBytes(stage->totals.disk_bytes_spilled) << " | "
        << HumanBytes(stage->totals.shuffle_read_bytes) << " | " << Cell(stage->name, 60)
        << (stage->status == "failed" ? " **FAILED**" : "") << " |\n";
  }
}

void WriteLongestJobs(const model::ApplicationModel& m, std::ostringstream& out) {
  std::vector<const model::Job*> jobs;
  for (const auto& [id, job] : m.jobs) {
    if (model::ElapsedMs(job.submission_time_ms, job.completion_time_ms) >= 0) jobs.push_back(&job);
  }
  if (jobs.empty()) return;
  auto duration = [](const model::Job* job) {
    return job->completion_time_ms - job->submission_time_ms;
  };
  std::stable_sort(jobs.begin(), jobs.end(), [&](const model::Job* a, const model::Job* b) {
    return duration(a) > duration(b);
  });
  jobs.resize(std::min<size_t>(jobs.size(), 10));
  out << "\n## Longest jobs\n\n| job | duration | result | description |\n|---|---:|---|---|\n";
  for (const model::Job* job : jobs) {
    std::string_view description = job->description;
    auto sql = m.sql_executions.find(job->sql_execution_id);
    if (description.empty() && sql != m.sql_executions.end()) description = sql->second.description;
    out << "| " << job->job_id << " | " << HumanDurationMs(duration(job)) << " | "
        << Cell(job->result, 40) << " | " << Cell(description, 120) << " |\n";
  }
}

void WriteInput(const Analysis& analysis, std::ostringstream& out) {
  const eventlog::ReadReport& r = analysis.read;
  out << "\n## Input\n\n";
  for (const eventlog::FileReadReport& file : r.files) {
    out << "- " << Cell(file.file, 200) << " (" << (file.codec.empty() ? "?" : Cell(file.codec))
        << ", " << HumanBytes(static_cast<int64_t>(file.decoded_bytes)) << ", " << file.lines
        << " lines)";
    if (!file.error.empty()) out << ": problem: " << Cell(file.error, 300);
    out << "\n";
  }
  if (r.bad_line_count > 0) {
    const eventlog::BadLine& first = r.bad_lines.front();
    out << "- " << r.bad_line_count
        << " unreadable line(s) skipped; first: " << Cell(first.file, 200) << ":" << first.line
        << ": " << Cell(first.error, 200) << "\n";
  }
  if (!r.unknown_events.empty()) {
    out << "- events not interpreted:";
    for (const auto& [name, count] : r.unknown_events) {
      out << " " << Cell(name, 100) << " (" << count << ")";
    }
    out << "\n";
  }
  for (const source::DiscoveryWarning& skipped : analysis.not_read) {
    out << "- not read: " << Cell(skipped.path, 200) << ": " << Cell(skipped.message, 300) << "\n";
  }
  if (analysis.not_read_left_out > 0) {
    out << "- " << analysis.not_read_left_out << " more not read (all on stderr)\n";
  }
}

}  // namespace

std::string EscapeMarkdown(std::string_view raw) {
  // Controls (C0, C1, bidi overrides) and invalid UTF-8 become spaces first.
  const std::string text = SanitizeForTerminal(raw, " ");
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (std::string_view("\\`*_[]|#~").find(c) != std::string_view::npos) {
      out.push_back('\\');
      out.push_back(c);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string FormatEvidenceValue(const diagnosis::Evidence& evidence) {
  if (evidence.unit == "ms") return HumanDurationMs(SaturatingInt64(evidence.value));
  if (evidence.unit == "bytes") return HumanBytes(SaturatingInt64(evidence.value));
  bool fractional = evidence.unit == "ratio" || evidence.unit == "core-hours";
  char text[32];
  std::snprintf(text, sizeof(text), fractional ? "%.2f" : "%.0f", evidence.value);
  return text;
}

std::string RenderMarkdownNotAnalysed(const NotAnalysedList& not_analysed) {
  std::string out = "## Not analysed (no report above)\n\n";
  for (const source::DiscoveryWarning& entry : not_analysed.entries) {
    out += "- " + EscapeMarkdown(entry.path) + ": " + EscapeMarkdown(entry.message) + "\n";
  }
  if (not_analysed.left_out > 0) {
    out += "- " + std::to_string(not_analysed.left_out) + " more not analysed (all on stderr)\n";
  }
  return out;
}

std::string PhotonPeakMemoryText(const Totals& t) {
  if (t.photon_peak_memory_largest_operator_bytes_max <= 0) return "";
  return "Photon peak memory, the largest of one task: " +
         HumanBytes(t.peak_execution_memory_bytes_max) +
         " as its operators' peaks summed (sparkprof's figure: an upper bound, the peaks need "
         "not coincide); " +
         HumanBytes(t.photon_peak_memory_largest_operator_bytes_max) +
         " as its largest operator's peak (spark-rapids-tools' figure: a lower bound)";
}

std::string BacklogText(const diagnosis::PhaseBreakdown& p) {
  if (p.slot_starved_wall_ms <= 0 || p.peak_queued_tasks <= 0) return "";
  return "tasks waited for a free slot during " + HumanDurationMs(p.slot_starved_wall_ms) + " (" +
         Percent(p.Ratio(p.slot_starved_wall_ms)) + " of the wall time), at most " +
         std::to_string(p.peak_queued_tasks) + " at once";
}

std::vector<PhaseRow> PhaseRows(const diagnosis::PhaseBreakdown& p,
                                const profile::ApplicationProfile* profile) {
  const std::array<int64_t, diagnosis::kPhaseCount> phase_ms = diagnosis::PhaseMs(p);
  std::vector<PhaseRow> rows;
  for (int i = 0; i < diagnosis::kPhaseCount; ++i) {
    const std::string_view phase = diagnosis::kPhaseNames[i];
    PhaseRow row{diagnosis::kPhaseLabels[i], std::string(phase), phase_ms[i]};
    std::replace(row.css_class.begin(), row.css_class.end(), '_', '-');
    if (phase == "compute" && !p.cpu_measured) row.name += " (CPU time not logged: includes waits)";
    if (phase != "task_wait") {
      rows.push_back(std::move(row));
      continue;
    }
    if (!p.cpu_measured) continue;  // no split: in compute
    const auto by_kind = diagnosis::TaskWaitByKind(p, profile);
    if (by_kind.empty()) row.name += " (unattributed)";
    rows.push_back(row);
    for (const auto& [category, ms] : by_kind) {
      rows.push_back({std::string(CategoryName(category)), row.css_class, ms, true});
    }
  }
  return rows;
}

std::vector<std::pair<std::string, std::string>> PasteableConfigChanges(
    const std::vector<diagnosis::Finding>& findings) {
  auto pasteable = [](const diagnosis::Recommendation& r) {
    bool alternative = r.reason.starts_with("only if") || r.reason.starts_with("alternatively");
    bool placeholder = r.value.find_first_of("< ") != std::string::npos;
    return !r.config_key.empty() && !alternative && !placeholder;
  };
  std::vector<std::pair<std::string, std::string>> changes;
  for (const diagnosis::Finding& finding : findings) {
    for (const diagnosis::Recommendation& r : finding.recommendations) {
      if (!pasteable(r)) continue;
      bool known = std::any_of(changes.begin(), changes.end(),
                               [&](const auto& change) { return change.first == r.config_key; });
      if (!known) changes.emplace_back(r.config_key, r.value);
    }
  }
  return changes;
}

static void WriteCost(const cost::RunCost& c, std::ostringstream& out) {
  const CostSection s = DescribeCost(c);
  out << "\n## Cost\n\n" << EscapeMarkdown(s.headline) << "\n";
  if (!s.recommendation.empty()) out << "\n" << EscapeMarkdown(s.recommendation) << "\n";
  if (!s.frontier.empty()) {
    out << "\n| cluster | predicted time | cost per run | |\n|---|---:|---:|---|\n";
    for (const CostRow& row : s.frontier) {
      out << "| " << Cell(row.cluster) << " | " << row.predicted << " | " << row.cost << " | "
          << row.note << " |\n";
    }
  }
  if (!s.spot.empty()) out << "\n" << EscapeMarkdown(s.spot) << "\n";
  if (!s.notes.empty()) out << "\n";
  for (const std::string& note : s.notes) out << "- " << EscapeMarkdown(note) << "\n";
}

// After `note`, a list item "stage 3.0: <line>" for each of lines_of(stage) over the profiled
// stages ("" lines left out); nothing when no stage has a line.
template <typename LinesOf>
static void WriteStageLines(const std::vector<StageProfileView>& views, const char* note,
                            LinesOf lines_of, size_t max_chars, std::ostringstream& out) {
  bool heading = false;
  for (const StageProfileView& view : views) {
    for (const std::string& line : lines_of(*view.stage)) {
      if (line.empty()) continue;
      if (!heading) out << "\n" << note << ":\n\n";
      heading = true;
      out << "- stage " << view.stage->stage_id << "." << view.stage->stage_attempt << ": "
          << Cell(line, max_chars) << "\n";
    }
  }
}

// The agent's profile: the stages with the most sampled task time and where it went.
static void WriteMarkdownProfile(const Analysis& analysis, std::ostringstream& out) {
  if (analysis.profile == nullptr) {
    if (!analysis.profile_error.empty()) {
      out << "\n## Profile\n\nNot read: " << Cell(analysis.profile_error, 600) << "\n";
    }
    return;
  }
  const profile::ApplicationProfile& p = *analysis.profile;
  out << "\n## Profile\n\nThe agent's stack samples: " << Cell(ProfileSourceText(p), 400)
      << ".\n\n";
  out << "| stage | sampled task time | on CPU | off CPU | by category | hottest frame (self) |\n"
         "|---|---:|---:|---:|---|---|\n";
  for (const StageProfileView& view : StageProfileViews(p)) {
    const profile::StageProfile& stage = *view.stage;
    out << "| " << stage.stage_id << "." << stage.stage_attempt << " | "
        << HumanDurationMs(static_cast<int64_t>(stage.task_ns / 1'000'000)) << " | "
        << HumanDurationMs(static_cast<int64_t>(stage.on_cpu_ns / 1'000'000)) << " | "
        << (p.has_off_cpu() ? HumanDurationMs(static_cast<int64_t>(stage.off_cpu_ns / 1'000'000))
                            : std::string("-"))
        << " | " << Cell(CategorySharesText(view), 300) << " | "
        << (stage.top_self.empty() ? std::string("-") : Code(stage.top_self.front().frame))
        << " |\n";
  }
  const std::vector<StageProfileView> views = StageProfileViews(p);
  WriteStageLines(
      views, "The Python workers (sampled in the worker, apart from task time)",
      [](const profile::StageProfile& stage) {
        return std::vector<std::string>{PythonWorkersText(stage)};
      },
      400, out);
  WriteStageLines(
      views, "The slowest task against the median task (sampled time)",
      [&analysis](const profile::StageProfile& stage) {
        return std::vector<std::string>{SlowestTaskText(analysis.task_decompositions, stage)};
      },
      400, out);
  WriteStageLines(
      views, "The monitors task threads waited to enter (each wait timed by the JVM)",
      [](const profile::StageProfile& stage) { return MonitorLines(stage); }, 600, out);
  if (const std::vector<std::string> memory = MemoryLines(p); !memory.empty()) {
    out << "\nMemory (the agents' readings, the most over the run):\n\n";
    for (const std::string& line : memory) out << "- " << Cell(line, 600) << "\n";
  }
}

// What the executors' and the driver's own logs said (`analyze --logs`).
static void WriteMarkdownLogs(const Analysis& analysis, std::ostringstream& out) {
  if (analysis.logs == nullptr) {
    if (!analysis.logs_error.empty()) {
      out << "\n## Executor and driver logs\n\nNot read: " << Cell(analysis.logs_error, 600)
          << "\n";
    }
    return;
  }
  out << "\n## Executor and driver logs\n\n"
      << Cell(LogsSummaryText(*analysis.logs), 600) << ".\n\n";
  for (const std::string& line : LogHitLines(*analysis.logs, 30)) {
    out << "- " << Cell(line, 600) << "\n";
  }
  for (const std::string& problem : analysis.logs->problems.messages) {
    out << "- problem: " << Cell(problem, 600) << "\n";
  }
}

namespace {

void WriteStreaming(const Analysis& analysis, std::ostringstream& out) {
  const std::vector<StreamingRunView> views = StreamingViews(analysis.model);
  if (views.empty()) return;
  out << "\n## Streaming queries\n";
  for (size_t i = 0; i < views.size() && i < kMaxReportedRuns; ++i) {
    out << "\n### " << Cell(StreamingHeading(views[i]), 300) << "\n\n";
    for (const std::string& line : StreamingLines(views[i])) out << "- " << Cell(line, 600) << "\n";
  }
  if (views.size() > kMaxReportedRuns) {
    out << "\n" << views.size() - kMaxReportedRuns << " more runs (all in the JSON report).\n";
  }
}

}  // namespace

std::string RenderMarkdown(const Analysis& analysis) {
  std::ostringstream out;
  WriteHeader(analysis, out);
  WriteWork(analysis, out);
  WritePhases(analysis.phases, analysis.profile.get(), out);
  WriteStreaming(analysis, out);
  WriteFindings(analysis, out);
  WriteCost(analysis.cost, out);
  WriteLongestStages(analysis.summary, out);
  WriteLongestJobs(analysis.model, out);
  WriteMarkdownProfile(analysis, out);
  WriteMarkdownLogs(analysis, out);
  WriteInput(analysis, out);
  return out.str();
}

}  // namespace sparkprof::report
