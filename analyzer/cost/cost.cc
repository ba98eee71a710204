#include "analyzer/cost/cost.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analyzer/model/platform.h"
#include "analyzer/model/spark_values.h"
#include "analyzer/whatif/simulator.h"
#include "common/human_format.h"
#include "common/parallel.h"

namespace sparkprof::cost {
namespace {

constexpr double kMsPerHour = 3'600'000.0;
constexpr int64_t kMaxMiB = int64_t{1} << 30;  // 1 PiB: anything above is a hostile property

std::string Property(const model::ApplicationModel& model, const std::string& key,
                     const std::string& fallback = "") {
  const std::string* value = model.SparkProperty(key);
  return value != nullptr ? *value : fallback;
}

// A Spark size property in MiB; `bytes_default` for properties whose bare numbers are bytes
// (spark.memory.offHeap.size) rather than MiB.
int64_t SizeMiB(const std::string& text, int64_t fallback, bool bytes_default = false) {
  if (text.empty()) return fallback;
  const char last = text.back();
  if (bytes_default && last >= '0' && last <= '9') {
    const double bytes = std::strtod(text.c_str(), nullptr);
    if (!(bytes > 0)) return fallback;
    return static_cast<int64_t>(std::min(bytes / 1048576.0, static_cast<double>(kMaxMiB)));
  }
  return std::clamp<int64_t>(model::ParseSizeMiB(text, fallback), 0, kMaxMiB);
}

// A Spark property as the run had it, or as `settings` change it (a key listed there wins).
std::string SettingOf(const model::ApplicationModel& model, const Settings* settings,
                      const std::string& key, const std::string& fallback = "") {
  if (settings != nullptr) {
    for (const auto& [k, v] : *settings) {
      if (k == key) return v;
    }
  }
  return Property(model, key, fallback);
}

// Memory one JVM asks its host for: heap + overhead (+ off-heap, + PySpark), in GiB.
double ProcessMemoryGiB(const model::ApplicationModel& model, const std::string& role,
                        const Settings* settings) {
  auto property = [&](const std::string& key, const std::string& fallback = "") {
    return SettingOf(model, settings, key, fallback);
  };
  const int64_t heap = SizeMiB(property("spark." + role + ".memory"), 1024);
  int64_t overhead = SizeMiB(property("spark." + role + ".memoryOverhead"), -1);
  if (overhead < 0) {
    double factor =
        std::strtod(property("spark." + role + ".memoryOverheadFactor", "0.1").c_str(), nullptr);
    if (!(factor >= 0 && factor <= 10)) factor = 0.1;
    overhead = std::max<int64_t>(384, static_cast<int64_t>(factor * static_cast<double>(heap)));
  }
  int64_t extra = 0;
  if (role == "executor") {
    if (property("spark.memory.offHeap.enabled") == "true") {
      extra += SizeMiB(property("spark.memory.offHeap.size"), 0, /*bytes_default=*/true);
    }
    extra += SizeMiB(property("spark.executor.pyspark.memory"), 0);
  }
  return (static_cast<double>(heap) + static_cast<double>(overhead) + static_cast<double>(extra)) /
         1024.0;
}

// The cloud and where it was seen.
std::pair<std::string, std::string> DetectCloud(const model::ApplicationModel& model,
                                                const CostOptions& options) {
  if (!options.cloud.empty()) return {options.cloud, "--cloud"};
  std::string provider = Property(model, "spark.databricks.clusterUsageTags.cloudProvider");
  for (char& c : provider) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!provider.empty()) return {provider, "Databricks cluster tags"};
  switch (model::PlatformOf(model)) {
    case model::Platform::kEmr:
      return {"aws", "EMR settings in the log"};
    case model::Platform::kDataproc:
      return {"gcp", "Dataproc settings in the log"};
    default:
      break;
  }
  for (const model::Executor& e : model.executors) {
    const std::string& host = e.host;
    auto ends_with = [&](const char* suffix) {
      const std::string s(suffix);
      return host.size() >= s.size() && host.compare(host.size() - s.size(), s.size(), s) == 0;
    };
    if (ends_with(".ec2.internal") || ends_with(".compute.internal")) {
      return {"aws", "executor host names (" + host + ")"};
    }
    if (host.find(".c.") != std::string::npos && ends_with(".internal")) {
      return {"gcp", "executor host names (" + host + ")"};
    }
  }
  return {"aws", "not seen in the log: AWS assumed (pass --cloud or --instance-type)"};
}

int32_t ExecutorsPerInstance(const InstanceType& type, const ExecutorShape& shape) {
  if (shape.cores <= 0 || shape.memory_gib <= 0) return 1;
  const double by_cores = static_cast<double>(type.vcpus) / shape.cores;
  const double by_memory = type.memory_gib / shape.memory_gib;
  return static_cast<int32_t>(std::clamp(std::floor(std::min(by_cores, by_memory)), 0.0, 1e6));
}

// The cheapest catalogue type of `cloud` holding one such process (fewer vCPUs on a tie).
const InstanceType* Cheapest(const PriceCatalogue& catalogue, const std::string& cloud,
                             const ExecutorShape& shape) {
  const InstanceType* best = nullptr;
  for (const InstanceType* type : catalogue.OfCloud(cloud)) {
    if (ExecutorsPerInstance(*type, shape) < 1) continue;
    if (best == nullptr || type->on_demand_per_hour < best->on_demand_per_hour ||
        (type->on_demand_per_hour == best->on_demand_per_hour && type->vcpus < best->vcpus)) {
      best = type;
    }
  }
  return best;
}

std::string Duration(int64_t ms) {
  const int64_t s = std::max<int64_t>(ms, 0) / 1000;
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
  return std::to_string(s / 3600) + " h " + std::to_string((s % 3600) / 60) + " min";
}

// How the run is priced: what every figure of the cost (the run's, the frontier's points, the
// spot advice) is priced with.
struct Pricing {
  Pricing(const PriceCatalogue& catalogue, const CostOptions& options)
      : catalogue(catalogue), options(options) {}
  // A process of `shape` on `type` (one of `per_instance` on it), per hour; flat rates price the
  // shape alone.
  double Hourly(const InstanceType* type, const ExecutorShape& shape, bool on_spot,
                int32_t per_instance) const {
    if (flat) {
      return shape.cores * options.price_per_core_hour +
             shape.memory_gib * options.price_per_gib_hour;
    }
    double price = type->on_demand_per_hour;
    if (on_spot) {
      if (type->spot_per_hour >= 0) {
        price = type->spot_per_hour;
      } else if (spot_terms != nullptr) {
        price *= 1 - (spot_terms->discount_low + spot_terms->discount_high) / 2;
      }
    }
    return price / std::max(per_instance, 1);
  }

