#include "analyzer/diagnosis/stage_stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>

namespace sparkprof::diagnosis {

int64_t NearestRank(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

namespace {

// NearestRank of unsorted values: the same element, selected in linear time (reorders them).
int64_t SelectNearestRank(std::vector<int64_t>& values, double p) {
  if (values.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(rank - 1), values.end());
  return values[rank - 1];
}

int64_t ReadBytes(const model::TaskAttempt& task) {
  return task.metrics.input_bytes_read + task.metrics.shuffle_bytes_read();
}
int64_t ReadRecords(const model::TaskAttempt& task) {
  return task.metrics.input_records_read + task.metrics.shuffle_records_read;
}

}  // namespace

std::vector<StageStats> ComputeStageStats(const model::ApplicationModel& model) {
  std::vector<StageStats> out;
  for (const auto& [key, stage] : model.stages) {
    StageStats s;
    s.stage_id = stage.stage_id;
    s.attempt = stage.attempt;
    s.name = stage.name;
    s.num_tasks = stage.num_tasks;
    s.submission_ms = stage.submission_time_ms;
    s.completion_ms = stage.completion_time_ms;
    s.duration_ms = model::ElapsedMs(s.submission_ms, s.completion_ms);
    for (const auto& [id, acc] : stage.accumulables) {
      if (acc.name == "task commit time") {
        s.task_commit_ms += acc.value;
        s.write_stage = true;
      } else if (acc.name == "number of written files") {
        s.written_files += acc.value;
        s.write_stage = true;
      }
    }
    // Files are counted on the driver after the job (model::SqlWrite), not in the stage.
    int64_t files_from_driver = 0;
    for (const model::SqlWrite& write : model.sql_writes) {
      if (stage.accumulables.count(write.task_commit_accumulator_id) == 0) continue;
      s.write_stage = true;
      files_from_driver += std::max<int64_t>(write.written_files, 0);
    }
    s.written_files = std::max(s.written_files, files_from_driver);

    std::vector<int64_t> durations, read_bytes, read_records;
    const model::TaskAttempt* longest = nullptr;
    int64_t first_launch = -1, last_finish = -1;
    auto [begin, end] = model.TasksOf(stage);
    for (const uint32_t* it = begin; it != end; ++it) {
      const model::TaskAttempt& task = model.tasks[*it];
      if (!task.ended()) continue;
      int64_t duration = std::max<int64_t>(task.duration_ms(), 0);
      s.total_task_ms += duration;
      if (task.launch_time_ms >= 0) {
        first_launch =
            first_launch < 0 ? task.launch_time_ms : std::min(first_launch, task.launch_time_ms);
        last_finish = std::max(last_finish, task.finish_time_ms);
      }
      const model::TaskAttemptMetrics& m = task.metrics;
      if (task.has_metrics) {
        s.run_time_ms += m.executor_run_time_ms;
        s.cpu_time_ns += m.executor_cpu_time_ns;
        s.gc_ms += m.jvm_gc_time_ms;
        s.memory_spill_bytes += m.memory_bytes_spilled;
        s.disk_spill_bytes += m.disk_bytes_spilled;
        s.input_bytes += m.input_bytes_read;
        s.shuffle_read_bytes += m.shuffle_bytes_read();
        s.shuffle_write_bytes += m.shuffle_bytes_written;
        s.output_bytes += m.output_bytes_written;
        s.fetch_wait_ms += m.shuffle_fetch_wait_time_ms;
        s.shuffle_write_ms += m.shuffle_write_time_ns / 1'000'000;
        s.peak_execution_memory_max =
            std::max(s.peak_execution_memory_max, m.peak_execution_memory_bytes);
        s.photon_peak_memory_largest_operator_max = std::max(
            s.photon_peak_memory_largest_operator_max, m.photon_peak_memory_largest_operator_bytes);
        s.scheduling_overhead_ms += std::max<int64_t>(duration - m.executor_run_time_ms, 0);
      }
      if (task.end != model::TaskEndKind::kSuccess) {
        ++s.failed_attempts;
        s.failed_task_ms += duration;
        continue;
      }
      durations.push_back(duration);
      read_bytes.push_back(ReadBytes(task));
      read_records.push_back(ReadRecords(task));
      if (longest == nullptr || duration > longest->duration_ms()) longest = &task;
    }
    s.task_span_ms = model::ElapsedMs(first_launch, last_finish);
    if (s.output_bytes > 0 && s.shuffle_write_bytes == 0) s.write_stage = true;
    s.successful_tasks = static_cast<int64_t>(durations.size());
    std::vector<int64_t> sorted = durations;
    std::sort(sorted.begin(), sorted.end());
    s.median_task_ms = NearestRank(sorted, 0.5);
    s.p75_task_ms = NearestRank(sorted, 0.75);
    s.p95_task_ms = NearestRank(sorted, 0.95);
    s.max_task_ms = sorted.empty() ? 0 : sorted.back();
    s.median_read_bytes = SelectNearestRank(read_bytes, 0.5);
    s.median_read_records = SelectNearestRank(read_records, 0.5);
    if (longest != nullptr) {
      s.max_task_read_bytes = ReadBytes(*longest);
      s.max_task_read_records = ReadRecords(*longest);
      if (longest->host != model::kNone) s.max_task_host = model.strings.Get(longest->host);
    }

    // Spill, GC in slow tasks, and the longest task's host's other tasks.
    std::vector<int64_t> same_host;
    for (const uint32_t* it = begin; it != end; ++it) {
      const model::TaskAttempt& task = model.tasks[*it];
      if (task.end != model::TaskEndKind::kSuccess) continue;
      if (longest != nullptr && &task != longest && task.host == longest->host) {
        same_host.push_back(task.duration_ms());
      }
      if (s.median_task_ms > 0 && task.duration_ms() > 2 * s.median_task_ms) {
        ++s.slow_tasks;
        s.slow_task_spill_bytes +=
            task.metrics.memory_bytes_spilled + task.metrics.disk_bytes_spilled;
        s.slow_task_gc_ms += task.metrics.jvm_gc_time_ms;
      }
    }
    s.max_task_host_median_ms = SelectNearestRank(same_host, 0.5);
    if (longest != nullptr && s.median_task_ms > 0) {
      std::map<uint32_t, const model::TaskAttempt*> first_in_stage;
      for (const uint32_t* it = begin; it != end; ++it) {
        const model::TaskAttempt& task = model.tasks[*it];
        if (task.end != model::TaskEndKind::kSuccess || task.executor == model::kNone) continue;
        auto [entry, inserted] = first_in_stage.emplace(task.executor, &task);
        if (!inserted && task.launch_time_ms < entry->second->launch_time_ms) entry->second = &task;
      }
      bool longest_first = false, all_slow = first_in_stage.size() >= 2;
      for (const auto& [executor, task] : first_in_stage) {
        longest_first |= task == longest;
        all_slow &= task->duration_ms() > 2 * s.median_task_ms;
      }
      s.longest_is_executor_first_task = longest_first && all_slow;
    }

    // Photon (Databricks) leaves Spark's shuffle write time and spill task metrics at 0 and
    // reports them in its own SQL metrics; use those when the task metrics have nothing.
    int64_t photon_shuffle_ns = 0, photon_spill = 0;
    bool photon = false, photon_peak = false;
    for (const auto& [id, acc] : stage.accumulables) {
      if (acc.name == "peak memory usage") photon_peak = true;
      if (acc.name == "total time spent producing shuffle files") {
        photon_shuffle_ns += acc.value;
        photon = true;
      } else if (acc.name == "num bytes spilled to disk due to memory pressure") {
        photon_spill += acc.value;
        photon = true;
      }
    }
    if (photon && s.shuffle_write_ms == 0 && photon_shuffle_ns > 0) {
      s.shuffle_write_ms = photon_shuffle_ns / 1'000'000;
      s.photon_figures += "shuffle write time";
    }
    if (photon && s.disk_spill_bytes == 0 && s.memory_spill_bytes == 0 && photon_spill > 0) {
      s.disk_spill_bytes = photon_spill;
      if (!s.photon_figures.empty()) s.photon_figures += ", ";
      s.photon_figures += "spill";
    }
    if (photon_peak && model.photon_peak_memory_tasks > 0 && s.peak_execution_memory_max > 0) {
      if (!s.photon_figures.empty()) s.photon_figures += ", ";
      s.photon_figures += "peak memory";
    }
    for (const auto& [executor, peaks] : stage.executor_peaks) {
      const int64_t on = std::max<int64_t>(peaks.on_heap_execution_memory_bytes, 0);
      const int64_t off = std::max<int64_t>(peaks.off_heap_execution_memory_bytes, 0);
      const int64_t held = on > INT64_MAX - off ? INT64_MAX : on + off;
      s.executor_execution_memory_peak = std::max(s.executor_execution_memory_peak, held);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace sparkprof::diagnosis
