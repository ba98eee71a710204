// Reads saved profiles (*.sparkprof): a sequence of size-prefixed flatbuffers `Batch` buffers
// (schema/profile.fbs, FinishSizePrefixed with identifier "SPPF"). Every buffer is bounds-checked
// against the file and verified with the flatbuffers Verifier before any field is read; a bad
// batch is skipped with a warning that names its byte offset, and reading goes on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"
#include "flamegraph/category.h"
#include "flamegraph/profile_model.h"
#include "flamegraph/read_report.h"

namespace sparkprof::flamegraph {

// One row of a verified batch's task_times (schema TaskCategoryTime): a task attempt's time in one
// category as one executor counted it since its previous batch. Rows of the same task and
// category in other batches add up; the reader hands each over as it is and keeps none.
struct TaskTimeRow {
  int32_t stage_id = -1;
  int32_t stage_attempt = -1;
  int64_t task_attempt_id = -1;          // -1: the JVM's own threads (gc, jit, vm), not a task
  Category category = Category::kOther;  // an unknown schema value reads as other (counted)
  uint64_t samples = 0;
  uint64_t time_ns = 0;
};
using TaskTimeReceiver = void (*)(void* context, const TaskTimeRow& row);

// One sample of a verified batch outside any task (stage id -1: the driver's threads, the JVM's
// own, an executor's non-task threads), with the batch it came in. The views live only for the
// call; the reader keeps none of it.
struct UntaggedSample {
  std::string_view executor_id;  // Batch.executor_id ("driver" on the driver)
  int64_t start_epoch_ns = 0;    // the window the batch covers
  int64_t end_epoch_ns = 0;
  std::string_view thread;                   // thread name (or its pool prefix)
  std::span<const std::string_view> frames;  // root first
  Category category = Category::kOther;
  uint64_t samples = 0;
  uint64_t weight_ns = 0;
};
using UntaggedSampleReceiver = void (*)(void* context, const UntaggedSample& sample);

// A verified batch's CPU use around its JVM (schema CpuUse): counters over the batch's window.
// A schema RunDelayStep: between two polls the JVM's threads waited total_ns for a CPU together,
// the longest-waiting one busiest_ns.
struct RunDelayStepRow {
  int64_t start_epoch_ms = 0;
  int64_t end_epoch_ms = 0;
  uint64_t total_ns = 0;
  uint64_t busiest_ns = 0;
};

struct CpuUseRow {
  std::string_view executor_id;  // Batch.executor_id ("driver" on the driver)
  std::string_view host;         // Batch.host
  int32_t pid = 0;
  int64_t start_epoch_ns = 0;
  int64_t end_epoch_ns = 0;
  uint32_t host_cpus = 0;  // 0: the host's figures were not read
  uint64_t host_busy_ns = 0;
  uint64_t host_steal_ns = 0;
  uint64_t host_total_ns = 0;
  uint64_t process_cpu_ns = 0;
  uint8_t cgroup_version = 0;  // 0: no cgroup figures
  uint32_t cgroup_quota_millicpus = 0;
  uint64_t cgroup_periods = 0;
  uint64_t cgroup_throttled_periods = 0;
  uint64_t cgroup_throttled_ns = 0;
  uint64_t agent_cpu_ns = 0;  // the agent's own CPU in the window (0 from older agents)
  // Every thread's run delay (CpuUse.run_delay_*): polls 0 when not measured; the steps with any,
  // in epoch ms, valid only for the call.
  uint32_t run_delay_polls = 0;
  uint64_t run_delay_ns = 0;
  std::span<const RunDelayStepRow> run_delay_steps;
};
using CpuUseReceiver = void (*)(void* context, const CpuUseRow& row);

// One heap pool of a MemoryUse (schema HeapPool); the name's view lives only for the call.
struct HeapPoolRow {
  std::string_view name;
  uint64_t used_bytes = 0;
  uint64_t committed_bytes = 0;
  uint64_t max_bytes = 0;
};

// A verified batch's memory around its JVM (schema MemoryUse): gauges at the batch's end.
struct MemoryUseRow {
  std::string_view executor_id;
  std::string_view host;
  int32_t pid = 0;
  int64_t end_epoch_ns = 0;
  uint64_t rss_bytes = 0;
  uint64_t rss_peak_bytes = 0;
  uint32_t threads = 0;
  uint8_t cgroup_version = 0;
  uint64_t cgroup_usage_bytes = 0;
  uint64_t cgroup_limit_bytes = 0;
  uint64_t cgroup_peak_bytes = 0;
  uint64_t cgroup_anon_bytes = 0;
  uint64_t cgroup_file_bytes = 0;
  uint64_t cgroup_oom_kills = 0;          // since the cgroup was made
  bool cgroup_oom_kills_counted = false;  // false: not kept, or an agent before the field
  uint32_t python_processes = 0;
  uint64_t python_rss_bytes = 0;
  // The JVM's own accounts (0 from agents before them, or where the JVM keeps none).
  uint64_t heap_used_bytes = 0;
  uint64_t heap_committed_bytes = 0;
  uint64_t heap_max_bytes = 0;
  uint64_t heap_used_peak_bytes = 0;
  uint64_t heap_used_after_gc_bytes = 0;
  uint64_t old_used_after_gc_bytes = 0;
  std::span<const HeapPoolRow> heap_pools;  // at most kMaxHeapPools, the rest left out
  uint64_t metaspace_used_bytes = 0;
  uint64_t metaspace_committed_bytes = 0;
  uint64_t class_space_used_bytes = 0;
  uint32_t java_threads = 0;
  uint64_t gc_collections = 0;
  uint64_t direct_buffer_bytes = 0;
  uint64_t direct_buffers = 0;
  uint64_t direct_buffer_max_bytes = 0;
  uint64_t mapped_buffer_bytes = 0;
  uint64_t mapped_buffers = 0;
  uint64_t spark_execution_bytes = 0;
  uint64_t spark_storage_bytes = 0;
  static constexpr size_t kMaxHeapPools = 16;
};
using MemoryUseReceiver = void (*)(void* context, const MemoryUseRow& row);

// One row of a verified batch's monitor_waits (schema MonitorWait): task threads of one stage
// attempt waited to enter monitors of one class, timed exactly by the JVM, with where they waited
// and where the monitor's owner was as a wait began. Rows of the same key in later batches add
// up; the reader hands each over as it is. The views live only for the call.
struct MonitorWaitRow {
  std::string_view executor_id;  // Batch.executor_id
  int32_t stage_id = -1;
  int32_t stage_attempt = -1;
  std::string_view monitor_class;                   // the locked object's class
  std::span<const std::string_view> waiter_frames;  // root first; empty: not taken
  // Root first. holder_looked: the owner's stack was taken as these waits began (each of the
  // row's waits is one look); false: not looked at, holder_frames empty.
  bool holder_looked = false;
  std::span<const std::string_view> holder_frames;
  std::string_view holder_thread;  // the owner's thread name; "": unknown
  uint64_t waits = 0;
  uint64_t wait_ns = 0;
};
using MonitorWaitReceiver = void (*)(void* context, const MonitorWaitRow& row);

struct ProfileFileReadOptions {
  std::string source_name = "<input>";
  std::optional<int32_t> stage_id;   // only samples of this stage
  std::optional<Category> category;  // only samples of this category
  // Weight of a sample: its sample count (WeightUnit::kSamples) or its weight_ns.
  WeightUnit weight = WeightUnit::kSamples;
  uint32_t max_batch_bytes = 256u << 20;
  uint32_t max_tables_per_batch = 16u << 20;
  size_t max_frames_per_stack = 8192;
  // Receives every task-time row of each verified batch that passes stage_id and category; null:
  // the rows are not read. The receiver bounds what it keeps.
  TaskTimeReceiver task_times = nullptr;
  void* task_times_context = nullptr;
  // ReadProfileFileByStage only: receives every sample outside a task that passes category (a
  // stage_id filter leaves them all out); null: they are only counted in `untagged_weight`.
  // Samples whose stack is invalid or too deep are skipped and reported as for tagged ones.
  UntaggedSampleReceiver untagged = nullptr;
  void* untagged_context = nullptr;
  // Receives each verified batch's CpuUse (batches without one send none); null: not read.
  CpuUseReceiver cpu_use = nullptr;
  void* cpu_use_context = nullptr;
  // Receives each verified batch's MemoryUse (batches without one send none); null: not read.
  MemoryUseReceiver memory_use = nullptr;
  void* memory_use_context = nullptr;
  // Receives every monitor-wait row of each verified batch that passes stage_id (category does
  // not apply); null: not read. A row whose class, stacks or thread name refer to an index
  // outside its batch is skipped and counted (one warning per batch, naming its offset); one
  // with a stack deeper than max_frames_per_stack is skipped with a warning.
  MonitorWaitReceiver monitor_waits = nullptr;
  void* monitor_waits_context = nullptr;
};

struct ProfileFileSummary {
  uint64_t batches_read = 0;
  uint64_t batches_skipped = 0;
  uint64_t samples_read = 0;            // StackSample entries added to the model
  uint64_t samples_filtered = 0;        // left out by stage/category
  uint64_t task_time_rows_read = 0;     // rows handed to options.task_times
  uint64_t monitor_wait_rows_read = 0;  // rows handed to options.monitor_waits
  std::set<int32_t> stage_ids;  // stages seen in the file, for "--stage N not found" messages
  // What the batches say of how they were sampled: Batch.mode ("cpu", "wall", "cpu+wall"; at
  // most kMaxKeptModes distinct, each at most 16 bytes) and the smallest positive interval.
  static constexpr size_t kMaxKeptModes = 8;
  std::set<std::string> modes;
  int64_t min_interval_ns = 0;
  uint64_t executors = 0;  // distinct executor ids among the batches (at most 100,000 kept)
  std::set<std::string> executor_ids;
};

// Where ReadProfileFileByStage puts a sample: the model of its stage attempt, or null to leave
// it out (counted as filtered). Called for samples with a task tag only (stage id >= 0).
using StageModelSelector = ProfileModel* (*)(void* context, int32_t stage_id,
                                             int32_t stage_attempt);

// True when `bytes` starts like a size-prefixed buffer with the "SPPF" identifier.
bool LooksLikeProfileFile(std::string_view bytes);

// Adds the samples of every valid batch in `bytes` to `model` (whose unit should match
// `options.weight`). Fails when no batch at all could be read.
Status ReadProfileFile(std::string_view bytes, const ProfileFileReadOptions& options,
                       ProfileModel& model, ReadReport& report, ProfileFileSummary* summary);

// The same in one pass for every stage attempt: each sample with a task tag goes to the model
// `select(context, stage, attempt)` returns (models should share one StringTable); samples
// outside tasks (stage id -1) are counted in `untagged_weight` (in options.weight's unit).
// options.stage_id and options.category still filter.
Status ReadProfileFileByStage(std::string_view bytes, const ProfileFileReadOptions& options,
                              StageModelSelector select, void* context, uint64_t& untagged_weight,
                              ReadReport& report, ProfileFileSummary* summary);

}  // namespace sparkprof::flamegraph
