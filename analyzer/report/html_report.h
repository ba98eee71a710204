// The report for a browser: one self-contained HTML file (inline CSS and script, a
// Content-Security-Policy that forbids every network load) with the phase breakdown, a timeline of
// stages over executors and running tasks, the stage and job tables, and the findings.
// Every string that comes from the event log is HTML-escaped.
#pragma once

#include <cstdint>
#include <string>
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

// One page with a section per application.
std::string RenderHtml(const std::vector<const Analysis*>& analyses);
std::string RenderHtml(const Analysis& analysis);

}  // namespace sparkprof::report
