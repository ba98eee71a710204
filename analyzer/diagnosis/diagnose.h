// Runs every rule over one application model and returns the phase breakdown and the findings,
// ordered by the time they cost (most first).
#pragma once

#include <vector>

#include "analyzer/diagnosis/finding.h"
#include "analyzer/diagnosis/phase_breakdown.h"
#include "analyzer/model/application_model.h"

namespace sparkprof::diagnosis {

struct Diagnosis {
  PhaseBreakdown phases;
  std::vector<Finding> findings;
};

Diagnosis Diagnose(const model::ApplicationModel& model);

}  // namespace sparkprof::diagnosis