  const PriceCatalogue& catalogue;
  const CostOptions& options;
  bool flat = false;
  bool databricks = false;
  bool local = false;
  const SpotTerms* spot_terms = nullptr;
  ExecutorShape driver_shape;
  const InstanceType* executor_type = nullptr;
  const InstanceType* driver_type = nullptr;
  double driver_hourly = 0;
  double dbu_rate = -1;
};

// The executors' count, lifetimes and shape; returns the ended tasks' time summed.
int64_t DescribeExecutors(const model::ApplicationModel& model, const Settings* settings,
                          RunCost& out) {
  std::map<int32_t, int32_t> cores_seen;  // cores -> executors
  int64_t task_ms = 0;
  for (const model::TaskAttempt& task : model.tasks) {
    if (task.ended()) task_ms += std::max<int64_t>(task.duration_ms(), 0);
  }
  for (const model::Executor& e : model.executors) {
    if (e.is_driver()) continue;
    ++out.executors;
    if (e.total_cores > 0) ++cores_seen[e.total_cores];
    const int64_t begin =
        e.added_time_ms >= 0 ? std::max(e.added_time_ms, model.start_time_ms) : model.start_time_ms;
    int64_t end = e.removed_time_ms >= 0 ? e.removed_time_ms : model.end_time_ms;
    end = std::clamp(end, begin, std::max(begin, model.end_time_ms));
    out.executor_hours += static_cast<double>(end - begin) / kMsPerHour;
  }
  out.max_concurrent_executors = static_cast<int32_t>(model.max_concurrent_executors);
  out.executor_shape.memory_gib = ProcessMemoryGiB(model, "executor", settings);
  int32_t common_cores = 0, most = 0;
  for (const auto& [cores, count] : cores_seen) {
    if (count > most) common_cores = cores, most = count;
  }
  out.executor_shape.cores =
      common_cores > 0
          ? common_cores
          : std::max(1, static_cast<int>(std::strtol(
                            Property(model, "spark.executor.cores", "1").c_str(), nullptr, 10)));
  out.executor_shape.cores = std::clamp(out.executor_shape.cores, 1, 4096);
  return task_ms;
}

ExecutorShape DriverShape(const model::ApplicationModel& model, const Settings* settings,
                          bool local) {
  ExecutorShape driver_shape;
  driver_shape.memory_gib = ProcessMemoryGiB(model, "driver", settings);
  driver_shape.cores =
      std::clamp(static_cast<int>(
                     std::strtol(Property(model, "spark.driver.cores", "1").c_str(), nullptr, 10)),
                 1, 4096);
  if (local) {
    for (const model::Executor& e : model.executors) {
      if (e.is_driver() && e.total_cores > 0) driver_shape.cores = std::min(e.total_cores, 4096);
    }
  }
  return driver_shape;
}

// The instance type of a process of `shape`: `given`, else the one the Databricks cluster tag
// `tag` names, else the cheapest that fits. nullptr with `out.reason` set when the given one is
// not in the catalogue; nullptr alone when none fits.
const InstanceType* PickInstanceType(const model::ApplicationModel& model,
                                     const PriceCatalogue& catalogue, const std::string& given,
                                     const char* tag, const ExecutorShape& shape, RunCost& out,
                                     std::string& name, std::string& source) {
  if (!given.empty()) {
    if (const InstanceType* type = catalogue.Find(given)) {
      source = "given";
      name = type->name;
      return type;
    }
    out.reason = "instance type " + given + " is not in the price catalogue (" + catalogue.origin +
                 "): pass --prices with it, or flat rates";
    return nullptr;
  }
  const std::string tagged = Property(model, tag);
  if (!tagged.empty()) {
    if (const InstanceType* type = catalogue.Find(tagged)) {
      source = "Databricks cluster tags";
      name = type->name;
      return type;
    }
    out.assumptions.push_back("node type " + tagged +
                              " (Databricks cluster tags) is not in the price catalogue: "
                              "priced as the cheapest catalogue type it fits");
  }
  if (const InstanceType* type = Cheapest(catalogue, out.cloud, shape)) {
    source = "inferred: the cheapest " + out.cloud + " type with " + std::to_string(shape.cores) +
             " vCPUs and " + Fixed(shape.memory_gib, 1) + " GiB";
    name = type->name;
    return type;
  }
  return nullptr;
}

// The executors' and the driver's instance types, and the region of their prices; false with
// `out.reason` set when they cannot be priced.
bool PickInstanceTypes(const model::ApplicationModel& model, Pricing& pricing, RunCost& out) {
  const CostOptions& options = pricing.options;
  const PriceCatalogue& catalogue = pricing.catalogue;
  pricing.executor_type = PickInstanceType(
      model, catalogue, options.instance_type, "spark.databricks.clusterUsageTags.clusterNodeType",
      out.executor_shape, out, out.executor_instance, out.executor_instance_source);
  if (!out.reason.empty()) return false;
  pricing.driver_type =
      PickInstanceType(model, catalogue, options.driver_instance_type,
                       "spark.databricks.clusterUsageTags.driverNodeType", pricing.driver_shape,
                       out, out.driver_instance, out.driver_instance_source);
  if (!out.reason.empty()) return false;
  if (pricing.driver_type == nullptr || (pricing.executor_type == nullptr && out.executors > 0)) {
    out.reason = "no " + out.cloud + " instance type in the price catalogue (" + catalogue.origin +
                 ") fits the executors or the driver";
    return false;
  }
  out.region = pricing.driver_type->region;
  const std::string run_region =
      Property(model, "spark.databricks.clusterUsageTags.region",
               Property(model, "spark.databricks.clusterUsageTags.dataPlaneRegion"));
  if (!run_region.empty() && run_region != out.region) {
    out.assumptions.push_back("the run was in " + run_region + "; the prices are " + out.region +
                              "'s (pass --prices for another region)");
  }
  return true;
}

// Databricks DBUs: the executors' instance-hours and the driver's, at the node type's rate.
void PriceDbus(Pricing& pricing, double wall_hours, RunCost& out) {
  const CostOptions& options = pricing.options;
  double& dbu_rate = pricing.dbu_rate;
  dbu_rate = options.dbus_per_instance_hour;
  if (dbu_rate < 0 && pricing.executor_type != nullptr) {
    dbu_rate = pricing.executor_type->dbu_per_hour;
  }
  if (pricing.databricks && options.dbu_price >= 0) {
    if (dbu_rate >= 0) {
      out.dbus = (out.executor_hours / out.executors_per_instance + wall_hours) * dbu_rate;
      out.dbu_cost = out.dbus * options.dbu_price;
    } else {
      out.assumptions.push_back(
          "DBUs not priced: no DBU rate for the node type (pass "
          "--dbus-per-instance-hour)");
    }
  }
}

// The executors' lifetimes and the driver's wall time priced per hour, with DBUs.
void PriceLifetimes(Pricing& pricing, RunCost& out) {
  const CostOptions& options = pricing.options;
  const InstanceType* executor_type = pricing.executor_type;
  const ExecutorShape& driver_shape = pricing.driver_shape;
  if (executor_type != nullptr) {
    out.executors_per_instance =
        pricing.databricks ? 1
                           : std::max(1, ExecutorsPerInstance(*executor_type, out.executor_shape));
  }
  const double executor_hourly = executor_type != nullptr || pricing.flat
                                     ? pricing.Hourly(executor_type, out.executor_shape,
                                                      options.spot, out.executors_per_instance)
                                     : 0;
  pricing.driver_hourly =
      pricing.Hourly(pricing.driver_type, driver_shape, false,
                     pricing.databricks || pricing.flat
                         ? 1
                         : std::max(1, ExecutorsPerInstance(*pricing.driver_type, driver_shape)));
  const double wall_hours = static_cast<double>(out.wall_ms) / kMsPerHour;
  out.executor_cost = out.executor_hours * executor_hourly;
  out.driver_cost = wall_hours * pricing.driver_hourly;
  PriceDbus(pricing, wall_hours, out);
  out.total = out.executor_cost + out.driver_cost + out.dbu_cost;
}

// How the lifetimes were priced and the cluster priced, in words; the run's cost available.
void DescribeMethod(const Pricing& pricing, RunCost& out) {
  const CostOptions& options = pricing.options;
  if (pricing.flat) {
    out.method = "flat rates: " + Money(options.price_per_core_hour, out.currency) +
                 " per core-hour + " + Money(options.price_per_gib_hour, out.currency) +
                 " per GiB-hour of each executor's and the driver's lifetime";
    out.current_cluster = std::to_string(std::max(out.max_concurrent_executors, 0)) +
                          " executors of " + std::to_string(out.executor_shape.cores) + " cores, " +
                          Fixed(out.executor_shape.memory_gib, 1) + " GiB";
  } else {
    out.method = pricing.databricks
                     ? "each executor holds one worker node for its lifetime (Databricks)"
                 : out.executors_per_instance == 1
                     ? "each executor holds one instance for its lifetime"
                     : "each executor holds 1/" + std::to_string(out.executors_per_instance) +
                           " of an instance for its lifetime";
    out.method += std::string(options.spot ? ", executors at spot prices" : ", on-demand") +
                  "; the driver holds its instance share for the whole run";
    if (out.executors == 0) {
      out.method =
          "no executors besides the driver: it holds its instance share for the whole "
          "run, on-demand";
    }
    const int32_t instances =
        (std::max(out.max_concurrent_executors, 0) + out.executors_per_instance - 1) /
        out.executors_per_instance;
    out.current_cluster =
        (pricing.executor_type != nullptr && out.executors > 0
             ? std::to_string(instances) + " x " + pricing.executor_type->name + " (" +
                   std::to_string(out.max_concurrent_executors) + " executors of " +
                   std::to_string(out.executor_shape.cores) + " cores, " +
                   Fixed(out.executor_shape.memory_gib, 1) + " GiB) + "
             : std::string()) +
        pricing.driver_type->name + " driver" +
        (pricing.local ? " (local mode, " + std::to_string(pricing.driver_shape.cores) + " cores)"
                       : "");
  }
  if (out.executors == 0) {
    out.executor_instance.clear();
    out.executor_instance_source.clear();
    out.executors_per_instance = 1;
  }
  out.available = true;
  out.assumptions.push_back(
      "executor memory = spark.executor.memory + overhead (+ off-heap, PySpark memory): " +
      Fixed(out.executor_shape.memory_gib, 1) + " GiB");
  if (pricing.local) out.assumptions.push_back("local mode: the driver runs every task");
}

// What the frontier's points are chosen from.
struct FrontierPlan {
  double per_core_memory = 0;  // GiB per core of the run's executors
  // Tasks the run fitted per core: above 1 where executors ran more tasks at once than their
  // cores (Databricks oversubscribes; timestamps overlap). Other types keep the same ratio.
  double oversubscribed = 1;
  double heap_per_core_mb = 0;
  int64_t slots_now = 0;  // the run's peak executors x cores
  std::vector<const InstanceType*> candidates;
  std::vector<double> multipliers;                  // of slots_now
  std::map<std::pair<int32_t, int32_t>, int> runs;  // (executors, vCPUs) to simulate
};

// Executors of `type` for `multiplier` x the run's slots.
int32_t ExecutorCount(double multiplier, int64_t slots_now, const InstanceType& type) {
  return static_cast<int32_t>(std::clamp<double>(
      std::round(multiplier * static_cast<double>(slots_now) / type.vcpus), 1, 10000));
}

// The candidate types (at least the run's memory per vCPU) and counts to simulate, fewer
// multipliers when the points would exceed `budget`.
FrontierPlan PlanFrontier(const model::ApplicationModel& model, const Pricing& pricing,
                          const whatif::Prediction& base, int64_t budget, RunCost& out) {
  FrontierPlan plan;
  double task_cpus = 1;
  if (auto profile = model.resource_profiles.find(0);
      profile != model.resource_profiles.end() && profile->second.task_cpus >= 1) {
    task_cpus = profile->second.task_cpus;
  }
  plan.per_core_memory = out.executor_shape.memory_gib / out.executor_shape.cores;
  if (out.executor_hours > 0) {
    plan.oversubscribed = std::clamp(
        base.actual_core_hours * task_cpus / (out.executor_hours * out.executor_shape.cores), 1.0,
        4.0);
    if (plan.oversubscribed < 1.05) plan.oversubscribed = 1;
  }
  if (plan.oversubscribed > 1) {
    out.assumptions.push_back("the run's executors held " + Fixed(plan.oversubscribed, 2) +
                              " tasks per core at once; the frontier's types keep that ratio");
  }
  plan.heap_per_core_mb =
      static_cast<double>(SizeMiB(Property(model, "spark.executor.memory"), 1024)) /
      out.executor_shape.cores;
  plan.slots_now =
      static_cast<int64_t>(std::max(out.max_concurrent_executors, 1)) * out.executor_shape.cores;
  for (const InstanceType* type : pricing.catalogue.OfCloud(out.cloud)) {
    if (type->memory_gib / type->vcpus >= 0.9 * plan.per_core_memory && type->vcpus >= task_cpus) {
      plan.candidates.push_back(type);
    }
  }
  auto runs_for = [&](const std::vector<double>& multipliers) {
    std::map<std::pair<int32_t, int32_t>, int> runs;
    for (const InstanceType* type : plan.candidates) {
      for (double m : multipliers) runs[{ExecutorCount(m, plan.slots_now, *type), type->vcpus}] = 0;
    }
    return runs;
  };
  plan.multipliers = {0.25, 0.5, 0.75, 1, 1.5, 2, 3};
  plan.runs = runs_for(plan.multipliers);
  if (static_cast<int64_t>(plan.runs.size()) + 1 > budget) {
    plan.multipliers = {0.5, 1, 2};
    plan.runs = runs_for(plan.multipliers);
  }
  return plan;
}

// Each planned (executors, vCPUs) simulated, on all cores, by key.
std::map<std::pair<int32_t, int32_t>, whatif::Prediction> SimulatePoints(
    const whatif::Simulator& simulator, const FrontierPlan& plan, int32_t run_cores, int threads) {
  std::vector<std::pair<std::pair<int32_t, int32_t>, whatif::Scenario>> points;
  for (auto& [key, unused] : plan.runs) {
    whatif::Scenario scenario;
    scenario.executors = key.first;
    scenario.cores_per_executor =
        key.second == run_cores
            ? -1
            : static_cast<int32_t>(std::lround(key.second * plan.oversubscribed));
    // Each task keeps the heap it had: the executor's heap grows with its cores (the
    // candidate types have at least the run's memory per vCPU).
    if (scenario.cores_per_executor > 0 && plan.heap_per_core_mb > 0) {
      scenario.executor_memory_mb =
          static_cast<int64_t>(std::min(plan.heap_per_core_mb * scenario.cores_per_executor, 1e9));
    }
    points.emplace_back(key, scenario);
  }
  // The points are independent replays: simulated on all cores, kept in key order. Handed
  // out by instance size, then count: the points of one size run one after another and
  // share their tasks' memory rescaled for that size (the simulator keeps the last one).
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return points[a].first.second < points[b].first.second;
  });
  std::vector<whatif::Prediction> simulated(points.size());
  ParallelFor(points.size(), ThreadsOrAvailable(threads),
              [&](size_t i) { simulated[order[i]] = simulator.Simulate(points[order[i]].second); });
  std::map<std::pair<int32_t, int32_t>, whatif::Prediction> predicted;
  for (size_t i = 0; i < points.size(); ++i) {
    predicted.emplace(points[i].first, std::move(simulated[i]));
  }
  return predicted;
}

