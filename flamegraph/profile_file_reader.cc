#include "flamegraph/profile_file_reader.h"

#include <cstring>
#include <vector>

#include "flatbuffers/flatbuffers.h"
#include "schema/profile_generated.h"

namespace sparkprof::flamegraph {
namespace {

constexpr size_t kSizePrefixBytes = sizeof(flatbuffers::uoffset_t);
// Size prefix, root offset, identifier.
constexpr size_t kMinimumBatchBytes = 2 * sizeof(flatbuffers::uoffset_t) + 4;
constexpr uint32_t kSupportedSchemaVersion = 1;

uint32_t ReadLittleEndian32(const char* data) {
  uint32_t value;
  std::memcpy(&value, data, sizeof(value));
  return flatbuffers::EndianScalar(value);
}

std::string At(const ProfileFileReadOptions& options, size_t offset) {
  return options.source_name + ": byte " + std::to_string(offset) + ": ";
}

constexpr size_t kMaxModeBytes = 16;
constexpr size_t kMaxKeptExecutorIds = 100000;

// Reads one verified batch into the model, or -- with a selector -- into its stages' models.
class BatchLoader {
 public:
  BatchLoader(const ProfileFileReadOptions& options, ProfileModel* model, ReadReport& report,
              ProfileFileSummary& summary)
      : options_(options), model_(model), report_(report), summary_(summary) {}
  BatchLoader(const ProfileFileReadOptions& options, StageModelSelector select, void* context,
              ReadReport& report, ProfileFileSummary& summary)
      : options_(options), select_(select), context_(context), report_(report), summary_(summary) {}

  void Load(const schema::Batch& batch, size_t batch_offset) {
    NoteBatch(batch);
    if (options_.task_times != nullptr) LoadTaskTimes(batch);
    if (options_.cpu_use != nullptr) PassCpuUse(batch);
    if (options_.memory_use != nullptr) PassMemoryUse(batch);
    if (options_.monitor_waits != nullptr) PassMonitorWaits(batch, batch_offset);
    const auto* strings = batch.strings();
    const auto* stacks = batch.stacks();
    const auto* samples = batch.samples();
    if (samples == nullptr) return;
    frame_ids_.clear();
    uint64_t bad_references = 0;
    ProfileModel* mapped_model = nullptr;  // the model frame_ids_ holds ids of
    for (const schema::StackSample* sample : *samples) {
      summary_.stage_ids.insert(sample->stage_id());
      const Category category = KnownCategory(sample->category(), bad_categories_);
      if (LeftOutByOptions(sample->stage_id(), category)) {
        ++summary_.samples_filtered;
        continue;
      }
      ProfileModel* model = model_;
      if (select_ != nullptr) {
        if (sample->stage_id() < 0) {
          untagged_weight_ = SaturatingAdd(untagged_weight_, WeightOf(*sample));
          if (options_.untagged != nullptr) {
            PassUntagged(batch, *sample, category, batch_offset, bad_references);
          }
          continue;
        }
        model = select_(context_, sample->stage_id(), sample->stage_attempt());
        if (model == nullptr) {
          ++summary_.samples_filtered;
          continue;
        }
      }
      if (model != mapped_model) {
        // Frame ids are per string table: models sharing one keep the batch's mapping.
        if (mapped_model == nullptr || &mapped_model->strings() != &model->strings()) {
          frame_ids_.assign(strings ? strings->size() : 0, kUnmapped);
        }
        mapped_model = model;
      }
      if (stacks == nullptr || sample->stack() >= stacks->size()) {
        ++bad_references;
        continue;
      }
      const auto* frames = stacks->Get(sample->stack())->frames();
      size_t depth = frames ? frames->size() : 0;
      if (depth > options_.max_frames_per_stack) {
        WarnTooDeep(batch_offset, depth, "its samples are skipped");
        continue;
      }
      path_.clear();
      bool valid = true;
      for (size_t i = 0; i < depth && valid; ++i) {
        uint32_t index = frames->Get(i);
        if (index >= frame_ids_.size() || strings->Get(index) == nullptr) {
          valid = false;
          break;
        }
        if (frame_ids_[index] == kUnmapped) {
          frame_ids_[index] = model->InternFrame(strings->Get(index)->string_view());
        }
        path_.push_back(frame_ids_[index]);
      }
      if (!valid) {
        ++bad_references;
        continue;
      }
      model->AddStack(path_, category, WeightOf(*sample));
      ++summary_.samples_read;
    }
    if (bad_references > 0) {
      report_.Warn(At(options_, batch_offset) + std::to_string(bad_references) +
                   " sample(s) refer to a stack or string index outside the batch; skipped");
    }
  }

