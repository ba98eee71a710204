// CompleteAnalysis (and AttachProfile) in its own object file: the driver's shared library links it
// without pulling in Analyze's log reading (codecs, zips) and their shared-library dependencies.
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "analyzer/cost/cost.h"
#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/model/spark_values.h"
#include "analyzer/report/analysis.h"
#include "common/human_format.h"
#include "common/parallel.h"

namespace sparkprof::report {

namespace {

// A setting that changes what a JVM asks its host for (cost::PriceSettings), with a value Spark
// would take as it is: never a placeholder or words ("30G -> smaller executors").
bool IsPriceableMemorySetting(const std::string& key, const std::string& value) {
  if (key == "spark.memory.offHeap.enabled") return value == "true" || value == "false";
  if (key == "spark.executor.memoryOverheadFactor" || key == "spark.driver.memoryOverheadFactor") {
    // Read as cost::ProcessMemoryGiB reads it: a number in [0, 10].
    char* end = nullptr;
    const double factor = std::strtod(value.c_str(), &end);
    return end != value.c_str() && *end == '\0' && factor >= 0 && factor <= 10;
  }
  static constexpr const char* kSizeKeys[] = {
      "spark.executor.memory",     "spark.executor.memoryOverhead",
      "spark.memory.offHeap.size", "spark.executor.pyspark.memory",
      "spark.driver.memory",       "spark.driver.memoryOverhead"};
  for (const char* k : kSizeKeys) {
    // The parser the pricing reads sizes with: what it would replace by a default is not priced.
    if (key == k) return model::ParseSizeMiB(value, -1) > 0;
  }
  return false;
}

// "the run would cost $0.61 instead of $0.42 (+45%): each executor asks 3.4 GiB instead of
// 1.9 GiB, one per m5.large instead of two, for the same lifetimes"
std::string PriceWords(const cost::SettingsCost& c) {
  std::string text = "the run would cost " + cost::Money(c.after, c.currency) + " instead of " +
                     cost::Money(c.before, c.currency);
  if (c.before > 0) {
    const double change = c.after / c.before - 1;
    text += " (" + std::string(change >= 0 ? "+" : "") + Fixed(100 * change, 0) + "%)";
  }
  if (c.executor_memory_gib_after != c.executor_memory_gib_before) {
    text += ": each executor asks " + Fixed(c.executor_memory_gib_after, 1) + " GiB instead of " +
            Fixed(c.executor_memory_gib_before, 1) + " GiB";
    if (!c.executor_instance_after.empty() &&
        (c.executor_instance_after != c.executor_instance_before ||
         c.executors_per_instance_after != c.executors_per_instance_before)) {
      text += ", " + std::to_string(c.executors_per_instance_after) + " per " +
              c.executor_instance_after + " instead of " +
              std::to_string(c.executors_per_instance_before) + " per " +
              c.executor_instance_before;
    }
  } else {
    text += ": the driver asks for more memory";
  }
  return text + ", for the same lifetimes (" + c.method + ")";
}

// Prices every memory setting a finding recommends, against the run's own cost.
void PriceMemorySettings(Analysis& analysis, const cost::CostOptions& cost_options) {
  if (!analysis.cost.available) return;
  for (diagnosis::Finding& f : analysis.findings) {
    for (diagnosis::Recommendation& r : f.recommendations) {
      if (!IsPriceableMemorySetting(r.config_key, r.value)) continue;
      const cost::SettingsCost c =
          cost::PriceSettings(analysis.model, cost_options, {{r.config_key, r.value}});
      if (!c.available) {
        r.price.words = "not priced: " + c.reason;
        continue;
      }
      if (c.after == c.before && c.executor_memory_gib_after == c.executor_memory_gib_before) {
        continue;  // asks for the same memory (e.g. a factor under an explicit overhead)
      }
      r.price.priced = true;
      r.price.before = c.before;
      r.price.after = c.after;
      r.price.currency = c.currency;
      r.price.words = PriceWords(c);
    }
  }
}

}  // namespace

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
  PriceMemorySettings(analysis, cost_options);
}

}  // namespace sparkprof::report
