// The Simulator: the run prepared once (preparation.cc); per scenario, its changes applied
// (scenario.cc), the changed run replayed (replay.cc) and compared with the run and its replay.
#include "analyzer/whatif/simulator.h"

#include <memory>
#include <mutex>
#include <vector>

#include "analyzer/whatif/simulator_internal.h"

namespace sparkprof::whatif {

namespace {

// The figures of the run and of its replay under the scenario, stage attempt by stage attempt.
std::vector<StagePrediction> StagePredictions(const PreparedRun& run, const ChangedRun& changed,
                                              const RunResult& predicted) {
  std::vector<StagePrediction> stages;
  const std::vector<Unit>& units = run.units;
  const RunResult& baseline = run.baseline;
  for (size_t u = 0; u < units.size(); ++u) {
    StagePrediction s;
    s.stage_id = units[u].stage_id;
    s.attempt = units[u].attempt;
    s.name = units[u].name;
    s.actual_ms = Span(units[u].real_end, units[u].real_submit);
    s.baseline_ms = baseline.unit_spans[u].second - baseline.unit_spans[u].first;
    s.predicted_ms = predicted.unit_spans[u].second - predicted.unit_spans[u].first;
    s.actual_tasks = static_cast<int64_t>(units[u].tasks.size());
    s.predicted_tasks = predicted.unit_tasks[u];
    s.removed = changed.removed[u];
    stages.push_back(s);
  }
  return stages;
}

}  // namespace

Simulator::Simulator(const model::ApplicationModel& m) : prepared_(PrepareRun(m)) {}
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;
Simulator::~Simulator() = default;

Prediction Simulator::Simulate(const Scenario& scenario) const {
  const PreparedRun& run = *prepared_;
  Prediction p = run.base;
  const ChangedRun changed = ApplyScenario(run, scenario, p.changes);
  const RunResult predicted =
      changed.ReplaysAsRun(run)
          ? run.baseline
          : Replay(changed.units(), run.jobs, changed.executors, run.app_tail_ms, p.actual_wall_ms,
                   run.launch_gap_ms, changed.allocation);
  p.predicted_wall_ms = predicted.wall_ms;
  p.predicted_core_hours = predicted.core_hours;
  p.predicted_executors = changed.allocation.enabled
                              ? predicted.peak_executors
                              : static_cast<int32_t>(changed.executors.size());
  p.predicted_cores_per_executor =
      scenario.cores_per_executor > 0 ? scenario.cores_per_executor : run.real_cores;
  p.actual_executor_memory_mb = run.memory.heap_mb;
  p.predicted_executor_memory_mb = changed.new_heap_mb;
  p.stages = StagePredictions(run, changed, predicted);
  p.assumptions = Assumptions(run, scenario, changed);
  return p;
}

Prediction Simulate(const model::ApplicationModel& model, const Scenario& scenario) {
  return Simulator(model).Simulate(scenario);
}

const Simulator& LazySimulator::Get() const {
  std::call_once(once_, [this] { simulator_ = std::make_unique<Simulator>(model_); });
  return *simulator_;
}

}  // namespace sparkprof::whatif