  // Hands one untagged sample to options_.untagged with its frames resolved (an invalid stack
  // is counted in `bad_references`, a too-deep one warned about, and neither is handed over).
  void PassUntagged(const schema::Batch& batch, const schema::StackSample& sample,
                    Category category, size_t batch_offset, uint64_t& bad_references) {
    switch (ResolveStack(batch, sample.stack(), batch_offset, "its samples are skipped",
                         untagged_frames_)) {
      case StackLookup::kBadReference:
        ++bad_references;
        return;
      case StackLookup::kTooDeep:
        return;
      case StackLookup::kResolved:
        break;
    }
    const flatbuffers::String* thread_name = StringAt(batch, sample.thread());
    const std::string_view thread = thread_name ? thread_name->string_view() : std::string_view();
    UntaggedSample view;
    view.executor_id = batch.executor_id() ? batch.executor_id()->string_view() : "";
    view.start_epoch_ns = batch.start_epoch_ns();
    view.end_epoch_ns = batch.end_epoch_ns();
    view.thread = thread;
    view.frames = untagged_frames_;
    view.category = category;
    view.samples = sample.samples();
    view.weight_ns = sample.weight_ns();
    options_.untagged(options_.untagged_context, view);
  }

  // Hands each monitor-wait row of the batch to options_.monitor_waits with its names and stacks
  // resolved; a row with an index outside the batch is counted and skipped (one warning for the
  // batch), one with a too-deep stack warned about and skipped.
  void PassMonitorWaits(const schema::Batch& batch, size_t batch_offset) {
    const auto* rows = batch.monitor_waits();
    if (rows == nullptr) return;
    const std::string_view executor_id =
        batch.executor_id() ? batch.executor_id()->string_view() : std::string_view();
    uint64_t bad_references = 0;
    for (const schema::MonitorWait* row : *rows) {
      if (options_.stage_id && row->stage_id() != *options_.stage_id) continue;
      const flatbuffers::String* monitor_class = StringAt(batch, row->monitor_class());
      const flatbuffers::String* holder_thread =
          row->holder_thread() == kNotTaken ? nullptr : StringAt(batch, row->holder_thread());
      if (monitor_class == nullptr ||
          (row->holder_thread() != kNotTaken && holder_thread == nullptr)) {
        ++bad_references;
        continue;
      }
      const char* skipped = "its monitor-wait row is skipped";
      const StackLookup waiter =
          ResolveOptionalStack(batch, row->waiter_stack(), batch_offset, skipped, waiter_frames_);
      const StackLookup holder = waiter != StackLookup::kResolved
                                     ? waiter
                                     : ResolveOptionalStack(batch, row->holder_stack(),
                                                            batch_offset, skipped, holder_frames_);
      if (holder == StackLookup::kBadReference) ++bad_references;
      if (holder != StackLookup::kResolved) continue;
      MonitorWaitRow view;
      view.executor_id = executor_id;
      view.stage_id = row->stage_id();
      view.stage_attempt = row->stage_attempt();
      view.monitor_class = monitor_class->string_view();
      view.waiter_frames = waiter_frames_;
      view.holder_looked = row->holder_stack() != kNotTaken;
      view.holder_frames = holder_frames_;
      view.holder_thread = holder_thread ? holder_thread->string_view() : std::string_view();
      view.waits = row->waits();
      view.wait_ns = row->wait_ns();
      options_.monitor_waits(options_.monitor_waits_context, view);
      ++summary_.monitor_wait_rows_read;
    }
    if (bad_references > 0) {
      report_.Warn(At(options_, batch_offset) + std::to_string(bad_references) +
                   " monitor-wait row(s) refer to a stack or string index outside the batch; "
                   "skipped");
    }
  }

