#include "analyzer/report/text_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "analyzer/executor_logs/executor_logs.h"
#include "analyzer/report/cost_section.h"
#include "analyzer/report/logs_view.h"
#include "analyzer/report/markdown_report.h"
#include "analyzer/report/profile_view.h"
#include "analyzer/report/streaming_view.h"
#include "common/human_format.h"
#include "common/terminal_text.h"

namespace sparkprof::report {

namespace {

// Log strings can hold terminal escape sequences (C0, C1) and bidi overrides: never pass them
// through, and cut long ones by character, never inside one.
std::string Printable(std::string_view text, size_t max_characters = 120) {
  return TerminalSafeShortened(text, max_characters);
}

// Wraps long prose at ~96 columns with the given indent.
void Wrapped(std::ostringstream& out, const std::string& text, const std::string& indent) {
  size_t column = 0;
  std::string word;
  auto flush = [&]() {
    if (word.empty()) return;
    if (column > 0 && column + 1 + word.size() > 96) {
      out << "\n";
      column = 0;
    }
    if (column == 0) {
      out << indent;
      column = indent.size();
    } else {
      out << ' ';
      ++column;
    }
    out << word;
    column += word.size();
    word.clear();
  };
  for (char c : Printable(text, 4000)) {
    if (c == ' ') {
      flush();
    } else {
      word.push_back(c);
    }
  }
  flush();
  if (column > 0) out << "\n";
}

std::string EvidenceValue(const diagnosis::Evidence& e) {
  if (e.unit == "ms") return HumanDurationMs(SaturatingInt64(e.value));
  if (e.unit == "bytes") return HumanBytes(SaturatingInt64(e.value));
  if (e.unit == "ratio" || e.unit == "core-hours") {
    char text[32];
    std::snprintf(text, sizeof(text), "%.2f", e.value);
    return text;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f", e.value);
  return text;
}

void WritePhasesAndFindings(const Analysis& analysis, std::ostringstream& out) {
  const diagnosis::PhaseBreakdown& p = analysis.phases;
  if (p.wall_ms > 0) {
    out << "\nPhase breakdown (wall time " << HumanDurationMs(p.wall_ms) << ", peak "
        << p.peak_slots << " task slots)\n";
    const std::array<int64_t, diagnosis::kPhaseCount> phase_ms = diagnosis::PhaseMs(p);
    const auto task_wait_by_kind = diagnosis::TaskWaitByKind(p, analysis.profile.get());
    char line[200];
    for (int i = 0; i < diagnosis::kPhaseCount; ++i) {
      const std::string_view name = diagnosis::kPhaseNames[i];
      const char* note = "";
      if (name == "compute" && !p.cpu_measured) note = "  (CPU time not logged: includes waits)";
      if (name == "task_wait") {
        if (!p.cpu_measured) continue;  // no split: in compute
        if (task_wait_by_kind.empty()) note = "  (unattributed)";
      }
      std::snprintf(line, sizeof(line), "  %-14s %10s %7s%s\n", diagnosis::kPhaseLabels[i],
                    HumanDurationMs(phase_ms[i]).c_str(), Percent(p.Ratio(phase_ms[i])).c_str(),
                    note);
      out << line;
      if (name != "task_wait") continue;
      for (const auto& [category, ms] : task_wait_by_kind) {
        std::snprintf(line, sizeof(line), "    %-13s%10s %7s\n",
                      std::string(CategoryName(category)).c_str(), HumanDurationMs(ms).c_str(),
                      Percent(p.Ratio(ms)).c_str());
        out << line;
      }
    }
    const std::string backlog = BacklogText(p);
    if (!backlog.empty()) out << "  " << backlog << "\n";
  }
  out << "\nFindings";
  if (analysis.findings.empty()) {
    out << "\n  none: no rule found a problem worth its threshold\n";
    return;
  }
  out << " (most important first: failures, then by expected saving, root causes before their "
         "symptoms)\n";
  int number = 0;
  for (const diagnosis::Finding& f : analysis.findings) {
    out << "\n"
        << ++number << ". [" << diagnosis::SeverityName(f.severity) << "] " << f.rule << ": "
        << Printable(f.title, 300) << "\n";
    out << "   " << diagnosis::CategoryName(f.category) << "; confidence "
        << diagnosis::ConfidenceLevelName(f.confidence.level);
    if (!f.confidence.reason.empty()) out << ": " << Printable(f.confidence.reason, 400);
    out << "\n";
    if (!f.symptom_of.empty()) {
      out << "   follows from " << f.symptom_of << " (above): fix that first\n";
    }
    out << "   evidence:";
    for (size_t i = 0; i < f.evidence.size(); ++i) {
      out << (i == 0 ? " " : ", ") << Printable(f.evidence[i].name, 80) << "="
          << EvidenceValue(f.evidence[i]);
    }
    out << "\n";
    for (const diagnosis::FrameEvidence& frame : f.frames) {
      out << "   frame: "
          << (frame.stage_id >= 0 ? "stage " + std::to_string(frame.stage_id) : "driver") << " "
          << Printable(frame.category, 40) << " " << FrameAmountText(frame) << " in "
          << Printable(frame.frame, 200);
      if (!frame.application_frame.empty() && frame.application_frame != frame.frame) {
        out << " under " << Printable(frame.application_frame, 200);
      }
      out << "\n";
    }
    Wrapped(out, f.explanation, "   ");
    for (const diagnosis::Recommendation& r : f.recommendations) {
      if (r.config_key.empty()) {
        out << "   fix (code): " << Printable(r.value, 300) << "\n";
      } else {
        out << "   fix: " << Printable(r.config_key, 120) << "=" << Printable(r.value, 200) << "\n";
      }
      Wrapped(out, "because " + r.reason, "        ");
      if (!r.price.words.empty()) Wrapped(out, "cost: " + r.price.words, "        ");
    }
    out << "   expected impact: " << HumanDurationMs(f.impact.time_saved_ms_low) << " to "
        << HumanDurationMs(f.impact.time_saved_ms_high) << " saved";
    out << ", " << CoreHoursRange(f.impact.core_hours_saved_low, f.impact.core_hours_saved_high)
        << "\n";
    Wrapped(out, "(" + f.impact.method + ")", "     ");
    if (!f.recipe.empty()) out << "   recipe: " << f.recipe << "\n";
  }
  // One block to paste into spark-defaults.conf or --conf flags; first finding wins per key.
  std::vector<std::pair<std::string, std::string>> changes;
  for (const diagnosis::Finding& f : analysis.findings) {
    for (const diagnosis::Recommendation& r : f.recommendations) {
      // Alternatives ("only if ...", "alternatively ...") and placeholders are not defaults to
      // paste.
      if (r.config_key.empty() || r.value.find('<') != std::string::npos ||
          r.reason.rfind("only if", 0) == 0 || r.reason.rfind("alternatively", 0) == 0 ||
          r.value.find(' ') != std::string::npos) {
        continue;
      }
      bool seen = false;
      for (const auto& [key, value] : changes) seen = seen || key == r.config_key;
      if (!seen) changes.push_back({r.config_key, r.value});
    }
  }
  if (!changes.empty()) {
    out << "\nConfiguration changes (from the findings above, most important first)\n";
    for (const auto& [key, value] : changes) {
      out << "  --conf " << Printable(key, 120) << "=" << Printable(value, 200) << "\n";
    }
  }
}

void WriteCost(const cost::RunCost& c, std::ostringstream& out) {
  const CostSection s = DescribeCost(c);
  out << "\nCost\n";
  Wrapped(out, s.headline, "  ");
  if (!s.recommendation.empty()) Wrapped(out, s.recommendation, "  ");
  if (!s.frontier.empty()) {
    out << "  Time/cost frontier (each point simulated):\n";
    char line[512];
    for (const CostRow& row : s.frontier) {
      std::snprintf(line, sizeof line, "    %-40s %12s %12s  %s\n",
                    Printable(row.cluster, 40).c_str(), row.predicted.c_str(), row.cost.c_str(),
                    row.note.c_str());
      out << line;
    }
  }
  if (!s.spot.empty()) Wrapped(out, s.spot, "  ");
  for (const std::string& note : s.notes) Wrapped(out, note, "    ");
}

}  // namespace

// The agent's profile: per stage, where the sampled task time went, on and off CPU.
static void WriteTextProfile(const Analysis& analysis, std::ostringstream& out) {
  if (analysis.profile == nullptr) {
    if (!analysis.profile_error.empty()) {
      out << "\nProfile\n  not read: " << Printable(analysis.profile_error, 400) << "\n";
    }
    return;
  }
  const profile::ApplicationProfile& p = *analysis.profile;
  out << "\nProfile (the agent's stack samples: " << Printable(ProfileSourceText(p), 300) << ")\n";
  for (const StageProfileView& view : StageProfileViews(p)) {
    const profile::StageProfile& stage = *view.stage;
    out << "  stage " << stage.stage_id << "." << stage.stage_attempt << ": "
        << HumanDurationMs(static_cast<int64_t>(stage.task_ns / 1'000'000))
        << " sampled task time, "
        << HumanDurationMs(static_cast<int64_t>(stage.on_cpu_ns / 1'000'000)) << " on CPU";
    if (p.has_off_cpu()) {
      out << ", " << HumanDurationMs(static_cast<int64_t>(stage.off_cpu_ns / 1'000'000))
          << " off CPU";
    }
    out << "\n    by category: " << CategorySharesText(view) << "\n";
    if (const std::string python = PythonWorkersText(stage); !python.empty()) {
      out << "    Python workers: " << Printable(python, 400) << "\n";
    }
    if (const std::string slowest = SlowestTaskText(analysis.task_decompositions, stage);
        !slowest.empty()) {
      out << "    slowest task: " << Printable(slowest, 400) << "\n";
    }
    for (const std::string& monitor : MonitorLines(stage)) {
      out << "    monitor " << Printable(monitor, 600) << "\n";
    }
    for (size_t i = 0; i < stage.top_self.size() && i < 3; ++i) {
      const profile::FrameTime& frame = stage.top_self[i];
      out << "    hot frame: " << Printable(frame.frame, 160) << " "
          << HumanDurationMs(static_cast<int64_t>(frame.self_ns / 1'000'000)) << " self ("
          << CategoryName(frame.category) << ")\n";
    }
    if (!stage.top_application.empty()) {
      const profile::FrameTime& frame = stage.top_application.front();
      out << "    application code: " << Printable(frame.frame, 160) << " "
          << HumanDurationMs(static_cast<int64_t>(frame.on_cpu_inclusive_ns / 1'000'000))
          << " on CPU inclusive\n";
    }
  }
  if (const std::vector<std::string> memory = MemoryLines(p); !memory.empty()) {
    out << "  memory (the agents' readings, the most over the run):\n";
    for (const std::string& line : memory) Wrapped(out, Printable(line, 600), "    ");
  }
}

// What the executors' and the driver's own logs said (`analyze --logs`).
static void WriteTextLogs(const Analysis& analysis, std::ostringstream& out) {
  if (analysis.logs == nullptr) {
    if (!analysis.logs_error.empty()) {
      out << "\nExecutor and driver logs\n  not read: " << Printable(analysis.logs_error, 400)
          << "\n";
    }
    return;
  }
  out << "\nExecutor and driver logs (" << Printable(LogsSummaryText(*analysis.logs), 400) << ")\n";
  for (const std::string& line : LogHitLines(*analysis.logs, 30)) {
    Wrapped(out, Printable(line, 600), "  ");
  }
  for (const std::string& problem : analysis.logs->problems.messages) {
    Wrapped(out, "problem: " + Printable(problem, 400), "  ");
  }
}

namespace {

// The streaming section (streaming_view.h); nothing for an application without streaming queries.
void WriteStreaming(const Analysis& analysis, std::ostringstream& out) {
  const std::vector<StreamingRunView> views = StreamingViews(analysis.model);
  if (views.empty()) return;
  out << "\nStreaming queries\n";
  for (size_t i = 0; i < views.size() && i < kMaxReportedRuns; ++i) {
    out << "  " << Printable(StreamingHeading(views[i]), 300) << "\n";
    for (const std::string& line : StreamingLines(views[i])) {
      Wrapped(out, Printable(line, 600), "    ");
    }
  }
  if (views.size() > kMaxReportedRuns) {
    out << "  ... " << views.size() - kMaxReportedRuns << " more runs (all in the JSON report)\n";
  }
}

}  // namespace

std::string RenderText(const Analysis& analysis) {
  const model::ApplicationModel& m = analysis.model;
  const ApplicationSummary& s = analysis.summary;
  std::ostringstream out;
  out << "sparkprof report: " << Printable(m.app_name.empty() ? "(unnamed)" : m.app_name) << "\n";
  out << "  application " << Printable(m.app_id.empty() ? "(unknown id)" : m.app_id);
  if (!m.attempt_id.empty()) out << " attempt " << Printable(m.attempt_id);
  out << ", Spark " << Printable(m.spark_version.empty() ? "unknown" : m.spark_version);
  if (m.databricks) out << " (Databricks)";
  out << "\n";
  out << "  started " << FormatEpochMs(m.start_time_ms) << ", ran "
      << HumanDurationMs(m.duration_ms())
      << (m.complete ? "" : " (incomplete log: no ApplicationEnd; duration up to the last event)")
      << "\n\n";

  const Counts& c = s.counts;
  out << "Work\n";
  out << "  " << c.jobs << " jobs (" << c.failed_jobs << " failed), " << c.stages << " stages in "
      << c.stage_attempts << " attempts (" << c.failed_stage_attempts << " failed), "
      << c.task_attempts << " task attempts";
  if (c.speculative_task_attempts > 0)
    out << " (" << c.speculative_task_attempts << " speculative)";
  out << ", " << c.sql_executions << " SQL executions\n";
  out << "  executors: " << s.executors.added << " added, " << s.executors.removed
      << " removed, at most " << s.executors.max_concurrent << " at once\n";
  if (c.task_start_without_end > 0) {
    out << "  " << c.task_start_without_end
        << " task attempts started but never ended in this log\n";
  }

  const Totals& t = s.totals;
  out << "\nTask time (summed over task attempts)\n";
  out << "  run time " << HumanDurationMs(t.executor_run_time_ms) << ", CPU "
      << HumanDurationMs(t.executor_cpu_time_ns / 1'000'000) << ", GC "
      << HumanDurationMs(t.jvm_gc_time_ms);
  if (t.executor_run_time_ms > 0) {
    out << " (" << Percent(static_cast<double>(t.jvm_gc_time_ms) / t.executor_run_time_ms)
        << " of run time)";
  }
  out << "\n  shuffle read " << HumanBytes(t.shuffle_read_bytes) << " (fetch wait "
      << HumanDurationMs(t.shuffle_fetch_wait_time_ms) << "), shuffle write "
      << HumanBytes(t.shuffle_write_bytes) << "\n";
  out << "  input " << HumanBytes(t.input_bytes) << ", output " << HumanBytes(t.output_bytes)
      << ", spill " << HumanBytes(t.memory_bytes_spilled) << " in memory / "
      << HumanBytes(t.disk_bytes_spilled) << " on disk\n";
  if (const std::string photon = PhotonPeakMemoryText(t); !photon.empty()) {
    Wrapped(out, photon, "  ");
  }

  if (!s.task_end_reasons.empty() &&
      !(s.task_end_reasons.size() == 1 && s.task_end_reasons.count("Success") == 1)) {
    out << "\nTask ends by reason\n";
    for (const auto& [reason, count] : s.task_end_reasons) {
      out << "  " << Printable(reason) << ": " << count << "\n";
    }
  }

  WriteStreaming(analysis, out);
  WritePhasesAndFindings(analysis, out);
  WriteCost(analysis.cost, out);

  std::vector<const StageSummary*> longest;
  for (const StageSummary& stage : s.stages) {
    if (stage.duration_ms >= 0) longest.push_back(&stage);
  }
  std::sort(longest.begin(), longest.end(), [](const StageSummary* a, const StageSummary* b) {
    return a->duration_ms > b->duration_ms;
  });
  if (!longest.empty()) {
    out << "\nLongest stages\n";
    char line[256];
    std::snprintf(line, sizeof(line), "  %-9s %10s %7s %9s %9s %9s  %s\n", "stage", "duration",
                  "tasks", "p50", "p95", "max", "name");
    out << line;
    for (size_t i = 0; i < longest.size() && i < 10; ++i) {
      const StageSummary& stage = *longest[i];
      std::string id = std::to_string(stage.stage_id) + "." + std::to_string(stage.attempt);
      std::snprintf(line, sizeof(line), "  %-9s %10s %7lld %9s %9s %9s  ", id.c_str(),
                    HumanDurationMs(stage.duration_ms).c_str(),
                    static_cast<long long>(stage.task_attempts),
                    HumanDurationMs(stage.task_duration_ms.p50).c_str(),
                    HumanDurationMs(stage.task_duration_ms.p95).c_str(),
                    HumanDurationMs(stage.task_duration_ms.max).c_str());
      out << line << Printable(stage.name, 60) << (stage.status == "failed" ? " [FAILED]" : "")
          << "\n";
    }
  }

  WriteTextProfile(analysis, out);
  WriteTextLogs(analysis, out);

  const eventlog::ReadReport& r = analysis.read;
  out << "\nInput\n";
  for (const eventlog::FileReadReport& file : r.files) {
    out << "  " << Printable(file.file, 200) << " (" << (file.codec.empty() ? "?" : file.codec)
        << ", " << HumanBytes(static_cast<int64_t>(file.decoded_bytes)) << ", " << file.lines
        << " lines)\n";
    if (!file.error.empty()) out << "    problem: " << Printable(file.error, 300) << "\n";
  }
  if (r.bad_line_count > 0) {
    out << "  " << r.bad_line_count
        << " unreadable line(s) skipped; first: " << Printable(r.bad_lines.front().file, 200) << ":"
        << r.bad_lines.front().line << ": " << Printable(r.bad_lines.front().error, 200) << "\n";
  }
  if (!r.unknown_events.empty()) {
    out << "  events not interpreted:";
    for (const auto& [name, count] : r.unknown_events)
      out << " " << Printable(name, 100) << " (" << count << ")";
    out << "\n";
  }
  for (const source::DiscoveryWarning& skipped : analysis.not_read) {
    out << "  not read: " << Printable(skipped.path, 200) << ": " << Printable(skipped.message, 300)
        << "\n";
  }
  if (analysis.not_read_left_out > 0) {
    out << "  " << analysis.not_read_left_out << " more not read (all on stderr)\n";
  }
  return out.str();
}

std::string RenderTextNotAnalysed(const NotAnalysedList& not_analysed) {
  std::ostringstream out;
  out << "Not analysed (no report above)\n";
  for (const source::DiscoveryWarning& entry : not_analysed.entries) {
    out << "  " << Printable(entry.path, 200) << ": " << Printable(entry.message, 300) << "\n";
  }
  if (not_analysed.left_out > 0) {
    out << "  " << not_analysed.left_out << " more not analysed (all on stderr)\n";
  }
  return out.str();
}

}  // namespace sparkprof::report
