#include "driver-aggregator/executor_metrics.h"

#include <algorithm>
#include <utility>

#include "analyzer/model/failure_causes.h"

namespace sparkprof::driver {
namespace {

constexpr const char* kOtherExecutors = "other";

}  // namespace

Status ExecutorMetrics::Register(metrics::PrometheusRegistry& registry) {
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* added, registry.AddCounter("spark_executors_added_total",
                                       "Executors that registered with the driver (the driver "
                                       "itself not counted)."));
  added_ = &added->Add({});
  SPARKPROF_ASSIGN_OR_RETURN(
      removed_,
      registry.AddCounter("spark_executors_removed_total",
                          "Executors removed, by reason class: released (dynamic allocation, "
                          "killed by the driver, stopped, idle), memory (killed for memory, "
                          "OutOfMemoryError exits), node (worker or node lost, heartbeats, "
                          "preemption, decommission), other."));
  for (const char* reason : {"released", "memory", "node", "other"}) {
    removed_->Add({{"reason", reason}});
  }
  SPARKPROF_ASSIGN_OR_RETURN(
      peak_memory_,
      registry.AddGauge("spark_executor_peak_memory_bytes",
                        "Peak memory of each executor so far, by area: jvm_heap, jvm_off_heap "
                        "(Spark's executor metrics peaks reported with task ends), execution "
                        "(on- plus off-heap execution memory), storage (on-heap storage "
                        "memory), task_execution (the largest Peak Execution Memory of one "
                        "task). executor_id is capped (docs/metrics.md)."));
  SPARKPROF_ASSIGN_OR_RETURN(
      task_duration_,
      registry.AddHistogram(
          "spark_executor_task_duration_seconds",
          "Durations of successful task attempts (launch to finish) of completed stages, by the "
          "executor that ran them (executor_id capped, docs/metrics.md).",
          {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}));
  return Status::Ok();
}

std::string ExecutorMetrics::Label(const std::string& executor_id) {
  if (labelled_.count(executor_id) > 0) return executor_id;
  if (labelled_.size() >= max_labelled_ || executor_id.empty()) return kOtherExecutors;
  labelled_.insert(executor_id);
  return executor_id;
}

void ExecutorMetrics::Update(const LiveSnapshot& snapshot) {
  if (added_ == nullptr) return;
  for (const ExecutorSnapshot& executor : snapshot.executors) {
    const std::string label = Label(executor.executor_id);
    if (counted_added_.insert(executor.executor_id).second) added_->Increment();
    if (executor.removed && counted_removed_.insert(executor.executor_id).second) {
      const char* reason = model::ClassifyRemovalReason(executor.removed_reason);
      removed_->Add({{"reason", reason != nullptr ? reason : "released"}}).Increment();
    }
    const model::ExecutorMetricPeaks& p = executor.peaks;
    const std::pair<const char*, int64_t> areas[] = {
        {"jvm_heap", p.jvm_heap_memory_bytes},
        {"jvm_off_heap", p.jvm_off_heap_memory_bytes},
        {"execution", p.on_heap_execution_memory_bytes + p.off_heap_execution_memory_bytes},
        {"storage", p.on_heap_storage_memory_bytes},
        {"task_execution", executor.peak_task_execution_memory_bytes}};
    for (const auto& [area, bytes] : areas) {
      if (!p.present && std::string(area) != "task_execution") continue;
      prometheus::Gauge& gauge = peak_memory_->Add({{"executor_id", label}, {"area", area}});
      // "other" holds the largest of the executors it stands for.
      gauge.Set(std::max(gauge.Value(), static_cast<double>(std::max<int64_t>(bytes, 0))));
    }
  }
  for (const CompletedStage& stage : snapshot.newly_completed) {
    for (size_t i = 0; i < stage.successful_task_ms.size(); ++i) {
      const std::string& id = i < stage.successful_task_executor_ids.size()
                                  ? stage.successful_task_executor_ids[i]
                                  : std::string();
      const std::string label = Label(id);
      prometheus::Histogram*& histogram = task_duration_by_label_[label];
      if (histogram == nullptr) histogram = &task_duration_->Add({{"executor_id", label}});
      histogram->Observe(static_cast<double>(stage.successful_task_ms[i]) / 1000.0);
    }
  }
}

}  // namespace sparkprof::driver
