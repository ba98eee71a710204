// CompleteAnalysis (and AttachProfile) in its own object file: the driver's shared library links it
// without pulling in Analyze's log reading (codecs, zips) and their shared-library dependencies.
#include <future>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/report/analysis.h"
#include "common/parallel.h"

namespace sparkprof::report {

void AttachProfile(Analysis& analysis, const std::string& profile_path,
                   const profile::ProfileLoadOptions& options) {
  const std::string file = profile::FindProfileFor(profile_path, analysis.model.app_id);
  if (file.empty()) {
    analysis.profile_error = profile_path + ": no profile.sparkprof for application '" +
                             analysis.model.app_id + "' (looked for the file itself, <dir>/" +
                             profile::ApplicationDirectoryName(analysis.model.app_id) +
                             "/profile.sparkprof, <dir>/profile.sparkprof, <dir>/" +
                             profile::EventLogDirFolderName(analysis.model.app_id) +
                             "/profile.sparkprof.zstd and <dir>/profile.sparkprof.zstd)";
    return;
  }
  Result<profile::ApplicationProfile> loaded = profile::LoadApplicationProfile(file, options);
  if (!loaded.ok()) {
    analysis.profile_error = loaded.status().message();
    return;
  }
  analysis.profile = std::make_shared<const profile::ApplicationProfile>(std::move(*loaded));
}

void CompleteAnalysis(Analysis& analysis, const cost::CostOptions& cost_options) {
  // The rules' expected impacts and the cost frontier replay the run against one baseline.
  const whatif::LazySimulator simulator(analysis.model);
  // With more than one thread, the cost (its frontier prepares the simulator and replays the run
  // dozens of times) is computed while the summary and the rules are: all only read the model,
  // and whichever asks for the simulator first prepares it for both.
  std::future<cost::RunCost> cost;
  struct Joined {  // joined however this function ends (the thread reads the model)
    std::thread thread;
    ~Joined() {
      if (thread.joinable()) thread.join();
    }
  } cost_thread;
  if (ThreadsOrAvailable(cost_options.threads) > 1) {
    try {
      auto task = std::make_shared<std::packaged_task<cost::RunCost()>>(
          [&analysis, &cost_options, &simulator] {
            return cost::ComputeCost(analysis.model, cost_options, &simulator);
          });
      cost = task->get_future();
      cost_thread.thread = StartThreadElsewhere([task] { (*task)(); });
    } catch (const std::system_error&) {
      cost = {};  // no thread to be had: computed below, after the rules
    }
  }
  analysis.summary = Summarize(analysis.model);
  diagnosis::Diagnosis diagnosed =
      diagnosis::Diagnose(analysis.model, &simulator, analysis.profile.get(), analysis.logs.get());
  analysis.phases = diagnosed.phases;
  analysis.findings = std::move(diagnosed.findings);
  analysis.task_decompositions = std::move(diagnosed.task_decompositions);
  if (cost_thread.thread.joinable()) {
    analysis.cost = cost.get();
  } else {
    analysis.cost = cost::ComputeCost(analysis.model, cost_options, &simulator);
  }
}

}  // namespace sparkprof::report
