// CompleteAnalysis in its own object file: the driver's shared library links it without pulling in
// Analyze's log reading (codecs, zips) and their shared-library dependencies.
#include <utility>

#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/report/analysis.h"

namespace sparkprof::report {

void CompleteAnalysis(Analysis& analysis, const cost::CostOptions& cost_options) {
  analysis.summary = Summarize(analysis.model);
  // The rules' expected impacts and the cost frontier replay the run against one baseline.
  const whatif::LazySimulator simulator(analysis.model);
  diagnosis::Diagnosis diagnosed = diagnosis::Diagnose(analysis.model, &simulator);
  analysis.phases = diagnosed.phases;
  analysis.findings = std::move(diagnosed.findings);
  analysis.cost = cost::ComputeCost(analysis.model, cost_options, &simulator);
}

}  // namespace sparkprof::report
