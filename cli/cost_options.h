// The pricing flags `analyze` and `whatif` share (docs/cost.md): a price catalogue file, instance
// types, the cloud, flat rates, spot, Databricks DBUs and the right-sizing slowdown.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "analyzer/cost/cost.h"

namespace sparkprof::cli {

struct CostFlags {
  std::string prices;  // a sparkprof.prices/v1 file; "" = the built-in catalogue
  cost::CostOptions options;
  bool no_right_sizing = false;
  cost::PriceCatalogue catalogue;  // loaded from `prices`
};

void AddCostOptions(CLI::App* command, CostFlags& flags);
// Loads the catalogue and checks the flags together; false with `error` naming the problem.
bool ResolveCostOptions(CostFlags& flags, std::string& error);

}  // namespace sparkprof::cli