// A point's cost: its executors' hours on `type` (`per_instance` to an instance), the driver
// for its wall time, DBUs when priced.
double PointCost(const Pricing& pricing, const InstanceType& type, double executor_hours,
                 int32_t per_instance, int64_t wall_ms) {
  const CostOptions& options = pricing.options;
  const double hours = static_cast<double>(wall_ms) / kMsPerHour;
  double cost = executor_hours * pricing.Hourly(&type, {}, false, per_instance) +
                hours * pricing.driver_hourly;
  if (pricing.databricks && options.dbu_price >= 0 && pricing.dbu_rate >= 0) {
    const double rate = type.dbu_per_hour >= 0 && options.dbus_per_instance_hour < 0
                            ? type.dbu_per_hour
                            : pricing.dbu_rate;
    cost += (executor_hours / per_instance + hours) * rate * options.dbu_price;
  }
  return cost;
}

// Executor-hours of a point: the run's own, scaled by the predicted wall time and the
// executor count (executors added by a change arrive and stay like the run's last one).
double PointExecutorHours(const RunCost& out, const whatif::Prediction& p, int32_t count) {
  if (p.actual_wall_ms <= 0 || p.actual_executors <= 0) return 0.0;
  return out.executor_hours * static_cast<double>(p.predicted_wall_ms) /
         static_cast<double>(p.actual_wall_ms) * count / p.actual_executors;
}

