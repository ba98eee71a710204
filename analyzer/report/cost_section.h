// The report's "Cost" section in words, shared by the text, Markdown and HTML renderers (the JSON
// report writes cost::RunCost as data).
#pragma once

#include <string>
#include <vector>

#include "analyzer/cost/cost.h"

namespace sparkprof::report {

struct CostRow {          // one frontier point, for a table
  std::string cluster;    // "8 x r5.xlarge (4 cores each)"
  std::string predicted;  // "11 min 40 s"
  std::string cost;       // "$8.00"
  std::string note;       // "current (simulated)", "recommended", ""
};

struct CostSection {
  std::string headline;           // what the run cost and how it was priced
  std::string recommendation;     // the cheaper cluster, or why there is none ("" when no frontier)
  std::string spot;               // spot advice ("" when none)
  std::vector<CostRow> frontier;  // the time/cost frontier, fastest first
  std::vector<std::string> notes;  // assumptions, the catalogue, the frontier note
};

CostSection DescribeCost(const cost::RunCost& c);

}  // namespace sparkprof::report
