#include "analyzer/report/html_report.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
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

// Row limits keep a report of a 50,000-stage application loadable; the JSON report has them all.
constexpr size_t kMaxStageRows = 2000;
constexpr size_t kMaxJobRows = 1000;
// Timeline bars: one per stage attempt made 500,000 stages an 82 MB page. The longest are drawn.
constexpr size_t kMaxTimelineStageBars = 2000;

// Text nodes and attribute values (always written double-quoted). Control characters would be
// parse errors and can hide text, bidi overrides reorder it, invalid UTF-8 is no text: all
// become U+FFFD.
std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      char32_t code_point = 0;
      size_t n = DecodeUtf8(text, i, &code_point);
      bool safe = n > 0 && !IsUnsafeForTerminal(code_point);
      out += safe ? text.substr(i, n) : std::string_view("\xEF\xBF\xBD");
      i += (n == 0 ? 1 : n) - 1;
      continue;
    }
    const char* reference = nullptr;
    if (c == '&') reference = "&amp;";
    if (c == '<') reference = "&lt;";
    if (c == '>') reference = "&gt;";
    if (c == '"') reference = "&quot;";
    if (c == '\'') reference = "&#39;";
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7F) reference = "\xEF\xBF\xBD";
    if (reference != nullptr) {
      out += reference;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string Shortened(std::string_view text, size_t max_characters) {
  size_t cut = Utf8PrefixBytes(text, max_characters);  // never inside a character
  std::string out = Escape(text.substr(0, cut));
  if (cut < text.size()) out += "&hellip;";
  return out;
}

std::string Coordinate(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

std::string Int(int64_t value) { return std::to_string(value); }

// A table cell that sorts by `sort_key` and shows `shown` (already escaped).
std::string NumberCell(int64_t sort_key, const std::string& shown) {
  return "<td class=\"num\" data-sort=\"" + Int(sort_key) + "\">" + shown + "</td>";
}

// ---- Timeline -------------------------------------------------------------------------------

std::vector<StepPoint> Steps(std::vector<std::pair<int64_t, int64_t>> deltas, int64_t start_ms) {
  std::sort(deltas.begin(), deltas.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<StepPoint> points{{start_ms, 0}};
  int64_t value = 0;
  for (size_t i = 0; i < deltas.size();) {
    const int64_t time_ms = deltas[i].first;
    for (; i < deltas.size() && deltas[i].first == time_ms; ++i) value += deltas[i].second;
    if (points.back().time_ms == time_ms) {
      points.back().value = value;
      if (points.size() > 1 && points[points.size() - 2].value == value) points.pop_back();
    } else if (points.back().value != value) {
      points.push_back({time_ms, value});
    }
  }
  return points;
}

struct TimeRange {
  int64_t start_ms = -1;
  int64_t end_ms = -1;
  bool valid() const { return start_ms >= 0 && end_ms > start_ms; }
  int64_t Clamp(int64_t t) const { return std::clamp(t, start_ms, end_ms); }
};

TimeRange ApplicationTimeRange(const model::ApplicationModel& model) {
  TimeRange range{model.start_time_ms >= 0 ? model.start_time_ms : model.first_event_time_ms,
                  model.end_time_ms};
  return range;
}

// Pixel geometry of the timeline: x grows with time since application start.
struct Geometry {
  static constexpr double kWidth = 1000;
  static constexpr double kLeft = 104;
  static constexpr double kRight = 14;
  TimeRange range;
  double PlotWidth() const { return kWidth - kLeft - kRight; }
  double X(int64_t t) const {
    return kLeft + PlotWidth() * static_cast<double>(range.Clamp(t) - range.start_ms) /
                       static_cast<double>(range.end_ms - range.start_ms);
  }
};

// One step chart drawn in [top, top + height], scaled to max_value. Series with more changes than
// pixels are drawn as the maximum within each pixel column, so a spike is never lost.
std::string StepPath(const std::vector<StepPoint>& points, const Geometry& g, double top,
                     double height, int64_t max_value) {
  auto y = [&](int64_t v) {
    return top + height - height * static_cast<double>(v) / static_cast<double>(max_value);
  };
  std::string path;
  const int columns = static_cast<int>(g.PlotWidth());
  if (points.size() <= static_cast<size_t>(columns) * 2) {
    path =
        "M" + Coordinate(g.X(points.front().time_ms)) + " " + Coordinate(y(points.front().value));
    for (size_t i = 1; i < points.size(); ++i) {
      path += "H" + Coordinate(g.X(points[i].time_ms)) + "V" + Coordinate(y(points[i].value));
    }
    return path + "H" + Coordinate(g.X(g.range.end_ms));
  }
  std::vector<int64_t> column_max(columns, 0);
  const double span_ms = static_cast<double>(g.range.end_ms - g.range.start_ms);
  auto column = [&](int64_t t) {
    double offset = static_cast<double>(g.range.Clamp(t) - g.range.start_ms) / span_ms;
    return std::min(columns - 1, static_cast<int>(offset * columns));
  };
  for (size_t i = 0; i < points.size(); ++i) {
    int64_t until = i + 1 < points.size() ? points[i + 1].time_ms : g.range.end_ms;
    int last = until > points[i].time_ms ? column(until - 1) : column(points[i].time_ms);
    for (int c = column(points[i].time_ms); c <= last; ++c) {
      column_max[c] = std::max(column_max[c], points[i].value);
    }
  }
  path = "M" + Coordinate(Geometry::kLeft) + " " + Coordinate(y(column_max[0]));
  for (int c = 1; c < columns; ++c) {
    if (column_max[c] == column_max[c - 1]) continue;
    path += "H" + Coordinate(Geometry::kLeft + c) + "V" + Coordinate(y(column_max[c]));
  }
  return path + "H" + Coordinate(Geometry::kLeft + columns);
}

int64_t MaxValue(const std::vector<StepPoint>& points) {
  int64_t max_value = 0;
  for (const StepPoint& point : points) max_value = std::max(max_value, point.value);
  return max_value;
}

// "45s", "3m", "1m30s", "2h05m": tick labels, time since application start.
std::string TickLabel(int64_t ms) {
  char text[32];
  int64_t seconds = ms / 1000;
  if (ms < 10'000 && ms % 1000 != 0) {
    std::snprintf(text, sizeof(text), "%.1fs", static_cast<double>(ms) / 1000.0);
  } else if (seconds < 60) {
    std::snprintf(text, sizeof(text), "%llds", static_cast<long long>(seconds));
  } else if (seconds < 3600) {
    if (seconds % 60 == 0) {
      std::snprintf(text, sizeof(text), "%lldm", static_cast<long long>(seconds / 60));
    } else {
      std::snprintf(text, sizeof(text), "%lldm%02llds", static_cast<long long>(seconds / 60),
                    static_cast<long long>(seconds % 60));
    }
  } else {
    std::snprintf(text, sizeof(text), "%lldh%02lldm", static_cast<long long>(seconds / 3600),
                  static_cast<long long>((seconds / 60) % 60));
  }
  return text;
}

int64_t TickStepMs(int64_t span_ms) {
  static constexpr int64_t kSteps[] = {
      100,       200,       500,       1'000,      2'000,      5'000,      10'000,
      15'000,    30'000,    60'000,    120'000,    300'000,    600'000,    900'000,
      1'800'000, 3'600'000, 7'200'000, 10'800'000, 21'600'000, 43'200'000, 86'400'000};
  for (int64_t step : kSteps) {
    if (span_ms / step <= 10) return step;
  }
  return span_ms / 10;
}

struct StageBar {
  const model::StageAttempt* stage;
  int64_t start_ms;
  int64_t end_ms;
  int lane = 0;
};

// Where a stage attempt ran: submission (else its first task launch) to completion (else its last
// task finish, else the application end for one still running).
std::vector<StageBar> StageBars(const model::ApplicationModel& model, const TaskTimeline& timeline,
                                const TimeRange& range) {
  std::vector<StageBar> bars;
  for (const auto& [key, stage] : model.stages) {
    int64_t first_launch = -1, last_finish = -1;
    if (auto span = timeline.stage_task_spans.find(key); span != timeline.stage_task_spans.end()) {
      std::tie(first_launch, last_finish) = span->second;
    }
    int64_t start = stage.submission_time_ms >= 0 ? stage.submission_time_ms : first_launch;
    if (start < 0) continue;  // skipped stage: never ran
    int64_t finish = stage.completion_time_ms;
    if (finish < start) {
      finish = stage.status == model::StageStatus::kActive || last_finish < start ? range.end_ms
                                                                                  : last_finish;
    }
    bars.push_back({&stage, range.Clamp(start), range.Clamp(finish)});
  }
  return bars;
}

// Greedy interval packing: each bar takes the first lane free at its start. Past kMaxLanes a bar
// joins the lane that frees first (and overlaps it) so very parallel applications stay readable.
int AssignLanes(std::vector<StageBar>& bars) {
  constexpr size_t kMaxLanes = 24;
  std::stable_sort(bars.begin(), bars.end(),
                   [](const StageBar& a, const StageBar& b) { return a.start_ms < b.start_ms; });
  std::vector<int64_t> lane_end;
  for (StageBar& bar : bars) {
    auto free = std::find_if(lane_end.begin(), lane_end.end(),
                             [&](int64_t end_ms) { return end_ms <= bar.start_ms; });
    if (free == lane_end.end() && lane_end.size() < kMaxLanes) {
      lane_end.push_back(bar.end_ms);
      bar.lane = static_cast<int>(lane_end.size()) - 1;
      continue;
    }
    if (free == lane_end.end()) free = std::min_element(lane_end.begin(), lane_end.end());
    *free = std::max(*free, bar.end_ms);
    bar.lane = static_cast<int>(free - lane_end.begin());
  }
  return std::max<int>(1, static_cast<int>(lane_end.size()));
}

const char* StageStatusClass(const model::StageAttempt& stage) {
  switch (stage.status) {
    case model::StageStatus::kComplete:
      return "complete";
    case model::StageStatus::kFailed:
      return "failed";
    default:
      return "running";
  }
}

void WriteTimeline(const Analysis& analysis, const std::string& id, std::string& out) {
  const model::ApplicationModel& m = analysis.model;
  Geometry g{ApplicationTimeRange(m)};
  out += "<h2>Timeline</h2>\n";
  if (!g.range.valid()) {
    out += "<p class=\"note\">No timeline: the log has no usable start and end times.</p>\n";
    return;
  }
  // Drawn from the task records now, or kept from them before they were freed.
  std::optional<TaskTimeline> computed;
  if (!analysis.task_timeline) computed = ComputeTaskTimeline(m);
  const TaskTimeline& timeline = computed ? *computed : *analysis.task_timeline;
  std::vector<StageBar> bars = StageBars(m, timeline, g.range);
  const size_t all_bars = bars.size();
  if (bars.size() > kMaxTimelineStageBars) {
    std::nth_element(bars.begin(), bars.begin() + kMaxTimelineStageBars, bars.end(),
                     [](const StageBar& a, const StageBar& b) {
                       return a.end_ms - a.start_ms > b.end_ms - b.start_ms;
                     });
    bars.resize(kMaxTimelineStageBars);
  }
  const int lanes = AssignLanes(bars);
  const TimelineSeries& series = timeline.series;

  constexpr double kLaneHeight = 14, kLaneGap = 3, kChartGap = 18;
  constexpr double kExecutorsHeight = 46, kTasksHeight = 80, kAxisHeight = 24;
  const double stages_top = 8;
  const double executors_top = stages_top + lanes * (kLaneHeight + kLaneGap) + kChartGap;
  const double tasks_top = executors_top + kExecutorsHeight + kChartGap;
  const double axis_top = tasks_top + kTasksHeight;
  const double height = axis_top + kAxisHeight;
  const double right = Geometry::kWidth - Geometry::kRight;

  out += "<svg class=\"timeline\" id=\"" + id + "-timeline\" viewBox=\"0 0 " +
         Coordinate(Geometry::kWidth) + " " + Coordinate(height) +
         "\" role=\"img\" aria-label=\"Stages, executors and running tasks over time\">\n";
  // Grid and time axis.
  const int64_t span_ms = g.range.end_ms - g.range.start_ms;
  const int64_t step_ms = std::max<int64_t>(1, TickStepMs(span_ms));
  out += "<g class=\"axis\">";
  for (int64_t t = 0; t <= span_ms; t += step_ms) {
    std::string x = Coordinate(g.X(g.range.start_ms + t));
    out += "<line class=\"grid\" x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + Coordinate(stages_top) +
           "\" y2=\"" + Coordinate(axis_top) + "\"/>";
    out += "<text x=\"" + x + "\" y=\"" + Coordinate(axis_top + 16) + "\" text-anchor=\"middle\">" +
           TickLabel(t) + "</text>";
  }
  out += "</g>\n";

  // Stage bars.
  out += "<text class=\"label\" x=\"4\" y=\"" + Coordinate(stages_top + 11) + "\">stages</text>\n";
  out += "<g class=\"stages\">\n";
  for (const StageBar& bar : bars) {
    const model::StageAttempt& stage = *bar.stage;
    double x = g.X(bar.start_ms);
    double width = std::max(1.0, g.X(bar.end_ms) - x);
    double y = stages_top + bar.lane * (kLaneHeight + kLaneGap);
    std::string label = "Stage " + Int(stage.stage_id) + "." + Int(stage.attempt);
    out += "<g class=\"stage-bar " + std::string(StageStatusClass(stage)) + "\"><title>" + label +
           ": " + Shortened(stage.name, 160) + "\n" + StageStatusName(stage.status) + ", " +
           HumanDurationMs(bar.end_ms - bar.start_ms) + ", " + Int(stage.num_tasks) +
           " tasks</title><rect x=\"" + Coordinate(x) + "\" y=\"" + Coordinate(y) + "\" width=\"" +
           Coordinate(width) + "\" height=\"" + Coordinate(kLaneHeight) + "\" rx=\"2\"/>";
    if (width >= 22) {
      out += "<text x=\"" + Coordinate(x + 3) + "\" y=\"" + Coordinate(y + 11) + "\">" +
             Int(stage.stage_id) + "</text>";
    }
    out += "</g>\n";
  }
  out += "</g>\n";

  // Executors alive.
  const int64_t max_executors = std::max<int64_t>(1, MaxValue(series.executors));
  out += "<text class=\"label\" x=\"4\" y=\"" + Coordinate(executors_top + 11) +
         "\">executors</text><text class=\"label small\" x=\"4\" y=\"" +
         Coordinate(executors_top + 25) + "\">max " + Int(MaxValue(series.executors)) + "</text>\n";
  out += "<line class=\"baseline\" x1=\"" + Coordinate(Geometry::kLeft) + "\" x2=\"" +
         Coordinate(right) + "\" y1=\"" + Coordinate(executors_top + kExecutorsHeight) +
         "\" y2=\"" + Coordinate(executors_top + kExecutorsHeight) + "\"/>\n";
  out += "<path class=\"series executors\" d=\"" +
         StepPath(series.executors, g, executors_top, kExecutorsHeight, max_executors) + "\"/>\n";

  // Running tasks, under the task slots (dashed).
  const int64_t max_tasks =
      std::max<int64_t>(1, std::max(MaxValue(series.running_tasks), MaxValue(series.task_slots)));
  out += "<text class=\"label\" x=\"4\" y=\"" + Coordinate(tasks_top + 11) +
         "\">running tasks</text><text class=\"label small\" x=\"4\" y=\"" +
         Coordinate(tasks_top + 25) + "\">max " + Int(MaxValue(series.running_tasks)) +
         "</text><text class=\"label small slots\" x=\"4\" y=\"" + Coordinate(tasks_top + 38) +
         "\">slots " + Int(MaxValue(series.task_slots)) + " (dashed)</text>\n";
  std::string tasks_path = StepPath(series.running_tasks, g, tasks_top, kTasksHeight, max_tasks);
  out += "<path class=\"series tasks\" d=\"" + tasks_path + "V" +
         Coordinate(tasks_top + kTasksHeight) + "H" + Coordinate(Geometry::kLeft) + "Z\"/>\n";
  out += "<path class=\"series slots\" d=\"" +
         StepPath(series.task_slots, g, tasks_top, kTasksHeight, max_tasks) + "\"/>\n";
  out += "<line class=\"baseline\" x1=\"" + Coordinate(Geometry::kLeft) + "\" x2=\"" +
         Coordinate(right) + "\" y1=\"" + Coordinate(axis_top) + "\" y2=\"" + Coordinate(axis_top) +
         "\"/>\n";
  out += "</svg>\n";
  out +=
      "<p class=\"legend\"><span class=\"swatch complete\"></span>stage completed "
      "<span class=\"swatch failed\"></span>failed <span class=\"swatch running\"></span>"
      "did not complete in this log &middot; x: time since application start "
      "(hover a stage for its name)</p>\n";
  if (all_bars > bars.size()) {
    out += "<p class=\"note\">The " + Int(bars.size()) + " longest of " + Int(all_bars) +
           " stage attempts are drawn; the JSON report has them all.</p>\n";
  }
}

// ---- Sections -------------------------------------------------------------------------------

void WriteHeader(const Analysis& analysis, const std::string& id, std::string& out) {
  const model::ApplicationModel& m = analysis.model;
  const ApplicationSummary& s = analysis.summary;
  out += "<header><h1>" + Shortened(m.app_name.empty() ? "(unnamed)" : m.app_name, 300) +
         "</h1>\n<p class=\"identity\">" + Escape(m.app_id.empty() ? "(unknown id)" : m.app_id);
  if (!m.attempt_id.empty()) out += " attempt " + Escape(m.attempt_id);
  out += " &middot; Spark " + Escape(m.spark_version.empty() ? "unknown" : m.spark_version);
  if (m.databricks) out += " (Databricks)";
  if (!m.user.empty()) out += " &middot; user " + Escape(m.user);
  out += " &middot; started " + FormatEpochMs(m.start_time_ms) + "</p>\n";
  if (!m.complete) {
    out +=
        "<p class=\"note\">Incomplete log: no ApplicationEnd; durations run up to the last "
        "event.</p>\n";
  }
  int64_t by_severity[3] = {0, 0, 0};
  for (const diagnosis::Finding& f : analysis.findings) ++by_severity[static_cast<int>(f.severity)];
  const std::pair<const char*, std::string> cards[] = {
      {"duration", HumanDurationMs(m.duration_ms())},
      {"jobs", Int(s.counts.jobs) +
                   (s.counts.failed_jobs ? " (" + Int(s.counts.failed_jobs) + " failed)" : "")},
      {"stages", Int(s.counts.stages)},
      {"task attempts", Int(s.counts.task_attempts)},
      {"executors", Int(s.executors.added) + " (max " + Int(s.executors.max_concurrent) + ")"},
      {"findings", Int(by_severity[2]) + " critical, " + Int(by_severity[1]) + " warning, " +
                       Int(by_severity[0]) + " info"},
  };
  out += "<dl class=\"cards\" id=\"" + id + "-summary\">";
  for (const auto& [name, value] : cards) {
    out += "<div><dt>" + std::string(name) + "</dt><dd>" + value + "</dd></div>";
  }
  out += "</dl>\n";
  const Totals& t = s.totals;
  out += "<p class=\"totals\">Task time (summed over task attempts): run " +
         HumanDurationMs(t.executor_run_time_ms) + ", CPU " +
         HumanDurationMs(t.executor_cpu_time_ns / 1'000'000) + ", GC " +
         HumanDurationMs(t.jvm_gc_time_ms) + " &middot; shuffle read " +
         HumanBytes(t.shuffle_read_bytes) + ", write " + HumanBytes(t.shuffle_write_bytes) +
         " &middot; input " + HumanBytes(t.input_bytes) + ", output " + HumanBytes(t.output_bytes) +
         " &middot; spill " + HumanBytes(t.memory_bytes_spilled) + " in memory, " +
         HumanBytes(t.disk_bytes_spilled) + " on disk</p>\n";
  if (const std::string photon = PhotonPeakMemoryText(t); !photon.empty()) {
    out += "<p class=\"totals\">" + Escape(photon) + "</p>\n";
  }
  out += "</header>\n";
}

void WritePhases(const diagnosis::PhaseBreakdown& p, const profile::ApplicationProfile* profile,
                 const std::string& id, std::string& out) {
  out += "<h2>Phase breakdown</h2>\n";
  if (p.wall_ms <= 0) {
    out += "<p class=\"note\">No phase breakdown: the application's duration is unknown.</p>\n";
    return;
  }
  std::vector<PhaseRow> rows = PhaseRows(p, profile);
  out += "<div class=\"phase-bar\" id=\"" + id + "-phases\">";
  for (const PhaseRow& row : rows) {
    if (row.ms <= 0 || row.kind) continue;
    char width[32];
    std::snprintf(width, sizeof(width), "%.3f%%", p.Ratio(row.ms) * 100.0);
    out += "<span class=\"phase " + std::string(row.css_class) + "\" style=\"width:" + width +
           "\" title=\"" + row.name + ": " + HumanDurationMs(row.ms) + " (" +
           Percent(p.Ratio(row.ms)) + ")\"></span>";
  }
  out +=
      "</div>\n<table class=\"phases\"><thead><tr><th>phase</th><th class=\"num\">time</th>"
      "<th class=\"num\">share of wall time</th></tr></thead><tbody>\n";
  for (const PhaseRow& row : rows) {
    out += row.kind ? "<tr class=\"kind\"><td><code>" + Escape(row.name) + "</code>"
                    : "<tr><td><span class=\"swatch " + row.css_class + "\"></span>" + row.name;
    out += "</td><td class=\"num\">" + HumanDurationMs(row.ms) + "</td><td class=\"num\">" +
           Percent(p.Ratio(row.ms)) + "</td></tr>\n";
  }
  out += "</tbody></table>\n<p class=\"note\">Wall time " + HumanDurationMs(p.wall_ms) + ", peak " +
         Int(p.peak_slots) + " task slots";
  const std::string backlog = BacklogText(p);
  if (!backlog.empty()) out += "; " + Escape(backlog);
  out += ".</p>\n";
}

std::string FindingAnchor(const std::string& id, size_t index) {
  return id + "-finding-" + std::to_string(index + 1);
}

std::string StageAnchor(const std::string& id, int32_t stage_id, int32_t attempt) {
  return id + "-stage-" + Int(stage_id) + "-" + Int(attempt);
}

void WriteStages(const Analysis& analysis, const std::string& id, std::string& out) {
  const ApplicationSummary& s = analysis.summary;
  out += "<h2>Stages</h2>\n";
  if (s.stages.empty()) {
    out += "<p class=\"note\">No stages in this log.</p>\n";
    return;
  }
  out += "<div class=\"table-scroll\"><table class=\"sortable stages\" id=\"" + id +
         "-stages\"><thead><tr><th>stage</th><th>attempt</th><th>name</th><th>status</th>"
         "<th class=\"num\">duration</th><th class=\"num\">tasks</th><th class=\"num\">failed</th>"
         "<th class=\"num\">task p50</th><th class=\"num\">p95</th><th class=\"num\">max</th>"
         "<th class=\"num\">spill (disk)</th><th class=\"num\">spill (memory)</th>"
         "<th class=\"num\">shuffle read</th><th class=\"num\">shuffle write</th>"
         "<th>findings</th></tr></thead><tbody>\n";
  for (size_t row = 0; row < s.stages.size() && row < kMaxStageRows; ++row) {
    const StageSummary& stage = s.stages[row];
    std::string findings;
    for (size_t i = 0; i < analysis.findings.size(); ++i) {
      const diagnosis::Finding& f = analysis.findings[i];
      if (std::find(f.stage_ids.begin(), f.stage_ids.end(), stage.stage_id) == f.stage_ids.end()) {
        continue;
      }
      findings += "<a class=\"severity " + std::string(diagnosis::SeverityName(f.severity)) +
                  "\" href=\"#" + FindingAnchor(id, i) + "\">" + Escape(f.rule) + "</a> ";
    }
    const Percentiles& d = stage.task_duration_ms;
    const Totals& t = stage.totals;
    out += "<tr id=\"" + StageAnchor(id, stage.stage_id, stage.attempt) + "\">" +
           NumberCell(stage.stage_id, Int(stage.stage_id)) +
           NumberCell(stage.attempt, Int(stage.attempt)) + "<td class=\"name\" title=\"" +
           Escape(stage.name) + "\">" + Shortened(stage.name, 80) + "</td><td class=\"status " +
           Escape(stage.status) + "\">" + Escape(stage.status) + "</td>" +
           NumberCell(stage.duration_ms, HumanDurationMs(stage.duration_ms)) +
           NumberCell(stage.task_attempts, Int(stage.task_attempts)) +
           NumberCell(stage.failed_task_attempts, Int(stage.failed_task_attempts)) +
           NumberCell(d.p50, HumanDurationMs(d.p50)) + NumberCell(d.p95, HumanDurationMs(d.p95)) +
           NumberCell(d.max, HumanDurationMs(d.max)) +
           NumberCell(t.disk_bytes_spilled, HumanBytes(t.disk_bytes_spilled)) +
           NumberCell(t.memory_bytes_spilled, HumanBytes(t.memory_bytes_spilled)) +
           NumberCell(t.shuffle_read_bytes, HumanBytes(t.shuffle_read_bytes)) +
           NumberCell(t.shuffle_write_bytes, HumanBytes(t.shuffle_write_bytes)) +
           "<td class=\"findings\">" + findings + "</td></tr>\n";
  }
  out += "</tbody></table></div>\n";
  if (s.stages.size() > kMaxStageRows) {
    out += "<p class=\"note\">The first " + Int(kMaxStageRows) + " of " + Int(s.stages.size()) +
           " stage attempts; the JSON report has them all.</p>\n";
  }
}

void WriteJobs(const model::ApplicationModel& m, const std::string& id, std::string& out) {
  if (m.jobs.empty()) return;
  out += "<h2>Jobs</h2>\n<div class=\"table-scroll\"><table class=\"sortable jobs\" id=\"" + id +
         "-jobs\"><thead><tr><th>job</th><th>SQL execution</th><th>description</th>"
         "<th>result</th><th class=\"num\">duration</th><th class=\"num\">stages</th></tr>"
         "</thead><tbody>\n";
  size_t rows = 0;
  for (const auto& [job_id, job] : m.jobs) {
    if (++rows > kMaxJobRows) break;
    std::string_view description = job.description;
    auto sql = m.sql_executions.find(job.sql_execution_id);
    if (description.empty() && sql != m.sql_executions.end()) description = sql->second.description;
    int64_t duration = model::ElapsedMs(job.submission_time_ms, job.completion_time_ms);
    out += "<tr>" + NumberCell(job_id, Int(job_id)) +
           NumberCell(job.sql_execution_id,
                      job.sql_execution_id >= 0 ? Int(job.sql_execution_id) : "") +
           "<td class=\"name\" title=\"" + Escape(description) + "\">" +
           Shortened(description, 160) + "</td><td>" + Escape(job.result) + "</td>" +
           NumberCell(duration, HumanDurationMs(duration)) +
           NumberCell(static_cast<int64_t>(job.stage_ids.size()), Int(job.stage_ids.size())) +
           "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  if (m.jobs.size() > kMaxJobRows) {
    out += "<p class=\"note\">The first " + Int(kMaxJobRows) + " of " + Int(m.jobs.size()) +
           " jobs.</p>\n";
  }
}

void WriteFinding(const diagnosis::Finding& f, const std::string& anchor, const std::string& id,
                  const ApplicationSummary& summary, std::string& out) {
  const std::string severity = diagnosis::SeverityName(f.severity);
  out += "<article class=\"finding " + severity + "\" id=\"" + anchor + "\" data-rule=\"" +
         Escape(f.rule) + "\">\n<h3><span class=\"severity " + severity + "\">" + severity +
         "</span> <code class=\"rule\">" + Escape(f.rule) + "</code> " + Shortened(f.title, 400) +
         "</h3>\n";
  out += "<p class=\"classification\"><span class=\"category\">" +
         std::string(diagnosis::CategoryName(f.category)) + "</span> · confidence <strong>" +
         diagnosis::ConfidenceLevelName(f.confidence.level) + "</strong>";
  if (!f.confidence.reason.empty()) out += ": " + Shortened(f.confidence.reason, 1200);
  if (!f.symptom_of.empty()) {
    out += " · follows from <code>" + Escape(f.symptom_of) + "</code>: fix that first";
  }
  out += "</p>\n";
  if (!f.stage_ids.empty()) {
    out += "<p class=\"stage-ids\">Stages:";
    std::set<int32_t> ids(f.stage_ids.begin(), f.stage_ids.end());
    for (int32_t stage_id : ids) {
      // Link the stage's first attempt in the table (summary.stages is ordered by id, attempt).
      auto first =
          std::find_if(summary.stages.begin(), summary.stages.end(),
                       [&](const StageSummary& stage) { return stage.stage_id == stage_id; });
      int32_t attempt = first != summary.stages.end() ? first->attempt : 0;
      out += " <a href=\"#" + StageAnchor(id, stage_id, attempt) + "\">" + Int(stage_id) + "</a>";
    }
    out += "</p>\n";
  }
  if (!f.evidence.empty()) {
    out +=
        "<table class=\"evidence\"><thead><tr><th>evidence</th><th class=\"num\">value</th>"
        "</tr></thead><tbody>";
    for (const diagnosis::Evidence& e : f.evidence) {
      out += "<tr><td>" + Escape(e.name) + "</td><td class=\"num\">" +
             Escape(FormatEvidenceValue(e)) + "</td></tr>";
    }
    out += "</tbody></table>\n";
  }
  if (!f.frames.empty()) {
    out +=
        "<table class=\"frames\"><thead><tr><th class=\"num\">stage</th><th>category</th>"
        "<th class=\"num\">sampled</th><th>frame</th><th>application frame</th></tr></thead>"
        "<tbody>";
    for (const diagnosis::FrameEvidence& frame : f.frames) {
      out += "<tr><td class=\"num\">" +
             (frame.stage_id >= 0 ? Int(frame.stage_id) : std::string("driver")) + "</td><td>" +
             Escape(frame.category) + "</td><td class=\"num\">" + FrameAmountText(frame) +
             "</td><td><code>" + Shortened(frame.frame, 300) + "</code></td><td><code>" +
             Shortened(frame.application_frame, 300) + "</code></td></tr>";
    }
    out += "</tbody></table>\n";
  }
  out += "<p class=\"explanation\">" + Shortened(f.explanation, 8000) + "</p>\n";
  if (!f.recommendations.empty()) {
    out += "<h4>Recommendations</h4>\n<ul class=\"recommendations\">\n";
    for (const diagnosis::Recommendation& r : f.recommendations) {
      out += "<li>";
      if (r.config_key.empty()) {
        out += "<span class=\"kind\">code</span> " + Shortened(r.value, 600);
      } else {
        out += "<code>" + Escape(r.config_key) + "=" + Shortened(r.value, 400) + "</code>";
      }
      out += "<div class=\"reason\">because " + Shortened(r.reason, 2000) + "</div>";
      if (!r.price.words.empty()) {
        out += "<div class=\"reason\">cost: " + Shortened(r.price.words, 2000) + "</div>";
      }
      out += "</li>\n";
    }
    out += "</ul>\n";
  }
  const std::string hours =
      CoreHoursRange(f.impact.core_hours_saved_low, f.impact.core_hours_saved_high, "&ndash;");
  out += "<p class=\"impact\"><strong>Expected impact:</strong> " +
         HumanDurationMs(f.impact.time_saved_ms_low) + " to " +
         HumanDurationMs(f.impact.time_saved_ms_high) + " saved, " + hours +
         " <span class=\"method\">(" + Shortened(f.impact.method, 2000) + ")</span></p>\n";
  if (!f.recipe.empty()) {
    // Recipes are docs paths relative to the repository; anything with a scheme is shown, not
    // linked.
    bool relative = f.recipe.find(':') == std::string::npos;
    out += "<p class=\"recipe\">Recipe: ";
    out += relative ? "<a href=\"" + Escape(f.recipe) + "\">" + Escape(f.recipe) + "</a>"
                    : Escape(f.recipe);
    out += "</p>\n";
  }
  out += "</article>\n";
}

void WriteFindings(const Analysis& analysis, const std::string& id, std::string& out) {
  out += "<h2>Findings</h2>\n";
  if (analysis.findings.empty()) {
    out += "<p class=\"none\">None: no rule found a problem worth its threshold.</p>\n";
    return;
  }
  out +=
      "<p class=\"note\">Most important first: failures, then by expected saving, root causes "
      "before their symptoms.</p>\n";
  for (size_t i = 0; i < analysis.findings.size(); ++i) {
    WriteFinding(analysis.findings[i], FindingAnchor(id, i), id, analysis.summary, out);
  }
  auto changes = PasteableConfigChanges(analysis.findings);
  if (changes.empty()) return;
  out +=
      "<h3>Configuration changes</h3>\n<p class=\"note\">From the findings above, most "
      "important first.</p>\n<pre class=\"config\">";
  for (const auto& [key, value] : changes)
    out += "--conf " + Escape(key) + "=" + Escape(value) + "\n";
  out += "</pre>\n";
}

// A note and a list with an item "stage 3.0: <line>" for each of lines_of(stage) over the
// profiled stages ("" lines left out); nothing when no stage has a line.
template <typename LinesOf>
void WriteStageLines(const std::vector<StageProfileView>& views, const char* note,
                     const char* list_class, LinesOf lines_of, size_t max_chars, std::string& out) {
  std::string items;
  for (const StageProfileView& view : views) {
    for (const std::string& line : lines_of(*view.stage)) {
      if (line.empty()) continue;
      items += "<li>stage " + Int(view.stage->stage_id) + "." + Int(view.stage->stage_attempt) +
               ": " + Shortened(line, max_chars) + "</li>\n";
    }
  }
  if (items.empty()) return;
  out += std::string("<p class=\"note\">") + note + ":</p>\n<ul class=\"" + list_class + "\">\n" +
         items + "</ul>\n";
}

// The agent's profile: the stages with the most sampled task time and where it went.
void WriteProfile(const Analysis& analysis, std::string& out) {
  if (analysis.profile == nullptr) {
    if (!analysis.profile_error.empty()) {
      out += "<h2>Profile</h2>\n<p class=\"note\">Not read: " +
             Shortened(analysis.profile_error, 600) + "</p>\n";
    }
    return;
  }
  const profile::ApplicationProfile& p = *analysis.profile;
  out += "<h2>Profile</h2>\n<p class=\"note\">The agent's stack samples: " +
         Shortened(ProfileSourceText(p), 400) + ".</p>\n";
  out +=
      "<table class=\"profile\"><thead><tr><th>stage</th><th class=\"num\">sampled task time"
      "</th><th class=\"num\">on CPU</th><th class=\"num\">off CPU</th><th>by category</th>"
      "<th>hottest frame (self)</th><th>application code (on CPU)</th></tr></thead><tbody>\n";
  for (const StageProfileView& view : StageProfileViews(p)) {
    const profile::StageProfile& stage = *view.stage;
    const int64_t task_ms = static_cast<int64_t>(stage.task_ns / 1'000'000);
    const int64_t on_ms = static_cast<int64_t>(stage.on_cpu_ns / 1'000'000);
    const int64_t off_ms = static_cast<int64_t>(stage.off_cpu_ns / 1'000'000);
    out += "<tr><td>" + Int(stage.stage_id) + "." + Int(stage.stage_attempt) + "</td>" +
           NumberCell(task_ms, HumanDurationMs(task_ms)) +
           NumberCell(on_ms, HumanDurationMs(on_ms)) +
           (p.has_off_cpu() ? NumberCell(off_ms, HumanDurationMs(off_ms))
                            : std::string("<td class=\"num\">-</td>")) +
           "<td>" + Escape(CategorySharesText(view)) + "</td><td><code>" +
           (stage.top_self.empty() ? std::string() : Shortened(stage.top_self.front().frame, 200)) +
           "</code></td><td><code>" +
           (stage.top_application.empty() ? std::string()
                                          : Shortened(stage.top_application.front().frame, 200)) +
           "</code></td></tr>\n";
  }
  out += "</tbody></table>\n";
  const std::vector<StageProfileView> views = StageProfileViews(p);
  WriteStageLines(
      views, "The Python workers (sampled in the worker, apart from task time)", "python-workers",
      [](const profile::StageProfile& stage) {
        return std::vector<std::string>{PythonWorkersText(stage)};
      },
      400, out);
  WriteStageLines(
      views, "The slowest task against the median task (sampled time)", "slowest-tasks",
      [&analysis](const profile::StageProfile& stage) {
        return std::vector<std::string>{SlowestTaskText(analysis.task_decompositions, stage)};
      },
      400, out);
  WriteStageLines(
      views, "The monitors task threads waited to enter (each wait timed by the JVM)", "monitors",
      [](const profile::StageProfile& stage) { return MonitorLines(stage); }, 600, out);
  if (const std::vector<std::string> memory = MemoryLines(p); !memory.empty()) {
    out +=
        "<p class=\"note\">Memory (the agents' readings, the most over the run):</p>\n"
        "<ul class=\"memory\">\n";
    for (const std::string& line : memory) out += "<li>" + Shortened(line, 600) + "</li>\n";
    out += "</ul>\n";
  }
}

// What the executors' and the driver's own logs said (`analyze --logs`).
void WriteExecutorLogs(const Analysis& analysis, std::string& out) {
  if (analysis.logs == nullptr) {
    if (!analysis.logs_error.empty()) {
      out += "<h2>Executor and driver logs</h2>\n<p class=\"note\">Not read: " +
             Shortened(analysis.logs_error, 600) + "</p>\n";
    }
    return;
  }
  out += "<h2>Executor and driver logs</h2>\n<p class=\"note\">" +
         Shortened(LogsSummaryText(*analysis.logs), 600) + ".</p>\n<ul class=\"logs\">\n";
  for (const std::string& line : LogHitLines(*analysis.logs, 30)) {
    out += "<li>" + Shortened(line, 600) + "</li>\n";
  }
  for (const std::string& problem : analysis.logs->problems.messages) {
    out += "<li>problem: " + Shortened(problem, 600) + "</li>\n";
  }
  out += "</ul>\n";
}

// List items "<what>: path: why", the first ones of a bounded list, then how many more.
void AppendPathsWithWhy(const std::vector<source::DiscoveryWarning>& entries, uint64_t left_out,
                        const std::string& what, std::string& out) {
  for (const source::DiscoveryWarning& entry : entries) {
    out += "<li>" + what + ": " + Shortened(entry.path, 200) + ": " +
           Shortened(entry.message, 300) + "</li>\n";
  }
  if (left_out > 0) {
    out +=
        "<li>" + Int(static_cast<int64_t>(left_out)) + " more " + what + " (all on stderr)</li>\n";
  }
}

void WriteInput(const Analysis& analysis, std::string& out) {
  const eventlog::ReadReport& r = analysis.read;
  out += "<h2>Input</h2>\n<ul class=\"input\">\n";
  for (const eventlog::FileReadReport& file : r.files) {
    out += "<li>" + Shortened(file.file, 300) + " (" +
           Escape(file.codec.empty() ? "?" : file.codec) + ", " +
           HumanBytes(static_cast<int64_t>(file.decoded_bytes)) + ", " + Int(file.lines) +
           " lines)";
    if (!file.error.empty())
      out += ": <span class=\"problem\">" + Shortened(file.error, 400) + "</span>";
    out += "</li>\n";
  }
  if (r.bad_line_count > 0) {
    const eventlog::BadLine& first = r.bad_lines.front();
    out += "<li>" + Int(r.bad_line_count) +
           " unreadable line(s) skipped; first: " + Shortened(first.file, 200) + ":" +
           Int(first.line) + ": " + Shortened(first.error, 300) + "</li>\n";
  }
  AppendPathsWithWhy(analysis.not_read, analysis.not_read_left_out, "not read", out);
  out += "</ul>\n";
}

// The cost of the run, the recommended cluster and the time/cost frontier as a scatter chart:
// every simulated point, the frontier joined, the current cluster and the recommendation marked.
void WriteCost(const cost::RunCost& c, const std::string& id, std::string& out) {
  const CostSection s = DescribeCost(c);
  out += "<h2>Cost</h2>\n<p class=\"cost\">" + Shortened(s.headline, 2000) + "</p>\n";
  if (!s.recommendation.empty()) {
    out += "<p class=\"cost recommendation\"><strong>" + Shortened(s.recommendation, 2000) +
           "</strong></p>\n";
  }
  if (!c.points.empty()) {
    constexpr double kWidth = 640, kHeight = 260, kLeft = 70, kRight = 20, kTop = 14, kBottom = 40;
    int64_t max_ms = 1, min_ms = INT64_MAX;
    double max_cost = 0;
    for (const cost::FrontierPoint& p : c.points) {
      max_ms = std::max(max_ms, p.predicted_wall_ms);
      min_ms = std::min(min_ms, p.predicted_wall_ms);
      max_cost = std::max(max_cost, p.cost);
    }
    if (!(max_cost > 0)) max_cost = 1;
    // The time axis spans the points (a little margin each side), not zero to the slowest.
    const double low = std::max(0.0, static_cast<double>(min_ms) * 0.95);
    const double span = std::max(1.0, static_cast<double>(max_ms) * 1.05 - low);
    auto x = [&](int64_t ms) {
      return kLeft + (kWidth - kLeft - kRight) * (static_cast<double>(ms) - low) / span;
    };
    auto y = [&](double cost) {
      return kHeight - kBottom - (kHeight - kTop - kBottom) * cost / (1.05 * max_cost);
    };
    out += "<svg class=\"cost-frontier\" id=\"" + id + "-cost\" viewBox=\"0 0 " +
           Coordinate(kWidth) + " " + Coordinate(kHeight) +
           "\" role=\"img\" aria-label=\"predicted run time against cost per run\">\n";
    out += "<line class=\"axis\" x1=\"" + Coordinate(kLeft) + "\" y1=\"" +
           Coordinate(kHeight - kBottom) + "\" x2=\"" + Coordinate(kWidth - kRight) + "\" y2=\"" +
           Coordinate(kHeight - kBottom) + "\"/>\n<line class=\"axis\" x1=\"" + Coordinate(kLeft) +
           "\" y1=\"" + Coordinate(kTop) + "\" x2=\"" + Coordinate(kLeft) + "\" y2=\"" +
           Coordinate(kHeight - kBottom) + "\"/>\n";
    out += "<text class=\"label\" x=\"" + Coordinate((kWidth + kLeft) / 2) + "\" y=\"" +
           Coordinate(kHeight - 8) + "\" text-anchor=\"middle\">predicted run time (" +
           HumanDurationMs(min_ms) + " to " + HumanDurationMs(max_ms) +
           ")</text>\n<text class=\"label\" x=\"12\" y=\"" + Coordinate(kTop + 4) + "\">" +
           Escape(cost::Money(max_cost, c.currency)) +
           "</text>\n<text class=\"label\" x=\"12\" y=\"" + Coordinate(kHeight - kBottom) + "\">" +
           Escape(cost::Money(0, c.currency)) + "</text>\n";
    std::string path;
    for (const cost::FrontierPoint& p : c.points) {
      if (!p.on_frontier) continue;
      path += (path.empty() ? "M" : " L") + Coordinate(x(p.predicted_wall_ms)) + " " +
              Coordinate(y(p.cost));
    }
    if (!path.empty()) out += "<path class=\"frontier\" d=\"" + path + "\"/>\n";
    for (size_t i = 0; i < c.points.size(); ++i) {
      const cost::FrontierPoint& p = c.points[i];
      std::string kind = p.on_frontier ? "point on" : "point";
      if (p.current) kind += " current";
      if (static_cast<int32_t>(i) == c.recommended) kind += " recommended";
      out += "<circle class=\"" + kind + "\" cx=\"" + Coordinate(x(p.predicted_wall_ms)) +
             "\" cy=\"" + Coordinate(y(p.cost)) + "\" r=\"" +
             (p.current || static_cast<int32_t>(i) == c.recommended ? "6" : "3.5") + "\"><title>" +
             Int(p.count) + " x " + Escape(p.instance) + ": " +
             HumanDurationMs(p.predicted_wall_ms) + ", " + Escape(cost::Money(p.cost, c.currency)) +
             (p.current ? " (current, simulated)" : "") +
             (static_cast<int32_t>(i) == c.recommended ? " (recommended)" : "") +
             "</title></circle>\n";
    }
    out += "</svg>\n";
  }
  if (!s.frontier.empty()) {
    out +=
        "<table class=\"frontier\"><thead><tr><th>cluster</th><th>predicted time</th>"
        "<th>cost per run</th><th></th></tr></thead><tbody>\n";
    for (const CostRow& row : s.frontier) {
      out += "<tr><td>" + Shortened(row.cluster, 200) + "</td><td class=\"num\">" +
             Escape(row.predicted) + "</td><td class=\"num\">" + Escape(row.cost) + "</td><td>" +
             Escape(row.note) + "</td></tr>\n";
    }
    out += "</tbody></table>\n";
  }
  if (!s.spot.empty()) out += "<p class=\"cost spot\">" + Shortened(s.spot, 4000) + "</p>\n";
  if (!s.notes.empty()) {
    out += "<ul class=\"note cost-notes\">\n";
    for (const std::string& note : s.notes) out += "<li>" + Shortened(note, 4000) + "</li>\n";
    out += "</ul>\n";
  }
}

void WriteStreaming(const Analysis& analysis, std::string& out) {
  const std::vector<StreamingRunView> views = StreamingViews(analysis.model);
  if (views.empty()) return;
  out += "<h2>Streaming queries</h2>\n";
  for (size_t i = 0; i < views.size() && i < kMaxReportedRuns; ++i) {
    out += "<h3>" + Shortened(StreamingHeading(views[i]), 300) + "</h3>\n<ul class=\"input\">\n";
    for (const std::string& line : StreamingLines(views[i])) {
      out += "<li>" + Shortened(line, 600) + "</li>\n";
    }
    out += "</ul>\n";
  }
  if (views.size() > kMaxReportedRuns) {
    out += "<p class=\"note\">" + std::to_string(views.size() - kMaxReportedRuns) +
           " more runs (all in the JSON report).</p>\n";
  }
}

void WriteApplication(const Analysis& analysis, size_t index, std::string& out) {
  const std::string id = "app" + std::to_string(index + 1);
  out += "<section class=\"application\" id=\"" + id + "\">\n";
  WriteHeader(analysis, id, out);
  WritePhases(analysis.phases, analysis.profile.get(), id, out);
  WriteTimeline(analysis, id, out);
  WriteStreaming(analysis, out);
  WriteFindings(analysis, id, out);
  WriteCost(analysis.cost, id, out);
  WriteStages(analysis, id, out);
  WriteJobs(analysis.model, id, out);
  WriteProfile(analysis, out);
  WriteExecutorLogs(analysis, out);
  WriteInput(analysis, out);
  out += "</section>\n";
}

// No network: every resource is inline, and the policy forbids loading anything else.
constexpr std::string_view kHead = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
)";

constexpr std::string_view kStyle = R"(<style>
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg-soft: #f6f8fa;
  --critical: #c62828; --warning: #b26a00; --info: #2f6fb0; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); }
main { max-width: 1240px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 24px; margin: 8px 0 2px; word-break: break-word; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 0 0 6px; }
h4 { font-size: 13px; margin: 10px 0 4px; }
.identity, .note, .legend, .method { color: var(--muted); }
nav.applications { padding: 8px 0; border-bottom: 1px solid var(--line); }
nav.applications a { margin-right: 14px; }
section.application + section.application { margin-top: 48px; border-top: 3px solid var(--line); }
dl.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; }
dl.cards div { background: var(--bg-soft); border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; }
dl.cards dt { font-size: 12px; color: var(--muted); }
dl.cards dd { margin: 0; font-weight: 600; }
.phase-bar { display: flex; height: 22px; border-radius: 4px; overflow: hidden; border: 1px solid var(--line); margin-bottom: 8px; }
.phase-bar .phase { display: block; height: 100%; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin: 0 5px -1px 0; }
.resource-wait { background: #9aa5b1; } .driver-only { background: #8e7cc3; } .compute { background: #4e79a7; }
.shuffle { background: #f28e2b; } .io-write { background: #e15759; } .gc { background: #edc948; }
.idle-slots { background: #dfe3e8; } .task-wait { background: #a0cbe8; }
table.phases tr.kind td:first-child { padding-left: 26px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--bg-soft); position: sticky; top: 0; }
table.sortable th { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \25B2"; } th[aria-sort="descending"]::after { content: " \25BC"; }
.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.name { min-width: 220px; max-width: 420px; overflow-wrap: anywhere; }
td.findings { min-width: 120px; }
a.severity { white-space: nowrap; }
td.status.failed { color: var(--critical); font-weight: 600; }
.table-scroll { overflow-x: auto; }
svg.timeline { width: 100%; height: auto; display: block; font-size: 11px; }
svg.cost-frontier { width: 100%; max-width: 720px; height: auto; display: block; font-size: 11px; }
svg.cost-frontier .axis { stroke: var(--line); } svg.cost-frontier .label { fill: var(--muted); }
svg.cost-frontier .frontier { fill: none; stroke: var(--info); stroke-width: 1.5; }
svg.cost-frontier .point { fill: #c4ccd6; } svg.cost-frontier .point.on { fill: var(--info); }
svg.cost-frontier .current { fill: var(--warning); } svg.cost-frontier .recommended { fill: #1a7f37; }
svg.timeline .grid { stroke: #eef0f3; }
svg.timeline .axis text, svg.timeline .label { fill: var(--muted); }
svg.timeline .label { font-size: 12px; } svg.timeline .label.small { font-size: 10px; }
svg.timeline .baseline { stroke: #aab2bc; }
svg.timeline .stage-bar rect { fill: #4e79a7; }
svg.timeline .stage-bar.failed rect { fill: var(--critical); }
svg.timeline .stage-bar.running rect { fill: #9aa5b1; }
svg.timeline .stage-bar:hover rect { fill: #f28e2b; }
svg.timeline .stage-bar text { fill: #fff; font-size: 10px; pointer-events: none; }
svg.timeline .series { fill: none; stroke-width: 1.5; }
svg.timeline .series.executors { stroke: #59a14f; }
svg.timeline .series.tasks { fill: rgba(78, 121, 167, 0.35); stroke: #4e79a7; stroke-width: 1; }
svg.timeline .series.slots { stroke: #1f2328; stroke-dasharray: 4 3; stroke-width: 1; }
.legend .swatch.complete { background: #4e79a7; } .legend .swatch.failed { background: var(--critical); }
.legend .swatch.running { background: #9aa5b1; }
article.finding { border: 1px solid var(--line); border-left: 5px solid var(--info); border-radius: 6px; padding: 10px 14px; margin: 12px 0; }
article.finding.warning { border-left-color: var(--warning); }
article.finding.critical { border-left-color: var(--critical); }
.severity { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px; color: #fff; background: var(--info); text-transform: uppercase; }
.severity.warning { background: var(--warning); } .severity.critical { background: var(--critical); }
a.severity { text-decoration: none; text-transform: none; margin: 1px 0; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
code { background: var(--bg-soft); padding: 1px 4px; border-radius: 4px; overflow-wrap: anywhere; }
pre.config { background: var(--bg-soft); border: 1px solid var(--line); padding: 10px; overflow-x: auto; }
ul.recommendations { margin: 0; padding-left: 20px; }
ul.recommendations li { margin-bottom: 6px; }
.reason { color: var(--muted); }
.kind { font-size: 11px; text-transform: uppercase; color: var(--muted); border: 1px solid var(--line); border-radius: 4px; padding: 0 4px; }
.problem { color: var(--critical); }
.explanation { max-width: 980px; }
</style>
)";

// Sorting for the stage and job tables (numbers by data-sort), and a handle for the browser test.
constexpr std::string_view kScript = R"(<script>
(function () {
  'use strict';
  function sortBy(table, header, column) {
    var descending = header.getAttribute('aria-sort') !== 'descending';
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) {
      cell.removeAttribute('aria-sort');
    });
    header.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[column], y = b.cells[column];
      var order = (x.dataset.sort !== undefined && y.dataset.sort !== undefined)
          ? Number(x.dataset.sort) - Number(y.dataset.sort)
          : x.textContent.localeCompare(y.textContent);
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
      header.addEventListener('click', function () { sortBy(table, header, column); });
    });
  });
  window.sparkprofReport = {
    applications: document.querySelectorAll('section.application').length,
    findings: document.querySelectorAll('article.finding').length,
    stageBars: document.querySelectorAll('svg.timeline .stage-bar').length
  };
})();
</script>
)";

}  // namespace

TimelineSeries ComputeTimelineSeries(const model::ApplicationModel& model) {
  TimelineSeries series;
  const TimeRange range = ApplicationTimeRange(model);
  if (!range.valid()) return series;
  std::vector<std::pair<int64_t, int64_t>> executors, slots, tasks;
  for (const model::Executor& executor : model.executors) {
    // The driver runs tasks only in local mode, where it is the one executor with cores.
    bool runs_tasks =
        executor.total_cores > 0 || (executor.added_time_ms >= 0 && !executor.is_driver());
    if (!runs_tasks) continue;
    int64_t added =
        range.Clamp(executor.added_time_ms >= 0 ? executor.added_time_ms : range.start_ms);
    executors.push_back({added, 1});
    slots.push_back({added, executor.total_cores});
    // Alive at the end: the step stays up to the right edge instead of dropping there.
    if (executor.removed_time_ms < 0) continue;
    int64_t removed = std::max(added, range.Clamp(executor.removed_time_ms));
    executors.push_back({removed, -1});
    slots.push_back({removed, -executor.total_cores});
  }
  tasks.reserve(model.tasks.size() * 2);
  for (const model::TaskAttempt& task : model.tasks) {
    if (task.launch_time_ms < 0) continue;
    int64_t launch = range.Clamp(task.launch_time_ms);
    tasks.push_back({launch, 1});
    if (!task.ended()) continue;  // still running when the log ends
    tasks.push_back({range.Clamp(std::max(task.finish_time_ms, task.launch_time_ms)), -1});
  }
  series.executors = Steps(std::move(executors), range.start_ms);
  series.task_slots = Steps(std::move(slots), range.start_ms);
  series.running_tasks = Steps(std::move(tasks), range.start_ms);
  return series;
}

TaskTimeline ComputeTaskTimeline(const model::ApplicationModel& model) {
  TaskTimeline timeline;
  timeline.series = ComputeTimelineSeries(model);
  for (const auto& [key, stage] : model.stages) {
    int64_t first_launch = -1, last_finish = -1;
    auto [begin, end] = model.TasksOf(stage);
    if (begin == end) continue;
    for (const uint32_t* index = begin; index != end; ++index) {
      const model::TaskAttempt& task = model.tasks[*index];
      if (task.launch_time_ms >= 0 && (first_launch < 0 || task.launch_time_ms < first_launch)) {
        first_launch = task.launch_time_ms;
      }
      if (task.ended()) last_finish = std::max(last_finish, task.finish_time_ms);
    }
    timeline.stage_task_spans.emplace(key, std::make_pair(first_launch, last_finish));
  }
  return timeline;
}

void KeepTaskTimeline(Analysis& analysis) {
  analysis.task_timeline =
      std::make_shared<const TaskTimeline>(ComputeTaskTimeline(analysis.model));
}

HtmlSection RenderHtmlSection(const Analysis& analysis, size_t index) {
  HtmlSection section;
  section.app_name = analysis.model.app_name;
  section.app_id = analysis.model.app_id;
  WriteApplication(analysis, index, section.body);
  return section;
}

std::string HtmlPageHead(const std::vector<HtmlSection>& sections) {
  std::string out(kHead);
  std::string title = sections.size() == 1
                          ? "sparkprof: " + Shortened(sections.front().app_name, 200)
                          : "sparkprof: " + std::to_string(sections.size()) + " applications";
  out += "<title>" + title + "</title>\n";
  out += kStyle;
  out += "</head>\n<body>\n<main>\n";
  if (sections.size() > 1) {
    out += "<nav class=\"applications\">";
    for (size_t i = 0; i < sections.size(); ++i) {
      const HtmlSection& s = sections[i];
      out += "<a href=\"#app" + std::to_string(i + 1) + "\">" +
             Shortened(s.app_name.empty() ? s.app_id : s.app_name, 80) + "</a>";
    }
    out += "</nav>\n";
  }
  return out;
}

std::string HtmlPageTail(size_t sections, const NotAnalysedList& not_analysed) {
  std::string out;
  if (sections > 1 && !not_analysed.empty()) {
    out +=
        "<section class=\"not-analysed\" id=\"not-analysed\">\n"
        "<h2>Not analysed (no report above)</h2>\n<ul class=\"input\">\n";
    AppendPathsWithWhy(not_analysed.entries, not_analysed.left_out, "not analysed", out);
    out += "</ul>\n</section>\n";
  }
  out += "<p class=\"note\">Generated by sparkprof (report schema " + std::string(kReportSchema) +
         ").</p>\n</main>\n";
  out += kScript;
  out += "</body>\n</html>\n";
  return out;
}

std::string RenderHtml(const std::vector<const Analysis*>& analyses,
                       const NotAnalysedList& not_analysed) {
  std::vector<HtmlSection> sections;
  for (size_t i = 0; i < analyses.size(); ++i) {
    sections.push_back(RenderHtmlSection(*analyses[i], i));
  }
  std::string out = HtmlPageHead(sections);
  for (const HtmlSection& section : sections) out += section.body;
  return out + HtmlPageTail(sections.size(), not_analysed);
}

std::string RenderHtml(const Analysis& analysis) { return RenderHtml({&analysis}); }

}  // namespace sparkprof::report