// The run's own cluster as simulated, then each candidate type at each planned count.
void AddPoints(const Pricing& pricing, const FrontierPlan& plan, const whatif::Prediction& base,
               const std::map<std::pair<int32_t, int32_t>, whatif::Prediction>& predicted,
               RunCost& out) {
  FrontierPoint current;
  current.instance = pricing.executor_type->name;
  current.count = base.actual_executors;
  current.cores_per_executor = out.executor_shape.cores;
  current.predicted_wall_ms = base.baseline_wall_ms;
  whatif::Prediction as_run = base;
  as_run.predicted_wall_ms = base.baseline_wall_ms;
  current.cost = PointCost(pricing, *pricing.executor_type,
                           PointExecutorHours(out, as_run, base.actual_executors),
                           out.executors_per_instance, base.baseline_wall_ms);
  current.current = true;
  out.points.push_back(current);
  for (const InstanceType* type : plan.candidates) {
    std::vector<int32_t> counts;
    for (double m : plan.multipliers) counts.push_back(ExecutorCount(m, plan.slots_now, *type));
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    for (int32_t count : counts) {
      const whatif::Prediction& p = predicted.at({count, type->vcpus});
      FrontierPoint point;
      point.instance = type->name;
      point.count = count;
      point.cores_per_executor = type->vcpus;
      point.predicted_wall_ms = p.predicted_wall_ms;
      point.cost =
          PointCost(pricing, *type, PointExecutorHours(out, p, count), 1, p.predicted_wall_ms);
      out.points.push_back(point);
    }
  }
}

