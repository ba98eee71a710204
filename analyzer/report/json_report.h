// The machine-readable report, schema "sparkprof.report/v1" (docs/report-schema.md).
#pragma once

#include "analyzer/profile/stage_profiles.h"

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/report/analysis.h"
#include "common/json_writer.h"

namespace sparkprof::report {

// One `stages[]` / `jobs[]` entry of the report (also the driver's live job spans read them).
// `profile`, when given, is written as the stage's "profile" object (schema minor 5), with
// `tasks`, when given, as its "tasks" (minor 8).
void WriteStageSummary(const StageSummary& stage, JsonWriter& out,
                       const profile::StageProfile* profile = nullptr,
                       const diagnosis::StageTaskDecomposition* tasks = nullptr);
void WriteJobSummary(const JobSummary& job, JsonWriter& out);
// One report object.
void WriteJsonReport(const Analysis& analysis, JsonWriter& out);
// One application: the report object; several: {"schema": ..., "applications": [...],
// "not_analysed": [...], "not_analysed_left_out": N}.
std::string RenderJson(const std::vector<const Analysis*>& analyses,
                       const NotAnalysedList& not_analysed = {});

// RenderJson in pieces (ReportAssembler): one application's report object as a document of its
// own (no final newline); the several-application document's head, each report object in it
// (re-indented one level deeper, after a comma unless first) and its tail, which lists the
// applications not analysed (with the newline).
std::string RenderJsonSection(const Analysis& analysis);
std::string JsonApplicationsHead();
void AppendJsonApplication(std::string_view section, bool first, std::string& out);
std::string JsonApplicationsTail(const NotAnalysedList& not_analysed);

}  // namespace sparkprof::report