  uint64_t bad_categories() const { return bad_categories_; }
  uint64_t bad_task_time_categories() const { return bad_task_time_categories_; }
  uint64_t untagged_weight() const { return untagged_weight_; }

 private:
  static constexpr FrameId kUnmapped = UINT32_MAX;
  static constexpr int64_t kNotTaken = -1;  // a MonitorWait stack or thread that was not taken

  enum class StackLookup { kResolved, kBadReference, kTooDeep };

  // The batch's string at `index`, or null when there is none.
  static const flatbuffers::String* StringAt(const schema::Batch& batch, int64_t index) {
    const auto* strings = batch.strings();
    if (strings == nullptr || index < 0 || static_cast<uint64_t>(index) >= strings->size()) {
      return nullptr;
    }
    return strings->Get(static_cast<flatbuffers::uoffset_t>(index));
  }
  void WarnTooDeep(size_t batch_offset, size_t depth, const char* skipped) {
    report_.Warn(At(options_, batch_offset) + "a stack of " + std::to_string(depth) +
                 " frames is deeper than the limit of " +
                 std::to_string(options_.max_frames_per_stack) + "; " + skipped);
  }
  // The frames (root first) of the batch's stack `index` into `out`; a stack deeper than the
  // limit is warned about (`skipped` says what goes with it) and not resolved.
  StackLookup ResolveStack(const schema::Batch& batch, int64_t index, size_t batch_offset,
                           const char* skipped, std::vector<std::string_view>& out) {
    out.clear();
    const auto* stacks = batch.stacks();
    if (stacks == nullptr || index < 0 || static_cast<uint64_t>(index) >= stacks->size()) {
      return StackLookup::kBadReference;
    }
    const auto* frames = stacks->Get(static_cast<flatbuffers::uoffset_t>(index))->frames();
    const size_t depth = frames ? frames->size() : 0;
    if (depth > options_.max_frames_per_stack) {
      WarnTooDeep(batch_offset, depth, skipped);
      return StackLookup::kTooDeep;
    }
    for (size_t i = 0; i < depth; ++i) {
      const flatbuffers::String* name = StringAt(batch, frames->Get(i));
      if (name == nullptr) {
        out.clear();
        return StackLookup::kBadReference;
      }
      out.push_back(name->string_view());
    }
    return StackLookup::kResolved;
  }
  // The same for a stack index that may be kNotTaken (no stack: `out` left empty).
  StackLookup ResolveOptionalStack(const schema::Batch& batch, int64_t index, size_t batch_offset,
                                   const char* skipped, std::vector<std::string_view>& out) {
    if (index == kNotTaken) {
      out.clear();
      return StackLookup::kResolved;
    }
    return ResolveStack(batch, index, batch_offset, skipped, out);
  }

