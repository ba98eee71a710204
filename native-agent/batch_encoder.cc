#include "native-agent/batch_encoder.h"

#include <map>
#include <unordered_map>

#include "schema/profile_generated.h"

namespace sparkprof::agent {

// common/category.h mirrors the schema's enum value for value; the casts below rely on it.
static_assert(static_cast<int>(schema::Category::MAX) + 1 == kCategoryCount);
static_assert(static_cast<int>(schema::Category::serialization) ==
              CategoryIndex(Category::kSerialization));
static_assert(static_cast<int>(schema::Category::s3a_write) == CategoryIndex(Category::kS3aWrite));
static_assert(static_cast<int>(schema::Category::shuffle_read) ==
              CategoryIndex(Category::kShuffleRead));
static_assert(static_cast<int>(schema::Category::gc) == CategoryIndex(Category::kGc));
static_assert(static_cast<int>(schema::Category::other) == CategoryIndex(Category::kOther));

std::vector<uint8_t> EncodeBatch(const BatchHeader& header, const Profile& pending,
                                 const StringTable& strings, const std::vector<GcPause>& pauses,
                                 const HealthSnapshot& health, const std::vector<S3aRow>& s3a,
                                 const CpuUseDelta* cpu, const MemoryUseReading* memory,
                                 const std::vector<MonitorWaitRow>& monitors,
                                 const JvmMemoryFigures* jvm_memory) {
  namespace fb = sparkprof::schema;
  flatbuffers::FlatBufferBuilder builder(16 * 1024);

  // Global string id -> index in this batch's string vector, in order of first use.
  std::unordered_map<uint32_t, uint32_t> string_index;
  std::vector<flatbuffers::Offset<flatbuffers::String>> string_offsets;
  auto local_string = [&](uint32_t global_id) {
    auto [it, inserted] =
        string_index.emplace(global_id, static_cast<uint32_t>(string_offsets.size()));
    if (inserted) string_offsets.push_back(builder.CreateString(strings.Get(global_id)));
    return it->second;
  };

  std::vector<flatbuffers::Offset<fb::Stack>> stack_offsets;
  stack_offsets.reserve(pending.stacks().size());
  std::vector<uint32_t> frames;
  for (const auto& stack : pending.stacks()) {
    frames.clear();
    for (uint32_t frame : stack) frames.push_back(local_string(frame));
    stack_offsets.push_back(fb::CreateStack(builder, builder.CreateVector(frames)));
  }

  // The monitor rows' stacks follow the samples' (each distinct one once).
  std::map<std::vector<uint32_t>, int32_t> monitor_stacks;
  auto monitor_stack = [&](const std::vector<uint32_t>& ids) -> int32_t {
    if (ids.empty()) return -1;
    auto [it, inserted] = monitor_stacks.emplace(ids, static_cast<int32_t>(stack_offsets.size()));
    if (inserted) {
      frames.clear();
      for (uint32_t frame : ids) frames.push_back(local_string(frame));
      stack_offsets.push_back(fb::CreateStack(builder, builder.CreateVector(frames)));
    }
    return it->second;
  };
  std::vector<flatbuffers::Offset<fb::MonitorWait>> monitor_offsets;
  for (const MonitorWaitRow& row : monitors) {
    const int32_t holder_thread =
        row.holder_thread < 0
            ? -1
            : static_cast<int32_t>(local_string(static_cast<uint32_t>(row.holder_thread)));
    monitor_offsets.push_back(
        fb::CreateMonitorWait(builder, row.stage_id, row.stage_attempt,
                              local_string(row.monitor_class), monitor_stack(row.waiter),
                              monitor_stack(row.holder), holder_thread, row.waits, row.wait_ns));
  }

  std::vector<flatbuffers::Offset<fb::StackSample>> sample_offsets;
  sample_offsets.reserve(pending.samples().size());
  for (const auto& [key, count] : pending.samples()) {
    sample_offsets.push_back(fb::CreateStackSample(
        builder, key.stack, key.tag.stage_id, key.tag.stage_attempt, key.tag.task_attempt_id,
        local_string(key.thread), static_cast<fb::Category>(count.category), count.samples,
        count.time_ns));
  }

  std::vector<flatbuffers::Offset<fb::TaskCategoryTime>> task_offsets;
  for (const auto& [key, total] : pending.task_times()) {
    task_offsets.push_back(fb::CreateTaskCategoryTime(
        builder, key.tag.stage_id, key.tag.stage_attempt, key.tag.task_attempt_id,
        static_cast<fb::Category>(key.category), total.samples, total.time_ns));
  }

  std::vector<flatbuffers::Offset<fb::GcPause>> pause_offsets;
  pause_offsets.reserve(pauses.size());
  for (const GcPause& pause : pauses) {
    pause_offsets.push_back(fb::CreateGcPause(builder, pause.start_epoch_ns, pause.duration_ns));
  }

  auto health_offset = fb::CreateAgentHealth(
      builder, health.samples_taken, health.samples_dropped_ring_full, health.samples_walk_failed,
      health.stacks_dropped_cap, health.walk_time_ns_total, health.batches_encoded,
      health.native_memory_bytes);
  std::vector<flatbuffers::Offset<fb::S3aStatistics>> s3a_offsets;
  for (const S3aRow& row : s3a) {
    const auto& f = row.fields;
    s3a_offsets.push_back(fb::CreateS3aStatistics(
        builder, row.stage_id, row.stage_attempt, row.tasks, row.request_counts, f[0], f[1], f[2],
        f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15], f[16],
        f[17], f[18], f[19]));
  }
  static_assert(kS3aFieldCount == 20, "one CreateS3aStatistics argument per field");
  auto executor = builder.CreateString(header.executor_id);
  auto host = builder.CreateString(header.host);
  auto mode = builder.CreateString(header.mode);
  auto strings_vector = builder.CreateVector(string_offsets);
  auto stacks_vector = builder.CreateVector(stack_offsets);
  auto samples_vector = builder.CreateVector(sample_offsets);
  auto tasks_vector = builder.CreateVector(task_offsets);
  auto pauses_vector = builder.CreateVector(pause_offsets);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::S3aStatistics>>> s3a_vector;
  if (!s3a_offsets.empty()) s3a_vector = builder.CreateVector(s3a_offsets);
  flatbuffers::Offset<fb::CpuUse> cpu_offset;
  if (cpu != nullptr) {
    flatbuffers::Offset<flatbuffers::Vector<const fb::RunDelayStep*>> steps;
    if (!cpu->run_delay_steps.empty()) {
      std::vector<fb::RunDelayStep> structs;
      structs.reserve(cpu->run_delay_steps.size());
      for (const RunDelayStep& step : cpu->run_delay_steps) {
        structs.emplace_back(step.start_epoch_ms, step.end_epoch_ms, step.total_ns,
                             step.busiest_ns);
      }
      steps = builder.CreateVectorOfStructs(structs);
    }
    cpu_offset = fb::CreateCpuUse(
        builder, cpu->host_cpus, cpu->host_busy_ns, cpu->host_steal_ns, cpu->host_total_ns,
        cpu->process_cpu_ns, static_cast<uint8_t>(cpu->cgroup.version), cpu->cgroup.quota_millicpus,
        cpu->cgroup.periods, cpu->cgroup.throttled_periods, cpu->cgroup.throttled_ns,
        cpu->agent_cpu_ns, cpu->run_delay_polls, cpu->run_delay_ns, steps);
  }
  flatbuffers::Offset<fb::MemoryUse> memory_offset;
  if (memory != nullptr) {
    const JvmMemoryFigures none;
    const JvmMemoryFigures& jvm = jvm_memory != nullptr ? *jvm_memory : none;
    std::vector<flatbuffers::Offset<fb::HeapPool>> pools;
    for (const HeapPool& pool : jvm.counters.pools) {
      pools.push_back(fb::CreateHeapPool(builder, builder.CreateString(pool.name), pool.used_bytes,
                                         pool.committed_bytes, pool.max_bytes));
    }
    auto pools_vector = pools.empty() ? 0 : builder.CreateVector(pools);
    fb::MemoryUseBuilder row(builder);
    row.add_rss_bytes(memory->rss_bytes);
    row.add_rss_peak_bytes(memory->rss_peak_bytes);
    row.add_threads(memory->threads);
    row.add_cgroup_version(static_cast<uint8_t>(memory->cgroup_version));
    row.add_cgroup_usage_bytes(memory->cgroup_usage_bytes);
    row.add_cgroup_limit_bytes(memory->cgroup_limit_bytes);
    row.add_cgroup_peak_bytes(memory->cgroup_peak_bytes);
    row.add_cgroup_anon_bytes(memory->cgroup_anon_bytes);
    row.add_cgroup_file_bytes(memory->cgroup_file_bytes);
    row.add_python_processes(memory->python_processes);
    row.add_python_rss_bytes(memory->python_rss_bytes);
    row.add_heap_used_bytes(jvm.heap_used_bytes);
    row.add_heap_committed_bytes(jvm.java.heap_committed_bytes);
    row.add_heap_max_bytes(jvm.java.heap_max_bytes);
    row.add_heap_used_peak_bytes(jvm.heap_used_peak_bytes);
    row.add_heap_used_after_gc_bytes(jvm.counters.heap_used_after_gc_bytes);
    row.add_old_used_after_gc_bytes(jvm.counters.old_used_after_gc_bytes);
    if (!pools.empty()) row.add_heap_pools(pools_vector);
    row.add_metaspace_used_bytes(jvm.counters.metaspace_used_bytes);
    row.add_metaspace_committed_bytes(jvm.counters.metaspace_committed_bytes);
    row.add_class_space_used_bytes(jvm.counters.class_space_used_bytes);
    row.add_java_threads(jvm.counters.java_threads);
    row.add_gc_collections(jvm.counters.collections);
    row.add_direct_buffer_bytes(jvm.java.direct_bytes);
    row.add_direct_buffers(jvm.java.direct_count);
    row.add_direct_buffer_max_bytes(jvm.java.direct_max_bytes);
    row.add_mapped_buffer_bytes(jvm.java.mapped_bytes);
    row.add_mapped_buffers(jvm.java.mapped_count);
    row.add_spark_execution_bytes(jvm.spark_execution_bytes);
    row.add_spark_storage_bytes(jvm.spark_storage_bytes);
    row.add_cgroup_oom_kills(memory->cgroup_oom_kills);
    row.add_cgroup_oom_kills_counted(memory->cgroup_oom_kills_counted);
    memory_offset = row.Finish();
  }
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::MonitorWait>>> monitors_vector;
  if (!monitor_offsets.empty()) monitors_vector = builder.CreateVector(monitor_offsets);
  auto batch = fb::CreateBatch(
      builder, 1, executor, host, header.pid, header.start_epoch_ns, header.end_epoch_ns,
      header.interval_ns, mode, strings_vector, stacks_vector, samples_vector, tasks_vector,
      pauses_vector, health_offset, s3a_vector, cpu_offset, memory_offset, monitors_vector);
  fb::FinishBatchBuffer(builder, batch);
  return std::vector<uint8_t>(builder.GetBufferPointer(),
                              builder.GetBufferPointer() + builder.GetSize());
}

}  // namespace sparkprof::agent