// The points fastest first; those no faster point undercuts on cost are the frontier.
void MarkFrontier(RunCost& out) {
  std::stable_sort(out.points.begin(), out.points.end(),
                   [](const FrontierPoint& a, const FrontierPoint& b) {
                     return a.predicted_wall_ms != b.predicted_wall_ms
                                ? a.predicted_wall_ms < b.predicted_wall_ms
                                : a.cost < b.cost;
                   });
  double cheapest = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < out.points.size(); ++i) {
    FrontierPoint& point = out.points[i];
    if (point.cost < cheapest) {
      point.on_frontier = true;
      cheapest = point.cost;
    }
    if (point.current) out.current = static_cast<int32_t>(i);
  }
}

// The cheapest point within `max_slowdown` of the current cluster, and what it saves.
void Recommend(double max_slowdown, RunCost& out) {
  const FrontierPoint& now = out.points[out.current];
  const double limit = static_cast<double>(now.predicted_wall_ms) * (1 + max_slowdown);
  out.recommended = out.current;
  for (size_t i = 0; i < out.points.size(); ++i) {
    const FrontierPoint& point = out.points[i];
    if (static_cast<double>(point.predicted_wall_ms) <= limit &&
        point.cost < out.points[out.recommended].cost) {
      out.recommended = static_cast<int32_t>(i);
    }
  }
  out.saving_fraction = now.cost > 0 ? 1 - out.points[out.recommended].cost / now.cost : 0;
}

