#include "analyzer/report/cost_section.h"

#include <cstdio>

#include "common/human_format.h"

namespace sparkprof::report {
namespace {

std::string Cluster(const cost::FrontierPoint& p) {
  return std::to_string(p.count) + " x " + p.instance + " (" +
         std::to_string(p.cores_per_executor) + " cores each)";
}

std::string Percent0(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f%%", 100 * fraction);
  return buffer;
}

}  // namespace

CostSection DescribeCost(const cost::RunCost& c) {
  CostSection s;
  if (!c.available) {
    s.headline = "Not priced: " + c.reason + ".";
    return s;
  }
  const std::string& cur = c.currency;
  s.headline = "This run: " + c.current_cluster + " = " + cost::Money(c.total, cur) +
               " per run (executors " + cost::Money(c.executor_cost, cur) + ", driver " +
               cost::Money(c.driver_cost, cur) +
               (c.dbu_cost > 0 ? ", DBUs " + cost::Money(c.dbu_cost, cur) : std::string()) +
               ") over " + HumanDurationMs(c.wall_ms) + "; " + c.cloud +
               (c.region.empty() ? std::string() : " " + c.region) + ".";
  if (c.recommended >= 0 && c.current >= 0) {
    const cost::FrontierPoint& now = c.points[c.current];
    const cost::FrontierPoint& rec = c.points[c.recommended];
    if (c.recommended == c.current) {
      s.recommendation = "The current cluster is already the cheapest of the " +
                         std::to_string(c.points.size()) + " simulated within " +
                         Percent0(c.max_slowdown) + " of its time (" + cost::Money(now.cost, cur) +
                         ", " + HumanDurationMs(now.predicted_wall_ms) + " simulated).";
    } else {
      s.recommendation =
          "Recommended: " + Cluster(rec) + " = " + cost::Money(rec.cost, cur) +
          " per run, predicted " + HumanDurationMs(rec.predicted_wall_ms) + ", against " +
          cost::Money(now.cost, cur) + " and " + HumanDurationMs(now.predicted_wall_ms) +
          " for the current cluster simulated the same way: " + Percent0(c.saving_fraction) +
          " cheaper (the cheapest point within " + Percent0(c.max_slowdown) +
          " of the current time).";
    }
  }
  for (size_t i = 0; i < c.points.size(); ++i) {
    const cost::FrontierPoint& p = c.points[i];
    if (!p.on_frontier && !p.current && static_cast<int32_t>(i) != c.recommended) continue;
    CostRow row;
    row.cluster = Cluster(p);
    row.predicted = HumanDurationMs(p.predicted_wall_ms);
    row.cost = cost::Money(p.cost, cur);
    if (p.current) row.note = "current (simulated)";
    if (static_cast<int32_t>(i) == c.recommended) {
      row.note += row.note.empty() ? "recommended" : ", recommended";
    }
    if (!p.on_frontier) {
      row.note += row.note.empty() ? "not on the frontier" : "; not on the frontier";
    }
    s.frontier.push_back(std::move(row));
  }
  if (c.spot.available) s.spot = c.spot.advice;
  s.notes.push_back("Priced: " + c.method + ". Executors' instance: " +
                    (c.executor_instance.empty()
                         ? "none"
                         : c.executor_instance + " (" + c.executor_instance_source + ")") +
                    "; driver: " + c.driver_instance + " (" + c.driver_instance_source +
                    "); cloud: " + c.cloud + " (" + c.cloud_source + "); prices: " + c.catalogue +
                    " catalogue.");
  if (!c.frontier_note.empty()) s.notes.push_back(c.frontier_note + ".");
  for (const std::string& a : c.assumptions) s.notes.push_back("Assumed: " + a + ".");
  return s;
}

}  // namespace sparkprof::report
