#include "analyzer/cost/cost.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <utility>

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

// Memory one JVM asks its host for: heap + overhead (+ off-heap, + PySpark), in GiB.
double ProcessMemoryGiB(const model::ApplicationModel& model, const std::string& role) {
  const int64_t heap = SizeMiB(Property(model, "spark." + role + ".memory"), 1024);
  int64_t overhead = SizeMiB(Property(model, "spark." + role + ".memoryOverhead"), -1);
  if (overhead < 0) {
    double factor = std::strtod(
        Property(model, "spark." + role + ".memoryOverheadFactor", "0.1").c_str(), nullptr);
    if (!(factor >= 0 && factor <= 10)) factor = 0.1;
    overhead = std::max<int64_t>(384, static_cast<int64_t>(factor * static_cast<double>(heap)));
  }
  int64_t extra = 0;
  if (role == "executor") {
    if (Property(model, "spark.memory.offHeap.enabled") == "true") {
      extra += SizeMiB(Property(model, "spark.memory.offHeap.size"), 0, /*bytes_default=*/true);
    }
    extra += SizeMiB(Property(model, "spark.executor.pyspark.memory"), 0);
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

RunCost ComputeCost(const model::ApplicationModel& model, const CostOptions& options,
                    const whatif::LazySimulator* shared_simulator) {
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
  const bool flat = options.price_per_core_hour >= 0 && options.price_per_gib_hour >= 0;
  const bool databricks = model::PlatformOf(model) == model::Platform::kDatabricks;
  std::tie(out.cloud, out.cloud_source) = DetectCloud(model, options);
  // local[N] only: local-cluster[...] runs its tasks in executor JVMs.
  const bool local = model::ClusterManagerOf(model) == model::ClusterManager::kLocal;

  // Executors' shape and lifetimes.
  std::map<int32_t, int32_t> cores_seen;  // cores -> executors
  int64_t task_ms = 0;
  for (const model::TaskAttempt& task : model.tasks) {
    if (task.ended()) task_ms += std::max<int64_t>(task.duration_ms(), 0);
  }
  std::vector<std::pair<int64_t, int64_t>> lifetimes;
  for (const model::Executor& e : model.executors) {
    if (e.is_driver()) continue;
    ++out.executors;
    if (e.total_cores > 0) ++cores_seen[e.total_cores];
    const int64_t begin = e.added_time_ms >= 0 ? std::max(e.added_time_ms, model.start_time_ms)
                                                : model.start_time_ms;
    int64_t end = e.removed_time_ms >= 0 ? e.removed_time_ms : model.end_time_ms;
    end = std::clamp(end, begin, std::max(begin, model.end_time_ms));
    lifetimes.push_back({begin, end});
    out.executor_hours += static_cast<double>(end - begin) / kMsPerHour;
  }
  out.max_concurrent_executors = static_cast<int32_t>(model.max_concurrent_executors);
  out.executor_shape.memory_gib = ProcessMemoryGiB(model, "executor");
  int32_t common_cores = 0, most = 0;
  for (const auto& [cores, count] : cores_seen) {
    if (count > most) common_cores = cores, most = count;
  }
  out.executor_shape.cores =
      common_cores > 0
          ? common_cores
          : std::max(1, std::atoi(Property(model, "spark.executor.cores", "1").c_str()));
  out.executor_shape.cores = std::clamp(out.executor_shape.cores, 1, 4096);

  ExecutorShape driver_shape;
  driver_shape.memory_gib = ProcessMemoryGiB(model, "driver");
  driver_shape.cores =
      std::clamp(std::atoi(Property(model, "spark.driver.cores", "1").c_str()), 1, 4096);
  if (local) {
    for (const model::Executor& e : model.executors) {
      if (e.is_driver() && e.total_cores > 0) driver_shape.cores = std::min(e.total_cores, 4096);
    }
  }

  // Instance types.
  const InstanceType* executor_type = nullptr;
  const InstanceType* driver_type = nullptr;
  auto pick = [&](const std::string& given, const char* tag, const ExecutorShape& shape,
                  std::string& name, std::string& source) -> const InstanceType* {
    if (!given.empty()) {
      if (const InstanceType* type = catalogue.Find(given)) {
        source = "given";
        name = type->name;
        return type;
      }
      out.reason = "instance type " + given + " is not in the price catalogue (" +
                   catalogue.origin + "): pass --prices with it, or flat rates";
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
      source = "inferred: the cheapest " + out.cloud + " type with " +
               std::to_string(shape.cores) + " vCPUs and " + Fixed(shape.memory_gib, 1) +
               " GiB";
      name = type->name;
      return type;
    }
    return nullptr;
  };
  if (!flat) {
    executor_type = pick(options.instance_type, "spark.databricks.clusterUsageTags.clusterNodeType",
                         out.executor_shape, out.executor_instance, out.executor_instance_source);
    if (!out.reason.empty()) return out;
    driver_type =
        pick(options.driver_instance_type, "spark.databricks.clusterUsageTags.driverNodeType",
             driver_shape, out.driver_instance, out.driver_instance_source);
    if (!out.reason.empty()) return out;
    if (driver_type == nullptr || (executor_type == nullptr && out.executors > 0)) {
      out.reason = "no " + out.cloud + " instance type in the price catalogue (" +
                   catalogue.origin + ") fits the executors or the driver";
      return out;
    }
    out.region = driver_type->region;
    const std::string run_region =
        Property(model, "spark.databricks.clusterUsageTags.region",
                 Property(model, "spark.databricks.clusterUsageTags.dataPlaneRegion"));
    if (!run_region.empty() && run_region != out.region) {
      out.assumptions.push_back("the run was in " + run_region + "; the prices are " +
                                out.region + "'s (pass --prices for another region)");
    }
  }

  // Prices per executor-hour and driver-hour.
  const SpotTerms* spot_terms = catalogue.SpotOf(out.cloud);
  auto hourly = [&](const InstanceType* type, const ExecutorShape& shape, bool on_spot,
                    int32_t per_instance) {
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
  };
  if (executor_type != nullptr) {
    out.executors_per_instance =
        databricks ? 1 : std::max(1, ExecutorsPerInstance(*executor_type, out.executor_shape));
  }
  const double executor_hourly =
      executor_type != nullptr || flat
          ? hourly(executor_type, out.executor_shape, options.spot, out.executors_per_instance)
          : 0;
  const double driver_hourly = hourly(driver_type, driver_shape, false,
                                      databricks || flat ? 1
                                                         : std::max(1, ExecutorsPerInstance(
                                                                           *driver_type,
                                                                           driver_shape)));
  const double wall_hours = static_cast<double>(out.wall_ms) / kMsPerHour;
  out.executor_cost = out.executor_hours * executor_hourly;
  out.driver_cost = wall_hours * driver_hourly;

  // Databricks DBUs.
  double dbu_rate = options.dbus_per_instance_hour;
  if (dbu_rate < 0 && executor_type != nullptr) dbu_rate = executor_type->dbu_per_hour;
  if (databricks && options.dbu_price >= 0) {
    if (dbu_rate >= 0) {
      out.dbus = (out.executor_hours / out.executors_per_instance + wall_hours) * dbu_rate;
      out.dbu_cost = out.dbus * options.dbu_price;
    } else {
      out.assumptions.push_back("DBUs not priced: no DBU rate for the node type (pass "
                                "--dbus-per-instance-hour)");
    }
  }
  out.total = out.executor_cost + out.driver_cost + out.dbu_cost;

  if (flat) {
    out.method = "flat rates: " + Money(options.price_per_core_hour, out.currency) +
                 " per core-hour + " + Money(options.price_per_gib_hour, out.currency) +
                 " per GiB-hour of each executor's and the driver's lifetime";
    out.current_cluster = std::to_string(std::max(out.max_concurrent_executors, 0)) +
                          " executors of " + std::to_string(out.executor_shape.cores) +
                          " cores, " + Fixed(out.executor_shape.memory_gib, 1) + " GiB";
  } else {
    out.method = databricks ? "each executor holds one worker node for its lifetime (Databricks)"
                 : out.executors_per_instance == 1
                     ? "each executor holds one instance for its lifetime"
                     : "each executor holds 1/" + std::to_string(out.executors_per_instance) +
                           " of an instance for its lifetime";
    out.method += std::string(options.spot ? ", executors at spot prices" : ", on-demand") +
                  "; the driver holds its instance share for the whole run";
    if (out.executors == 0) {
      out.method = "no executors besides the driver: it holds its instance share for the whole "
                   "run, on-demand";
    }
    const int32_t instances =
        (std::max(out.max_concurrent_executors, 0) + out.executors_per_instance - 1) /
        out.executors_per_instance;
    out.current_cluster =
        (executor_type != nullptr && out.executors > 0
             ? std::to_string(instances) + " x " + executor_type->name + " (" +
                   std::to_string(out.max_concurrent_executors) + " executors of " +
                   std::to_string(out.executor_shape.cores) + " cores, " +
                   Fixed(out.executor_shape.memory_gib, 1) + " GiB) + "
             : std::string()) +
        driver_type->name + " driver" +
        (local ? " (local mode, " + std::to_string(driver_shape.cores) + " cores)" : "");
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
  if (local) out.assumptions.push_back("local mode: the driver runs every task");

  // Spot advice, on the basis of the recommended cluster when there is one (set below).
  out.spot.work_per_executor_ms = out.executors > 0 ? task_ms / out.executors : 0;

  // The frontier.
  if (!options.frontier || flat || executor_type == nullptr || out.executors == 0 ||
      model.tasks.empty()) {
    if (options.frontier && !model.tasks.empty()) {
      out.frontier_note = flat ? "no frontier with flat rates (no instance types to compare)"
                               : "no frontier: no executors besides the driver";
    }
  } else {
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
    double task_cpus = 1;
    if (auto profile = model.resource_profiles.find(0);
        profile != model.resource_profiles.end() && profile->second.task_cpus >= 1) {
      task_cpus = profile->second.task_cpus;
    }
    const double per_core_memory = out.executor_shape.memory_gib / out.executor_shape.cores;
    // Tasks the run fitted per core: above 1 where executors ran more tasks at once than their
    // cores (Databricks oversubscribes; timestamps overlap). Other types keep the same ratio.
    double oversubscribed = 1;
    if (out.executor_hours > 0) {
      oversubscribed = std::clamp(
          base.actual_core_hours * task_cpus / (out.executor_hours * out.executor_shape.cores), 1.0,
          4.0);
      if (oversubscribed < 1.05) oversubscribed = 1;
    }
    if (oversubscribed > 1) {
      out.assumptions.push_back("the run's executors held " + Fixed(oversubscribed, 2) +
                                " tasks per core at once; the frontier's types keep that ratio");
    }
    const double heap_per_core_mb =
        static_cast<double>(SizeMiB(Property(model, "spark.executor.memory"), 1024)) /
        out.executor_shape.cores;
    const int64_t slots_now =
        static_cast<int64_t>(std::max(out.max_concurrent_executors, 1)) * out.executor_shape.cores;
    std::vector<const InstanceType*> candidates;
    for (const InstanceType* type : catalogue.OfCloud(out.cloud)) {
      if (type->memory_gib / type->vcpus >= 0.9 * per_core_memory &&
          type->vcpus >= task_cpus) {
        candidates.push_back(type);
      }
    }
    std::vector<double> multipliers = {0.25, 0.5, 0.75, 1, 1.5, 2, 3};
    auto plan = [&](const std::vector<double>& ms) {
      std::map<std::pair<int32_t, int32_t>, int> runs;
      for (const InstanceType* type : candidates) {
        for (double m : ms) {
          const int32_t count = static_cast<int32_t>(std::clamp<double>(
              std::round(m * static_cast<double>(slots_now) / type->vcpus), 1, 10000));
          runs[{count, type->vcpus}] = 0;
        }
      }
      return runs;
    };
    auto runs = plan(multipliers);
    if (static_cast<int64_t>(runs.size()) + 1 > budget) {
      multipliers = {0.5, 1, 2};
      runs = plan(multipliers);
    }
    if (base.self_prediction_error > 0.25) {
      out.frontier_note = "no frontier: the simulator does not reproduce this run (self-"
                          "prediction error " + Fixed(100 * base.self_prediction_error, 0) + "%)";
    } else if (static_cast<int64_t>(runs.size()) + 1 > budget) {
      out.frontier_note = "no frontier: " + std::to_string(tasks) +
                          " tasks x the points to simulate exceed the budget (sparkprof whatif "
                          "answers single settings)";
    } else if (candidates.empty()) {
      out.frontier_note = "no frontier: no " + out.cloud + " type in the catalogue has " +
                          Fixed(per_core_memory, 1) + " GiB per vCPU";
    } else {
      std::vector<std::pair<std::pair<int32_t, int32_t>, whatif::Scenario>> points;
      for (auto& [key, unused] : runs) {
        whatif::Scenario scenario;
        scenario.executors = key.first;
        scenario.cores_per_executor =
            key.second == out.executor_shape.cores
                ? -1
                : static_cast<int32_t>(std::lround(key.second * oversubscribed));
        // Each task keeps the heap it had: the executor's heap grows with its cores (the
        // candidate types have at least the run's memory per vCPU).
        if (scenario.cores_per_executor > 0 && heap_per_core_mb > 0) {
          scenario.executor_memory_mb = static_cast<int64_t>(
              std::min(heap_per_core_mb * scenario.cores_per_executor, 1e9));
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
      ParallelFor(points.size(), ThreadsOrAvailable(options.threads), [&](size_t i) {
        simulated[order[i]] = simulator.Simulate(points[order[i]].second);
      });
      std::map<std::pair<int32_t, int32_t>, whatif::Prediction> predicted;
      for (size_t i = 0; i < points.size(); ++i) {
        predicted.emplace(points[i].first, std::move(simulated[i]));
      }
      auto point_cost = [&](const InstanceType& type, double executor_hours, int32_t per_instance,
                            int64_t wall_ms) {
        const double hours = static_cast<double>(wall_ms) / kMsPerHour;
        double cost =
            executor_hours * hourly(&type, {}, false, per_instance) + hours * driver_hourly;
        if (databricks && options.dbu_price >= 0 && dbu_rate >= 0) {
          const double rate = type.dbu_per_hour >= 0 && options.dbus_per_instance_hour < 0
                                  ? type.dbu_per_hour
                                  : dbu_rate;
          cost += (executor_hours / per_instance + hours) * rate * options.dbu_price;
        }
        return cost;
      };
      FrontierPoint current;
      current.instance = executor_type->name;
      current.count = base.actual_executors;
      current.cores_per_executor = out.executor_shape.cores;
      current.predicted_wall_ms = base.baseline_wall_ms;
      // Executor-hours of a point: the run's own, scaled by the predicted wall time and the
      // executor count (executors added by a change arrive and stay like the run's last one).
      auto executor_hours = [&](const whatif::Prediction& p, int32_t count) {
        if (p.actual_wall_ms <= 0 || p.actual_executors <= 0) return 0.0;
        return out.executor_hours * static_cast<double>(p.predicted_wall_ms) /
               static_cast<double>(p.actual_wall_ms) * count / p.actual_executors;
      };
      whatif::Prediction as_run = base;
      as_run.predicted_wall_ms = base.baseline_wall_ms;
      current.cost = point_cost(*executor_type, executor_hours(as_run, base.actual_executors),
                                out.executors_per_instance, base.baseline_wall_ms);
      current.current = true;
      out.points.push_back(current);
      for (const InstanceType* type : candidates) {
        std::vector<int32_t> counts;
        for (double m : multipliers) {
          counts.push_back(static_cast<int32_t>(std::clamp<double>(
              std::round(m * static_cast<double>(slots_now) / type->vcpus), 1, 10000)));
        }
        std::sort(counts.begin(), counts.end());
        counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
        for (int32_t count : counts) {
          const whatif::Prediction& p = predicted.at({count, type->vcpus});
          FrontierPoint point;
          point.instance = type->name;
          point.count = count;
          point.cores_per_executor = type->vcpus;
          point.predicted_wall_ms = p.predicted_wall_ms;
          point.cost = point_cost(*type, executor_hours(p, count), 1, p.predicted_wall_ms);
          out.points.push_back(point);
        }
      }
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
      const FrontierPoint& now = out.points[out.current];
      const double limit = static_cast<double>(now.predicted_wall_ms) * (1 + options.max_slowdown);
      out.recommended = out.current;
      for (size_t i = 0; i < out.points.size(); ++i) {
        const FrontierPoint& point = out.points[i];
        if (static_cast<double>(point.predicted_wall_ms) <= limit &&
            point.cost < out.points[out.recommended].cost) {
          out.recommended = static_cast<int32_t>(i);
        }
      }
      out.saving_fraction =
          now.cost > 0 ? 1 - out.points[out.recommended].cost / now.cost : 0;
      out.assumptions.push_back(
          "frontier: one executor per instance using all its vCPUs; tasks take as long as in "
          "this run (same per-core speed on every type); types with less memory per vCPU than "
          "this run's executors are left out; a point's executor-hours are the run's, scaled by "
          "its executor count and predicted time; compared like for like with the current "
          "cluster simulated (self-prediction error " +
          Fixed(100 * base.self_prediction_error, 1) + "%)");
    }
  }

  // Spot.
  if (spot_terms != nullptr && !flat && out.executors > 0 && !options.spot) {
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
          static_cast<double>(rec.predicted_wall_ms) / kMsPerHour * driver_hourly;
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
        "it held (on this run about " + Duration(spot.work_per_executor_ms) +
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
  return out;
}

}  // namespace sparkprof::cost
