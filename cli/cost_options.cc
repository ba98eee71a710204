#include "cli/cost_options.h"

namespace sparkprof::cli {

void AddCostOptions(CLI::App* command, CostFlags& flags) {
  cost::CostOptions& o = flags.options;
  const char* group = "Cost (docs/cost.md)";
  command
      ->add_option("--prices", flags.prices,
                   "price catalogue (sparkprof.prices/v1 JSON) instead of the built-in one")
      ->group(group);
  command
      ->add_option("--instance-type", o.instance_type,
                   "the executors' instance type (default: named in the log, else the "
                   "cheapest catalogue type the executors fit)")
      ->group(group);
  command
      ->add_option("--driver-instance-type", o.driver_instance_type, "the driver's instance type")
      ->group(group);
  command->add_option("--cloud", o.cloud, "aws, gcp or azure (default: seen in the log, else aws)")
      ->check(CLI::IsMember({"aws", "gcp", "azure"}))
      ->group(group);
  command
      ->add_option("--price-per-core-hour", o.price_per_core_hour,
                   "flat rate per core-hour (with --price-per-gib-hour; replaces instances)")
      ->check(CLI::Range(0.0, 1e6))
      ->group(group);
  command
      ->add_option("--price-per-gib-hour", o.price_per_gib_hour,
                   "flat rate per GiB-hour of executor and driver memory")
      ->check(CLI::Range(0.0, 1e6))
      ->group(group);
  command->add_flag("--spot", o.spot, "the run's executors were on spot / preemptible capacity")
      ->group(group);
  command
      ->add_option("--dbu-price", o.dbu_price, "price per Databricks DBU (adds DBUs to the cost)")
      ->check(CLI::Range(0.0, 1e6))
      ->group(group);
  command
      ->add_option("--dbus-per-instance-hour", o.dbus_per_instance_hour,
                   "DBUs one node bills per hour (overrides the catalogue)")
      ->check(CLI::Range(0.0, 1e4))
      ->group(group);
  command
      ->add_option("--max-slowdown", o.max_slowdown,
                   "right-sizing: the cheapest cluster predicted within this slowdown "
                   "(default 0.10 = 10%)")
      ->check(CLI::Range(0.0, 10.0))
      ->group(group);
  command
      ->add_flag("--no-right-sizing", flags.no_right_sizing,
                 "price the run but do not simulate other clusters (faster on huge logs)")
      ->group(group);
}

bool ResolveCostOptions(CostFlags& flags, std::string& error) {
  cost::CostOptions& o = flags.options;
  if ((o.price_per_core_hour >= 0) != (o.price_per_gib_hour >= 0)) {
    error = "--price-per-core-hour and --price-per-gib-hour go together";
    return false;
  }
  o.frontier = !flags.no_right_sizing;
  if (flags.prices.empty()) return true;
  if (!cost::LoadCatalogue(flags.prices, flags.catalogue, error)) return false;
  o.catalogue = &flags.catalogue;
  return true;
}

}  // namespace sparkprof::cli
