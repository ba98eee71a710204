// The report for people at a terminal: a short write-up of the run.
#pragma once

#include <string>

#include "analyzer/report/analysis.h"

namespace sparkprof::report {

std::string RenderText(const Analysis& analysis);

}  // namespace sparkprof::report
