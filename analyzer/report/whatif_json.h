// The JSON answer of a what-if (`sparkprof.whatif/v1`, docs/report-schema.md) for one application:
// the CLI's `sparkprof whatif --format json` and the Python package's sparkprof.whatif write it.
#pragma once

#include "analyzer/report/analysis.h"
#include "analyzer/whatif/simulator.h"
#include "common/json_writer.h"

namespace sparkprof::report {

inline constexpr const char* kWhatifSchema = "sparkprof.whatif/v1";

// One application's prediction as a JSON object (the scenario priced with the analysis' cost).
void WriteWhatifJson(const Analysis& analysis, const whatif::Prediction& prediction,
                     JsonWriter& out);

}  // namespace sparkprof::report
