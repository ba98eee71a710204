// PATH.html for the standalone agent: the cumulative profile rendered by flamegraph/ (built only
// when that library is part of the build).
#pragma once

#include <string>

#include "common/status.h"
#include "native-agent/drain.h"
#include "native-agent/profile_writers.h"

namespace sparkprof::agent {

// Renders every stack of the drain's cumulative profile, coloured by category, and writes it.
Status WriteFlameGraphHtml(const std::string& path, const Drain& drain,
                           const ReportContext& context);

}  // namespace sparkprof::agent
