#include "analyzer/report/analysis.h"

#include <utility>

#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/model/model_builder.h"

namespace sparkprof::report {

Analysis Analyze(const source::ApplicationLog& log, const eventlog::ReaderOptions& options,
                 const cost::CostOptions& cost_options) {
  Analysis analysis;
  analysis.log_name = log.name;
  analysis.layout = log.layout;
  analysis.in_progress_by_name = log.in_progress_by_name;
  model::ModelBuilder builder;
  analysis.read = eventlog::ReadApplicationLog(log, builder, options);
  analysis.model = builder.Finish();
  CompleteAnalysis(analysis, cost_options);
  return analysis;
}

}  // namespace sparkprof::report
