// The report for people at a terminal: a short write-up of the run.
#pragma once

#include <string>

#include "analyzer/report/analysis.h"

namespace sparkprof::report {

std::string RenderText(const Analysis& analysis);

// What ends the report of several applications: those of the input that gave no report, with why.
std::string RenderTextNotAnalysed(const NotAnalysedList& not_analysed);

}  // namespace sparkprof::report
