// The report for a browser: one self-contained HTML file (inline CSS and script, a
// Content-Security-Policy that forbids every network load) with the phase breakdown, a timeline of
// stages over executors and running tasks, the stage and job tables, and the findings.
// Every string that comes from the event log is HTML-escaped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/model/application_model.h"
#include "analyzer/report/analysis.h"

namespace sparkprof::report {

// One step of a step chart: `value` holds from `time_ms` until the next point's time.
struct StepPoint {
  int64_t time_ms = 0;
  int64_t value = 0;
};

// The timeline's step charts, computed from the model and clamped to [start, end] of the
// application. The first point is at the application start.
struct TimelineSeries {
  // Executors from ExecutorAdded to ExecutorRemoved (else the application end), and their cores.
  std::vector<StepPoint> executors;
  std::vector<StepPoint> task_slots;
  // Task attempts from launch to finish (else the application end).
  std::vector<StepPoint> running_tasks;
};
TimelineSeries ComputeTimelineSeries(const model::ApplicationModel& model);

// What the HTML timeline reads from the task records: drawn from them before `analyze` frees
// them (report::ReleaseTaskRecords), so a page of many applications does not keep every task.
struct TaskTimeline {
  TimelineSeries series;
  // Per stage attempt with tasks: its first task launch and last task finish (-1: none).
  std::map<std::pair<int32_t, int32_t>, std::pair<int64_t, int64_t>> stage_task_spans;
};
TaskTimeline ComputeTaskTimeline(const model::ApplicationModel& model);
// Keeps analysis.task_timeline for the HTML report; call before ReleaseTaskRecords.
void KeepTaskTimeline(Analysis& analysis);

// One page with a section per application; with several, the applications of the input that
// gave no report, with why, after them.
std::string RenderHtml(const std::vector<const Analysis*>& analyses,
                       const NotAnalysedList& not_analysed = {});
std::string RenderHtml(const Analysis& analysis);

// RenderHtml in pieces, for a page of many applications rendered one by one as each is analysed
// (its analysis then freed): an application's section at its place on the page (`index`: its
// anchors are app<index + 1>), and the page before the sections (the title and navigation name
// every application) and after them.
struct HtmlSection {
  std::string app_name;
  std::string app_id;
  std::string body;
};
HtmlSection RenderHtmlSection(const Analysis& analysis, size_t index);
std::string HtmlPageHead(const std::vector<HtmlSection>& sections);
// `sections`: how many the page holds (the list of those not analysed comes with several).
std::string HtmlPageTail(size_t sections = 1, const NotAnalysedList& not_analysed = {});

}  // namespace sparkprof::report