  // A schema category value; one this reader does not know (a newer writer, a corrupt file)
  // reads as other and is counted in `unknown`.
  static Category KnownCategory(schema::Category value, uint64_t& unknown) {
    std::optional<Category> category = CategoryFromSchemaValue(static_cast<uint32_t>(value));
    if (category) return *category;
    ++unknown;
    return Category::kOther;
  }
  bool LeftOutByOptions(int32_t stage_id, Category category) const {
    return (options_.stage_id && stage_id != *options_.stage_id) ||
           (options_.category && category != *options_.category);
  }
  uint64_t WeightOf(const schema::StackSample& sample) const {
    return options_.weight == WeightUnit::kNanoseconds ? sample.weight_ns() : sample.samples();
  }
  void LoadTaskTimes(const schema::Batch& batch) {
    const auto* rows = batch.task_times();
    if (rows == nullptr) return;
    for (const schema::TaskCategoryTime* row : *rows) {
      const Category category = KnownCategory(row->category(), bad_task_time_categories_);
      if (LeftOutByOptions(row->stage_id(), category)) continue;
      options_.task_times(options_.task_times_context,
                          TaskTimeRow{row->stage_id(), row->stage_attempt(), row->task_attempt_id(),
                                      category, row->samples(), row->time_ns()});
      ++summary_.task_time_rows_read;
    }
  }
  void PassCpuUse(const schema::Batch& batch) {
    const schema::CpuUse* cpu = batch.cpu();
    if (cpu == nullptr) return;
    CpuUseRow row;
    row.executor_id = batch.executor_id() ? batch.executor_id()->string_view() : "";
    row.host = batch.host() ? batch.host()->string_view() : "";
    row.pid = batch.pid();
    row.start_epoch_ns = batch.start_epoch_ns();
    row.end_epoch_ns = batch.end_epoch_ns();
    row.host_cpus = cpu->host_cpus();
    row.host_busy_ns = cpu->host_busy_ns();
    row.host_steal_ns = cpu->host_steal_ns();
    row.host_total_ns = cpu->host_total_ns();
    row.process_cpu_ns = cpu->process_cpu_ns();
    row.cgroup_version = cpu->cgroup_version();
    row.cgroup_quota_millicpus = cpu->cgroup_quota_millicpus();
    row.cgroup_periods = cpu->cgroup_periods();
    row.cgroup_throttled_periods = cpu->cgroup_throttled_periods();
    row.cgroup_throttled_ns = cpu->cgroup_throttled_ns();
    row.agent_cpu_ns = cpu->agent_cpu_ns();
    row.run_delay_polls = cpu->run_delay_polls();
    row.run_delay_ns = cpu->run_delay_ns();
    run_delay_steps_.clear();
    if (const auto* steps = cpu->run_delay_steps()) {
      for (const schema::RunDelayStep* step : *steps) {
        run_delay_steps_.push_back(
            {step->start_epoch_ms(), step->end_epoch_ms(), step->total_ns(), step->busiest_ns()});
      }
    }
    row.run_delay_steps = run_delay_steps_;
    options_.cpu_use(options_.cpu_use_context, row);
  }
  void PassMemoryUse(const schema::Batch& batch) {
    const schema::MemoryUse* memory = batch.memory();
    if (memory == nullptr) return;
    MemoryUseRow row;
    row.executor_id = batch.executor_id() ? batch.executor_id()->string_view() : "";
    row.host = batch.host() ? batch.host()->string_view() : "";
    row.pid = batch.pid();
    row.end_epoch_ns = batch.end_epoch_ns();
    row.rss_bytes = memory->rss_bytes();
    row.rss_peak_bytes = memory->rss_peak_bytes();
    row.threads = memory->threads();
    row.cgroup_version = memory->cgroup_version();
    row.cgroup_usage_bytes = memory->cgroup_usage_bytes();
    row.cgroup_limit_bytes = memory->cgroup_limit_bytes();
    row.cgroup_peak_bytes = memory->cgroup_peak_bytes();
    row.cgroup_anon_bytes = memory->cgroup_anon_bytes();
    row.cgroup_file_bytes = memory->cgroup_file_bytes();
    row.cgroup_oom_kills = memory->cgroup_oom_kills();
    row.cgroup_oom_kills_counted = memory->cgroup_oom_kills_counted();
    row.python_processes = memory->python_processes();
    row.python_rss_bytes = memory->python_rss_bytes();
    row.heap_used_bytes = memory->heap_used_bytes();
    row.heap_committed_bytes = memory->heap_committed_bytes();
    row.heap_max_bytes = memory->heap_max_bytes();
    row.heap_used_peak_bytes = memory->heap_used_peak_bytes();
    row.heap_used_after_gc_bytes = memory->heap_used_after_gc_bytes();
    row.old_used_after_gc_bytes = memory->old_used_after_gc_bytes();
    row.metaspace_used_bytes = memory->metaspace_used_bytes();
    row.metaspace_committed_bytes = memory->metaspace_committed_bytes();
    row.class_space_used_bytes = memory->class_space_used_bytes();
    row.java_threads = memory->java_threads();
    row.gc_collections = memory->gc_collections();
    row.direct_buffer_bytes = memory->direct_buffer_bytes();
    row.direct_buffers = memory->direct_buffers();
    row.direct_buffer_max_bytes = memory->direct_buffer_max_bytes();
    row.mapped_buffer_bytes = memory->mapped_buffer_bytes();
    row.mapped_buffers = memory->mapped_buffers();
    row.spark_execution_bytes = memory->spark_execution_bytes();
    row.spark_storage_bytes = memory->spark_storage_bytes();
    // Pools: a pool without a name, or past the limit, is left out (a writer sends a handful).
    HeapPoolRow pools[MemoryUseRow::kMaxHeapPools];
    size_t pool_count = 0;
    if (const auto* heap_pools = memory->heap_pools()) {
      for (const schema::HeapPool* pool : *heap_pools) {
        if (pool_count == MemoryUseRow::kMaxHeapPools) break;
        if (pool == nullptr || pool->name() == nullptr) continue;
        pools[pool_count++] = HeapPoolRow{pool->name()->string_view(), pool->used_bytes(),
                                          pool->committed_bytes(), pool->max_bytes()};
      }
    }
    row.heap_pools = std::span<const HeapPoolRow>(pools, pool_count);
    options_.memory_use(options_.memory_use_context, row);
  }
  // The batch's sampling mode, interval and executor, for the summary (bounded: a hostile file
  // cannot grow the sets without limit).
  void NoteBatch(const schema::Batch& batch) {
    if (const auto* mode = batch.mode();
        mode != nullptr && mode->size() <= kMaxModeBytes &&
        summary_.modes.size() < ProfileFileSummary::kMaxKeptModes) {
      summary_.modes.insert(mode->str());
    }
    if (batch.interval_ns() > 0 &&
        (summary_.min_interval_ns == 0 || batch.interval_ns() < summary_.min_interval_ns)) {
      summary_.min_interval_ns = batch.interval_ns();
    }
    if (const auto* executor = batch.executor_id();
        executor != nullptr && summary_.executor_ids.size() < kMaxKeptExecutorIds &&
        executor->size() <= 256 && summary_.executor_ids.insert(executor->str()).second) {
      ++summary_.executors;
    }
  }