// The time/cost frontier over the cloud's types x counts, each point simulated; a note instead
// when the simulator does not reproduce the run, the points exceed the budget or no type fits.
void AddFrontier(const model::ApplicationModel& model, const Pricing& pricing,
                 const whatif::LazySimulator* shared_simulator, RunCost& out) {
  const CostOptions& options = pricing.options;
  const int64_t tasks = static_cast<int64_t>(model.tasks.size());
  const int64_t budget = std::max<int64_t>(options.max_simulated_tasks / tasks, 0);
  // Prepared once: every point of the frontier replays against the same baseline.
  std::unique_ptr<whatif::LazySimulator> own_simulator;
  if (shared_simulator == nullptr) {
    own_simulator = std::make_unique<whatif::LazySimulator>(model);
    shared_simulator = own_simulator.get();
  }
  const whatif::Simulator& simulator = shared_simulator->Get();
  const whatif::Prediction base = simulator.Simulate(whatif::Scenario{});
  out.self_prediction_error = base.self_prediction_error;
  const FrontierPlan plan = PlanFrontier(model, pricing, base, budget, out);
  if (base.self_prediction_error > 0.25) {
    out.frontier_note =
        "no frontier: the simulator does not reproduce this run (self-"
        "prediction error " +
        Fixed(100 * base.self_prediction_error, 0) + "%)";
    return;
  }
  if (static_cast<int64_t>(plan.runs.size()) + 1 > budget) {
    out.frontier_note = "no frontier: " + std::to_string(tasks) +
                        " tasks x the points to simulate exceed the budget (sparkprof whatif "
                        "answers single settings)";
    return;
  }
  if (plan.candidates.empty()) {
    out.frontier_note = "no frontier: no " + out.cloud + " type in the catalogue has " +
                        Fixed(plan.per_core_memory, 1) + " GiB per vCPU";
    return;
  }
  AddPoints(pricing, plan, base,
            SimulatePoints(simulator, plan, out.executor_shape.cores, options.threads), out);
  MarkFrontier(out);
  Recommend(options.max_slowdown, out);
  out.assumptions.push_back(
      "frontier: one executor per instance using all its vCPUs; tasks take as long as in "
      "this run (same per-core speed on every type); types with less memory per vCPU than "
      "this run's executors are left out; a point's executor-hours are the run's, scaled by "
      "its executor count and predicted time; compared like for like with the current "
      "cluster simulated (self-prediction error " +
      Fixed(100 * base.self_prediction_error, 1) + "%)");
}

