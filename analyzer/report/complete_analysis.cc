// CompleteAnalysis in its own object file: the driver's shared library links it without pulling in
// Analyze's log reading (codecs, zips) and their shared-library dependencies.
#include <future>
#include <system_error>
#include <utility>

#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/report/analysis.h"
#include "common/parallel.h"

namespace sparkprof::report {

void CompleteAnalysis(Analysis& analysis, const cost::CostOptions& cost_options) {
  // The rules' expected impacts and the cost frontier replay the run against one baseline.
  const whatif::LazySimulator simulator(analysis.model);
  // With more than one thread, the cost (its frontier prepares the simulator and replays the run
  // dozens of times) is computed while the summary and the rules are: all only read the model,
  // and whichever asks for the simulator first prepares it for both.
  std::future<cost::RunCost> cost;
  if (ThreadsOrAvailable(cost_options.threads) > 1) {
    try {
      cost = std::async(std::launch::async, [&analysis, &cost_options, &simulator] {
        return cost::ComputeCost(analysis.model, cost_options, &simulator);
      });
    } catch (const std::system_error&) {
      // No thread to be had: computed below, after the rules.
    }
  }
  analysis.summary = Summarize(analysis.model);
  diagnosis::Diagnosis diagnosed = diagnosis::Diagnose(analysis.model, &simulator);
  analysis.phases = diagnosed.phases;
  analysis.findings = std::move(diagnosed.findings);
  analysis.cost = cost.valid() ? cost.get()
                               : cost::ComputeCost(analysis.model, cost_options, &simulator);
}

}  // namespace sparkprof::report