  const ProfileFileReadOptions& options_;
  ProfileModel* model_ = nullptr;
  StageModelSelector select_ = nullptr;
  void* context_ = nullptr;
  uint64_t untagged_weight_ = 0;
  ReadReport& report_;
  ProfileFileSummary& summary_;
  std::vector<FrameId> frame_ids_;  // batch string index -> model frame id
  std::vector<FrameId> path_;
  std::vector<std::string_view> untagged_frames_;
  std::vector<std::string_view> waiter_frames_;
  std::vector<std::string_view> holder_frames_;
  std::vector<RunDelayStepRow> run_delay_steps_;
  uint64_t bad_categories_ = 0;
  uint64_t bad_task_time_categories_ = 0;
};

}  // namespace

bool LooksLikeProfileFile(std::string_view bytes) {
  return bytes.size() >= kMinimumBatchBytes &&
         std::memcmp(bytes.data() + 2 * kSizePrefixBytes, schema::BatchIdentifier(), 4) == 0;
}

namespace {

Status ReadBatches(std::string_view bytes, const ProfileFileReadOptions& options,
                   BatchLoader& loader, ReadReport& report, ProfileFileSummary& counts) {
  std::vector<uint64_t> aligned;  // scratch copy for a batch that does not start 8-byte aligned
  std::string first_error;

  size_t offset = 0;
  uint64_t batch_number = 0;
  while (offset < bytes.size()) {
    ++batch_number;
    size_t remaining = bytes.size() - offset;
    if (remaining < kSizePrefixBytes) {
      report.Warn(At(options, offset) + std::to_string(remaining) +
                  " trailing byte(s) are too few for a batch size prefix (truncated file?)");
      break;
    }
    uint32_t batch_bytes = ReadLittleEndian32(bytes.data() + offset);
    std::string where = At(options, offset) + "batch " + std::to_string(batch_number) + ": ";
    if (batch_bytes > remaining - kSizePrefixBytes) {
      report.Warn(where + "declares " + std::to_string(batch_bytes) + " bytes but only " +
                  std::to_string(remaining - kSizePrefixBytes) +
                  " remain (truncated file?); stopped reading here");
      ++counts.batches_skipped;
      break;
    }
    size_t buffer_bytes = kSizePrefixBytes + batch_bytes;
    const char* buffer = bytes.data() + offset;
    offset += buffer_bytes;
    if (batch_bytes > options.max_batch_bytes) {
      report.Warn(where + "declares " + std::to_string(batch_bytes) +
                  " bytes, more than the limit of " + std::to_string(options.max_batch_bytes) +
                  "; skipped");
      ++counts.batches_skipped;
      continue;
    }
    if (buffer_bytes < kMinimumBatchBytes ||
        !schema::SizePrefixedBatchBufferHasIdentifier(buffer)) {
      report.Warn(where + "is not a sparkprof batch (no \"SPPF\" identifier); skipped");
      ++counts.batches_skipped;
      continue;
    }
    if (reinterpret_cast<uintptr_t>(buffer) % alignof(uint64_t) != 0) {
      aligned.assign((buffer_bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
      std::memcpy(aligned.data(), buffer, buffer_bytes);
      buffer = reinterpret_cast<const char*>(aligned.data());
    }
    flatbuffers::Verifier::Options verifier_options;
    verifier_options.max_tables = options.max_tables_per_batch;
    flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(buffer), buffer_bytes,
                                   verifier_options);
    if (!schema::VerifySizePrefixedBatchBuffer(verifier)) {
      report.Warn(where + "failed flatbuffers verification (corrupt, or over " +
                  std::to_string(options.max_tables_per_batch) + " tables); skipped");
      ++counts.batches_skipped;
      continue;
    }
    const schema::Batch* batch = schema::GetSizePrefixedBatch(buffer);
    if (batch->schema_version() > kSupportedSchemaVersion) {
      report.Warn(where + "has schema version " + std::to_string(batch->schema_version()) +
                  ", newer than this sparkprof reads (" + std::to_string(kSupportedSchemaVersion) +
                  "); skipped");
      ++counts.batches_skipped;
      continue;
    }
    loader.Load(*batch, offset - buffer_bytes);
    ++counts.batches_read;
  }
  if (loader.bad_categories() > 0) {
    report.Warn(options.source_name + ": " + std::to_string(loader.bad_categories()) +
                " sample(s) have an unknown category value; counted as other");
  }
  if (loader.bad_task_time_categories() > 0) {
    report.Warn(options.source_name + ": " + std::to_string(loader.bad_task_time_categories()) +
                " task-time row(s) have an unknown category value; counted as other");
  }
  if (counts.batches_read == 0) {
    return Corrupt(options.source_name + ": no readable sparkprof batch" +
                   (report.messages.empty() ? std::string(" (empty file)")
                                            : "; first problem: " + report.messages.front()));
  }
  return Status::Ok();
}

}  // namespace

Status ReadProfileFile(std::string_view bytes, const ProfileFileReadOptions& options,
                       ProfileModel& model, ReadReport& report, ProfileFileSummary* summary) {
  ProfileFileSummary local_summary;
  ProfileFileSummary& counts = summary ? *summary : local_summary;
  BatchLoader loader(options, &model, report, counts);
  return ReadBatches(bytes, options, loader, report, counts);
}

Status ReadProfileFileByStage(std::string_view bytes, const ProfileFileReadOptions& options,
                              StageModelSelector select, void* context, uint64_t& untagged_weight,
                              ReadReport& report, ProfileFileSummary* summary) {
  ProfileFileSummary local_summary;
  ProfileFileSummary& counts = summary ? *summary : local_summary;
  BatchLoader loader(options, select, context, report, counts);
  Status status = ReadBatches(bytes, options, loader, report, counts);
  untagged_weight = loader.untagged_weight();
  return status;
}

}  // namespace sparkprof::flamegraph