// Spot capacity for the executors, on the basis of the recommended cluster when there is one.
void AdviseSpot(const Pricing& pricing, RunCost& out) {
  const SpotTerms* spot_terms = pricing.spot_terms;
  SpotAdvice& spot = out.spot;
  spot.available = true;
  spot.discount_low = spot_terms->discount_low;
  spot.discount_high = spot_terms->discount_high;
  spot.interruption_notice_s = spot_terms->interruption_notice_s;
  spot.source = spot_terms->source;
  double executors_part = out.executor_cost + out.dbu_cost;
  double rest = out.driver_cost;
  std::string basis = "this run";
  if (out.recommended >= 0 && out.recommended != out.current) {
    const FrontierPoint& rec = out.points[out.recommended];
    const double driver_part =
        static_cast<double>(rec.predicted_wall_ms) / kMsPerHour * pricing.driver_hourly;
    executors_part = std::max(rec.cost - driver_part, 0.0);
    rest = driver_part;
    basis = "the recommended cluster";
  }
  spot.cost_low = executors_part * (1 - spot.discount_high) + rest;
  spot.cost_high = executors_part * (1 - spot.discount_low) + rest;
  spot.advice =
      "Executors on spot capacity would cost " + Money(spot.cost_low, out.currency) + "-" +
      Money(spot.cost_high, out.currency) + " per run for " + basis + " (" +
      Fixed(100 * spot.discount_low, 0) + "-" + Fixed(100 * spot.discount_high, 0) +
      "% off on-demand on " + out.cloud + "). An interruption gives " +
      std::to_string(spot.interruption_notice_s) +
      " s notice; Spark then re-runs the lost executor's running tasks and any shuffle output "
      "it held (on this run about " +
      Duration(spot.work_per_executor_ms) +
      " of task time per executor). Keep the driver on on-demand capacity, and on Spark 3.1+ "
      "set spark.decommission.enabled=true and "
      "spark.storage.decommission.shuffleBlocks.enabled=true so executors hand over their "
      "shuffle blocks on the notice.";
  if (out.wall_ms > 2 * 3'600'000) {
    spot.advice += " This run takes " + Duration(out.wall_ms) +
                   ": the longer a run, the likelier an interruption; use an on-demand base "
                   "with spot executors on top.";
  }
}

}  // namespace

std::string Money(double amount, const std::string& currency) {
  if (!std::isfinite(amount)) amount = 0;
  const double magnitude = std::fabs(amount);
  const int digits = magnitude >= 1 || magnitude == 0 ? 2 : magnitude >= 0.01 ? 3 : 4;
  const std::string number = Fixed(amount, digits);
  if (currency == "USD") return amount < 0 ? "-$" + number.substr(1) : "$" + number;
  return number + " " + currency;
}

ScenarioCost PriceScenario(const RunCost& run, const whatif::Prediction& p) {
  ScenarioCost out;
  if (!run.available || p.actual_wall_ms <= 0) return out;
  const double executors = run.executor_cost + run.dbu_cost;
  auto price = [&](double core_hours, int64_t wall_ms) {
    const double scale = p.actual_core_hours > 0 ? core_hours / p.actual_core_hours : 1;
    return executors * scale +
           run.driver_cost * static_cast<double>(wall_ms) / static_cast<double>(p.actual_wall_ms);
  };
  out.actual = run.total;
  out.baseline = price(p.baseline_core_hours, p.baseline_wall_ms);
  out.predicted = price(p.predicted_core_hours, p.predicted_wall_ms);
  return out;
}

