// The cost of a run and the cheaper cluster that would have done it: executor and driver lifetimes
// priced per instance (given, named by the platform in the log, or the smallest catalogue type the
// executor fits), Databricks DBUs when asked, and a time/cost frontier over the cloud's instance
// types x counts, each point predicted by the what-if simulator. docs/cost.md states the method.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/cost/price_catalogue.h"
#include "analyzer/model/application_model.h"
#include "analyzer/whatif/simulator.h"

namespace sparkprof::cost {

struct CostOptions {
  const PriceCatalogue* catalogue = nullptr;  // nullptr: BuiltinCatalogue()
  std::string instance_type;                  // the executors' instance type; "": from the log
  std::string driver_instance_type;           // "": from the log, else inferred
  std::string cloud;                          // aws, gcp, azure; "": from the log, else aws
  // Flat rates instead of instance prices (both must be given): an executor-hour costs
  // cores x per_core + memory GiB x per_gib.
  double price_per_core_hour = -1;
  double price_per_gib_hour = -1;
  bool spot = false;                   // the run's executors were on spot capacity
  double dbu_price = -1;               // currency per DBU (Databricks); -1: DBUs not priced
  double dbus_per_instance_hour = -1;  // overrides the catalogue's dbu_per_hour
  double max_slowdown = 0.10;          // the recommendation: cheapest point within this slowdown
  bool frontier = true;
  // The frontier replays every task once per point: at most this many tasks x points.
  int64_t max_simulated_tasks = 5'000'000;
  int threads = 0;  // frontier points simulated at once; 0: every available CPU
};

// What one executor asks for: cores and memory (heap + overhead + off-heap + PySpark).
struct ExecutorShape {
  int32_t cores = 0;
  double memory_gib = 0;
};

struct FrontierPoint {
  std::string instance;
  int32_t count = 0;  // executors, one per instance using all its vCPUs
  int32_t cores_per_executor = 0;
  int64_t predicted_wall_ms = 0;
  double cost = 0;           // executors + driver (+ DBUs), on-demand
  bool on_frontier = false;  // no other point is both faster and cheaper
  bool current = false;      // the run's own cluster, simulated as it ran
};

struct SpotAdvice {
  bool available = false;
  double discount_low = 0;
  double discount_high = 0;
  double cost_low = 0;  // the recommended (or current) cluster with executors on spot
  double cost_high = 0;
  int32_t interruption_notice_s = 0;
  int64_t work_per_executor_ms = 0;  // task time one lost executor held, on average
  std::string advice;
  std::string source;
};

struct RunCost {
  bool available = false;
  std::string reason;  // why not, when unavailable
  std::string currency = "USD";
  std::string method;  // how executor-hours were priced, in words
  std::string cloud;
  std::string cloud_source;
  std::string region;
  std::string catalogue;  // "built-in" or the file
  std::string executor_instance;
  std::string executor_instance_source;
  std::string driver_instance;
  std::string driver_instance_source;
  ExecutorShape executor_shape;
  int32_t executors_per_instance = 1;
  int32_t executors = 0;  // executors with cores (not the driver)
  int32_t max_concurrent_executors = 0;
  double executor_hours = 0;  // executor lifetimes summed
  double executor_cost = 0;
  double driver_cost = 0;
  double dbus = 0;
  double dbu_cost = 0;
  double total = 0;
  int64_t wall_ms = 0;
  std::string current_cluster;  // e.g. "10 x r5.2xlarge + m5.xlarge driver"

  std::vector<FrontierPoint> points;  // evaluated, fastest first
  int32_t current = -1;               // index in points of the run's own cluster
  int32_t recommended = -1;           // cheapest within max_slowdown of `current`
  double saving_fraction = 0;         // 1 - recommended / current (like for like)
  double max_slowdown = 0;
  double self_prediction_error = 0;
  std::string frontier_note;  // why there is no frontier, or what limited it
  SpotAdvice spot;
  std::vector<std::string> assumptions;
};

// `simulator` (over `model`), when given, is shared with other users of the what-if simulator.
RunCost ComputeCost(const model::ApplicationModel& model, const CostOptions& options = {},
                    const whatif::LazySimulator* simulator = nullptr);

// The cost of a what-if (`sparkprof whatif`): executors and DBUs scaled by the prediction's
// core-hours against the run's, the driver by its wall time; priced like `run` (per core-hour of
// the run's executors). Negative when `run` is unavailable.
struct ScenarioCost {
  double actual = -1;
  double baseline = -1;  // the run replayed as it was
  double predicted = -1;
};
ScenarioCost PriceScenario(const RunCost& run, const whatif::Prediction& p);

// Spark properties to change, key then value.
using Settings = std::vector<std::pair<std::string, std::string>>;

// What a memory setting would cost (issue 29): the run priced twice as ComputeCost prices it
// (no frontier), as it was and with its executors and driver asking for memory with `settings`
// applied (spark.{executor,driver}.memory, .memoryOverhead, .memoryOverheadFactor,
// spark.memory.offHeap.{enabled,size}, spark.executor.pyspark.memory). Same lifetimes: the price of
// the setting, not its effect on time. An inferred instance type is inferred again for the new
// size (fewer executors per instance, or a larger type); a type the run named (given, Databricks'
// tags) stays, and a process that no longer fits on it makes the answer unavailable, saying so.
struct SettingsCost {
  bool available = false;
  std::string reason;  // why not, when unavailable
  std::string currency = "USD";
  std::string method;  // how the run is priced (RunCost::method)
  double before = 0;   // the run's total, as it was
  double after = 0;    // with the settings
  double executor_memory_gib_before = 0;
  double executor_memory_gib_after = 0;
  std::string executor_instance_before;  // "" with flat rates
  std::string executor_instance_after;
  int32_t executors_per_instance_before = 1;
  int32_t executors_per_instance_after = 1;
};
SettingsCost PriceSettings(const model::ApplicationModel& model, const CostOptions& options,
                           const Settings& settings);

// "$12.50", "$0.042" (USD) or "12.50 EUR".
std::string Money(double amount, const std::string& currency);

}  // namespace sparkprof::cost