namespace {

// The run priced as ComputeCost does, its JVMs asking for memory with `settings` (nullptr: as the
// run had it) applied.
RunCost ComputeCostWith(const model::ApplicationModel& model, const CostOptions& options,
                        const whatif::LazySimulator* shared_simulator, const Settings* settings) {
  RunCost out;
  const PriceCatalogue& catalogue =
      options.catalogue != nullptr ? *options.catalogue : BuiltinCatalogue();
  out.catalogue = catalogue.origin;
  out.currency = catalogue.currency;
  out.max_slowdown = options.max_slowdown;
  out.wall_ms = model.duration_ms();
  if (out.wall_ms <= 0) {
    out.reason = "the log has no application duration";
    return out;
  }
  Pricing pricing(catalogue, options);
  pricing.flat = options.price_per_core_hour >= 0 && options.price_per_gib_hour >= 0;
  pricing.databricks = model::PlatformOf(model) == model::Platform::kDatabricks;
  std::tie(out.cloud, out.cloud_source) = DetectCloud(model, options);
  // local[N] only: local-cluster[...] runs its tasks in executor JVMs.
  pricing.local = model::ClusterManagerOf(model) == model::ClusterManager::kLocal;

  const int64_t task_ms = DescribeExecutors(model, settings, out);
  pricing.driver_shape = DriverShape(model, settings, pricing.local);
  if (!pricing.flat && !PickInstanceTypes(model, pricing, out)) return out;
  pricing.spot_terms = catalogue.SpotOf(out.cloud);
  PriceLifetimes(pricing, out);
  DescribeMethod(pricing, out);

  // Spot advice, on the basis of the recommended cluster when there is one (set below).
  out.spot.work_per_executor_ms = out.executors > 0 ? task_ms / out.executors : 0;
  if (!options.frontier || pricing.flat || pricing.executor_type == nullptr || out.executors == 0 ||
      model.tasks.empty()) {
    if (options.frontier && !model.tasks.empty()) {
      out.frontier_note = pricing.flat
                              ? "no frontier with flat rates (no instance types to compare)"
                              : "no frontier: no executors besides the driver";
    }
  } else {
    AddFrontier(model, pricing, shared_simulator, out);
  }
  if (pricing.spot_terms != nullptr && !pricing.flat && out.executors > 0 && !options.spot) {
    AdviseSpot(pricing, out);
  }
  return out;
}

}  // namespace

RunCost ComputeCost(const model::ApplicationModel& model, const CostOptions& options,
                    const whatif::LazySimulator* simulator) {
  return ComputeCostWith(model, options, simulator, nullptr);
}

SettingsCost PriceSettings(const model::ApplicationModel& model, const CostOptions& options,
                           const Settings& settings) {
  SettingsCost out;
  CostOptions quick = options;
  quick.frontier = false;
  const RunCost before = ComputeCostWith(model, quick, nullptr, nullptr);
  if (!before.available) {
    out.reason = before.reason;
    return out;
  }
  const RunCost after = ComputeCostWith(model, quick, nullptr, &settings);
  if (!after.available) {
    out.reason = after.reason;
    return out;
  }
  // A machine the run named (given, or in Databricks' cluster tags) stays: the process must fit.
  const PriceCatalogue& catalogue =
      options.catalogue != nullptr ? *options.catalogue : BuiltinCatalogue();
  auto does_not_fit = [&](const std::string& source, const std::string& name,
                          const ExecutorShape& shape, const char* who) -> bool {
    if (source.starts_with("inferred") || name.empty()) return false;
    const InstanceType* type = catalogue.Find(name);
    if (type == nullptr || ExecutorsPerInstance(*type, shape) >= 1) return false;
    out.reason = std::string(who) + " asking " + Fixed(shape.memory_gib, 1) +
                 " GiB does not fit on " + name + " (" + Fixed(type->memory_gib, 1) + " GiB, " +
                 source + "): a larger instance type is needed";
    return true;
  };
  if ((after.executors > 0 && does_not_fit(after.executor_instance_source, after.executor_instance,
                                           after.executor_shape, "an executor")) ||
      does_not_fit(after.driver_instance_source, after.driver_instance,
                   DriverShape(model, &settings,
                               model::ClusterManagerOf(model) == model::ClusterManager::kLocal),
                   "the driver")) {
    return out;
  }
  out.available = true;
  out.currency = before.currency;
  out.before = before.total;
  out.after = after.total;
  out.executor_memory_gib_before = before.executor_shape.memory_gib;
  out.executor_memory_gib_after = after.executor_shape.memory_gib;
  out.executor_instance_before = before.executor_instance;
  out.executor_instance_after = after.executor_instance;
  out.executors_per_instance_before = before.executors_per_instance;
  out.executors_per_instance_after = after.executors_per_instance;
  out.method = before.method;
  return out;
}

}  // namespace sparkprof::cost
