#include "driver-aggregator/driver_aggregator.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "analyzer/profile/stage_profiles.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/markdown_report.h"
#include "analyzer/report/text_report.h"
#include "common/atomic_file.h"
#include "common/json_writer.h"
#include "driver-aggregator/stage_call_tree.h"
#include "driver-aggregator/stage_diff.h"
#include "flamegraph/html_renderer.h"
#include "flatbuffers/flatbuffers.h"
#include "schema/profile_generated.h"

namespace sparkprof::driver {
namespace {

constexpr uint32_t kSupportedSchemaVersion = 1;
constexpr flamegraph::FrameId kUnmapped = UINT32_MAX;
// Markers in the per-batch stack -> node cache (node ids never get this large: the tree is capped).
constexpr flamegraph::NodeId kUnresolved = UINT32_MAX;
constexpr flamegraph::NodeId kInvalidStack = UINT32_MAX - 1;
constexpr flamegraph::NodeId kFoldedStack = UINT32_MAX - 2;

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }
double SecondsFromMs(int64_t ms) { return static_cast<double>(ms) / 1e3; }

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

const char* IngestOutcomeName(IngestOutcome outcome) {
  switch (outcome) {
    case IngestOutcome::kAccepted:
      return "accepted";
    case IngestOutcome::kTooLarge:
      return "too_large";
    case IngestOutcome::kInvalid:
      return "invalid";
    case IngestOutcome::kUnsupportedVersion:
      return "unsupported_version";
    case IngestOutcome::kRateLimited:
      return "rate_limited";
    case IngestOutcome::kQueueFull:
      return "queue_full";
  }
  return "unknown";
}

struct DriverAggregator::StageProfile {
  explicit StageProfile(size_t max_nodes) : tree(max_nodes) {}
  StageCallTree tree;
  uint64_t last_fed = 0;
};

struct DriverAggregator::FoldScratch {
  struct PendingStack {
    uint32_t stack;  // index in the batch's stacks
    StageCallTree::StackKey key;
    bool too_deep;  // past max_frames_per_stack: folds, not hashed
  };
  std::vector<uint32_t> order;  // the batch's samples with a stage, grouped by stage
  // Per stage, a batch-local string index -> the stage's frame id, a stack index -> its node.
  std::vector<flamegraph::FrameId> frame_ids;
  std::vector<flamegraph::NodeId> node_of_stack;
  std::vector<flamegraph::FrameId> path;
  std::vector<PendingStack> pending;  // stacks hashed, not yet looked up
};

// The last cumulative health an executor's agent reported, to add only what is new.
struct DriverAggregator::ExecutorHealth {
  uint64_t samples_taken = 0;
  uint64_t samples_dropped_ring_full = 0;
  uint64_t samples_walk_failed = 0;
  uint64_t stacks_dropped_cap = 0;
  uint64_t native_memory_bytes = 0;
};

DriverAggregator::DriverAggregator(AggregatorOptions options)
    : options_(std::move(options)), fold_scratch_(std::make_unique<FoldScratch>()) {}

DriverAggregator::~DriverAggregator() {
  if (ingest_queue_) ingest_queue_->Stop();  // before anything the ingest thread uses goes
  if (exposer_) exposer_->Stop();
}

Result<std::unique_ptr<DriverAggregator>> DriverAggregator::Start(AggregatorOptions options) {
  std::unique_ptr<DriverAggregator> aggregator(new DriverAggregator(std::move(options)));
  SPARKPROF_ASSIGN_OR_RETURN(aggregator->metrics_,
                             AggregatorMetrics::Register(aggregator->registry_));
  aggregator->registry_.HoldUntilCommonLabels(aggregator->options_.hold_metrics_until_application);
  SPARKPROF_RETURN_IF_ERROR(aggregator->s3a_.RegisterMetrics(aggregator->registry_));
  SPARKPROF_RETURN_IF_ERROR(aggregator->executor_metrics_.Register(aggregator->registry_));
  SPARKPROF_RETURN_IF_ERROR(aggregator->run_context_.Register(aggregator->registry_));
  SPARKPROF_RETURN_IF_ERROR(aggregator->streaming_metrics_.Register(aggregator->registry_));
  for (int i = 0; i < kIngestOutcomeCount; ++i) {  // every outcome visible from the first scrape
    aggregator->metrics_.batches->Add(
        {{"outcome", IngestOutcomeName(static_cast<IngestOutcome>(i))}});
  }
  if (!aggregator->options_.output_dir.empty()) {
    Status usable = UsableOutputDirectory(aggregator->options_.output_dir);
    if (!usable.ok()) return IoError(usable.message() + " (set spark.sparkprof.outputDir)");
  }
  aggregator->live_ = std::make_unique<LiveApplication>(aggregator->options_.live);
  DriverAggregator* self = aggregator.get();  // the exposer stops before the aggregator goes
  // The ingest thread stops first in the destructor; it folds with the arrival time, so the rate
  // limit counts batches as they came, not as they were folded.
  aggregator->ingest_queue_ = std::make_unique<IngestQueue>(
      aggregator->options_.ingest_queue,
      [self](std::span<const uint8_t> batch, IngestQueue::Clock::time_point queued) {
        self->IngestAt(batch, queued);
      });
  aggregator->registry_.AddCollectCallback([self] { self->RefreshLiveMetricsIfDue(); });
  if (!aggregator->options_.prometheus_bind_address.empty()) {
    auto exposer = metrics::HttpExposer::Start(aggregator->options_.prometheus_bind_address,
                                               [self] { return self->registry_.Render(); });
    // A taken port (a second driver on a shared gateway host in client mode) costs the
    // endpoint, not the application's reports and flame graphs.
    if (exposer.ok()) {
      aggregator->exposer_ = std::move(*exposer);
    } else {
      aggregator->metrics_error_ = exposer.status().message();
    }
  }
  return aggregator;
}

// Refusals only; an accepted batch is counted under the lock it already holds.
void DriverAggregator::Count(IngestOutcome outcome) {
  metrics_.batches->Add({{"outcome", IngestOutcomeName(outcome)}}).Increment();
  std::lock_guard<std::mutex> lock(mutex_);
  ++outcome_counts_[static_cast<int>(outcome)];
}

uint64_t DriverAggregator::outcome_count(IngestOutcome outcome) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return outcome_counts_[static_cast<int>(outcome)];
}

bool DriverAggregator::TakeRateToken(std::chrono::steady_clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (now - rate_window_start_ >= std::chrono::seconds(1)) {
    rate_window_start_ = now;
    rate_window_batches_ = 0;
  }
  if (rate_window_batches_ >= options_.max_batches_per_second) return false;
  ++rate_window_batches_;
  return true;
}

DriverAggregator::StageProfile& DriverAggregator::StageFor(StageKey key) {
  auto it = stages_.find(key);
  if (it == stages_.end()) {
    if (stages_.size() >= options_.max_stages && !stages_.empty()) {
      auto oldest = std::min_element(stages_.begin(), stages_.end(), [](auto& a, auto& b) {
        return a.second->last_fed < b.second->last_fed;
      });
      stages_.erase(oldest);
    }
    it = stages_.emplace(key, std::make_unique<StageProfile>(options_.max_nodes_per_stage)).first;
  }
  it->second->last_fed = ++stage_sequence_;
  return *it->second;
}

void DriverAggregator::EvictForNodeBudgetLocked(const StageProfile* keep) {
  size_t total = 0;
  for (const auto& entry : stages_) total += entry.second->tree.node_count();
  while (total > options_.max_total_nodes && stages_.size() > 1) {
    auto oldest = stages_.end();
    for (auto it = stages_.begin(); it != stages_.end(); ++it) {
      if (it->second.get() == keep) continue;
      if (oldest == stages_.end() || it->second->last_fed < oldest->second->last_fed) oldest = it;
    }
    if (oldest == stages_.end()) break;
    total -= oldest->second->tree.node_count();
    stages_.erase(oldest);
  }
}

IngestOutcome DriverAggregator::RefuseTooLarge(size_t bytes) {
  Count(IngestOutcome::kTooLarge);
  return IngestOutcome::kTooLarge;
}

bool DriverAggregator::DrainIngestQueue(std::chrono::milliseconds timeout) {
  return ingest_queue_->Drain(timeout);
}

IngestOutcome DriverAggregator::Ingest(std::span<const uint8_t> bytes) {
  return IngestAt(bytes, std::chrono::steady_clock::now());
}

IngestOutcome DriverAggregator::IngestAt(std::span<const uint8_t> bytes,
                                         std::chrono::steady_clock::time_point now) {
  if (bytes.size() > options_.max_batch_bytes) return RefuseTooLarge(bytes.size());
  if (!TakeRateToken(now)) {
    Count(IngestOutcome::kRateLimited);
    return IngestOutcome::kRateLimited;
  }
  if (bytes.size() < 2 * sizeof(flatbuffers::uoffset_t) ||
      !schema::BatchBufferHasIdentifier(bytes.data())) {
    Count(IngestOutcome::kInvalid);
    return IngestOutcome::kInvalid;
  }
  // The Verifier checks alignment: copy only a batch that does not start 8-byte aligned.
  const uint8_t* buffer = bytes.data();
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(buffer) % alignof(uint64_t) != 0) {
    aligned.resize((bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    buffer = reinterpret_cast<const uint8_t*>(aligned.data());
  }
  flatbuffers::Verifier::Options verifier_options;
  verifier_options.max_tables = options_.max_tables_per_batch;
  flatbuffers::Verifier verifier(buffer, bytes.size(), verifier_options);
  if (!schema::VerifyBatchBuffer(verifier)) {
    Count(IngestOutcome::kInvalid);
    return IngestOutcome::kInvalid;
  }
  const schema::Batch* batch = schema::GetBatch(buffer);
  if (batch->schema_version() > kSupportedSchemaVersion) {
    Count(IngestOutcome::kUnsupportedVersion);
    return IngestOutcome::kUnsupportedVersion;
  }

  // Metrics outside the lock: their updates are atomic.
  if (const auto* task_times = batch->task_times()) {
    for (const schema::TaskCategoryTime* time : *task_times) {
      auto category = flamegraph::CategoryFromSchemaValue(static_cast<uint32_t>(time->category()));
      int index = flamegraph::CategoryIndex(category.value_or(flamegraph::Category::kOther));
      if (time->task_attempt_id() < 0) {  // not task time; gc/jit/vm: the JVM's own threads
        if (prometheus::Counter* jvm_cpu = metrics_.jvm_thread_cpu_seconds[index])
          jvm_cpu->Increment(Seconds(time->time_ns()));
        continue;
      }
      metrics_.task_time_seconds[index]->Increment(Seconds(time->time_ns()));
    }
  }
  s3a_.Add(*batch);
  if (const schema::CpuUse* cpu = batch->cpu()) {
    metrics_.jvm_process_cpu_seconds->Increment(Seconds(cpu->process_cpu_ns()));
    metrics_.agent_cpu_seconds->Increment(Seconds(cpu->agent_cpu_ns()));
    if (cpu->cgroup_version() != 0) {
      metrics_.cgroup_throttled_seconds->Increment(Seconds(cpu->cgroup_throttled_ns()));
      metrics_.cgroup_periods->Increment(static_cast<double>(cpu->cgroup_periods()));
      metrics_.cgroup_periods_throttled->Increment(
          static_cast<double>(cpu->cgroup_throttled_periods()));
    }
  }
  if (const auto* pauses = batch->gc_pauses()) {
    for (const schema::GcPause* pause : *pauses) {
      if (pause->duration_ns() >= 0) {
        metrics_.gc_pause_seconds->Observe(Seconds(static_cast<uint64_t>(pause->duration_ns())));
      }
    }
  }

  std::lock_guard<std::mutex> lock(mutex_);
  if (const schema::AgentHealth* health = batch->health()) {
    std::string key = (batch->executor_id() ? batch->executor_id()->str() : std::string("?")) +
                      "@" + (batch->host() ? batch->host()->str() : std::string("?")) + ":" +
                      std::to_string(batch->pid());
    auto it = executors_.find(key);
    if (it == executors_.end() && executors_.size() < options_.max_executors) {
      it = executors_.emplace(key, std::make_unique<ExecutorHealth>()).first;
      metrics_.reporting_executors->Set(static_cast<double>(executors_.size()));
    }
    if (it != executors_.end()) {
      ExecutorHealth& last = *it->second;
      // Cumulative counters: add the growth; a smaller value means the agent restarted.
      auto add = [](prometheus::Counter* counter, uint64_t& previous, uint64_t now_value) {
        counter->Increment(
            static_cast<double>(now_value >= previous ? now_value - previous : now_value));
        previous = now_value;
      };
      add(metrics_.agent_samples, last.samples_taken, health->samples_taken());
      add(metrics_.agent_samples_dropped_ring_full, last.samples_dropped_ring_full,
          health->samples_dropped_ring_full());
      add(metrics_.agent_walk_failures, last.samples_walk_failed, health->samples_walk_failed());
      add(metrics_.agent_stacks_dropped, last.stacks_dropped_cap, health->stacks_dropped_cap());
      metrics_.agent_native_memory_bytes->Increment(
          static_cast<double>(health->native_memory_bytes()) -
          static_cast<double>(last.native_memory_bytes));
      last.native_memory_bytes = health->native_memory_bytes();
      if (const schema::MemoryUse* memory = batch->memory()) {
        const std::string executor = batch->executor_id() ? batch->executor_id()->str() : "?";
        const std::pair<const char*, uint64_t> kinds[] = {
            {"rss", memory->rss_bytes()},
            {"rss_peak", memory->rss_peak_bytes()},
            {"container_usage", memory->cgroup_usage_bytes()},
            {"container_limit", memory->cgroup_limit_bytes()},
            {"container_peak", memory->cgroup_peak_bytes()},
            {"python_rss", memory->python_rss_bytes()},
            {"heap_used", memory->heap_used_bytes()},
            {"heap_used_peak", memory->heap_used_peak_bytes()},
            {"heap_committed", memory->heap_committed_bytes()},
            {"heap_max", memory->heap_max_bytes()},
            {"heap_after_gc", memory->heap_used_after_gc_bytes()},
            {"old_after_gc", memory->old_used_after_gc_bytes()},
            {"metaspace", memory->metaspace_used_bytes()},
            {"direct_buffers", memory->direct_buffer_bytes()},
            {"direct_max", memory->direct_buffer_max_bytes()},
            {"mapped_buffers", memory->mapped_buffer_bytes()},
            {"spark_execution", memory->spark_execution_bytes()},
            {"spark_storage", memory->spark_storage_bytes()}};
        for (const auto& [kind, bytes] : kinds) {
          // A figure the JVM could not read (no cgroup, no limit) is not a series.
          if (bytes == 0) continue;
          metrics_.jvm_memory_bytes->Add({{"executor_id", executor}, {"kind", kind}})
              .Set(static_cast<double>(bytes));
        }
      }
    }
  }

  const auto* samples = batch->samples();
  const auto* stacks = batch->stacks();
  const auto* strings = batch->strings();
  if (samples != nullptr && stacks != nullptr && strings != nullptr) {
    FoldScratch& scratch = *fold_scratch_;
    // Group by stage so each stage's frame-id cache is built once per batch.
    std::vector<uint32_t>& order = scratch.order;
    order.clear();
    for (uint32_t i = 0; i < samples->size(); ++i) {
      if (samples->Get(i)->stage_id() >= 0) order.push_back(i);
    }
    auto key_of = [&](uint32_t i) {
      const schema::StackSample* sample = samples->Get(i);
      return StageKey{sample->stage_id(), sample->stage_attempt()};
    };
    auto by_stage = [&](uint32_t a, uint32_t b) { return key_of(a) < key_of(b); };
    if (!std::is_sorted(order.begin(), order.end(), by_stage)) {  // one stage: already sorted
      std::stable_sort(order.begin(), order.end(), by_stage);
    }
    const uint32_t string_count = strings->size();
    const uint32_t stack_count = stacks->size();
    auto depth_of = [&](uint32_t stack) -> size_t {
      const auto* frames = stacks->Get(stack)->frames();
      return frames ? frames->size() : 0;
    };
    // The stack's frames as the stage's frame ids (in scratch.path; valid until the next call),
    // or nullopt when a frame index is outside the batch's strings. Raw pointers in locals: the
    // compiler keeps them in registers across the (rare) call that interns a new string.
    static_assert(std::endian::native == std::endian::little, "frame indices read in place");
    auto translate = [&](StageCallTree& tree,
                         uint32_t stack) -> std::optional<std::span<const flamegraph::FrameId>> {
      const auto* frames = stacks->Get(stack)->frames();
      const size_t depth = frames ? frames->size() : 0;
      if (scratch.path.size() < depth) scratch.path.resize(depth);
      const uint32_t* indices = depth > 0 ? frames->data() : nullptr;
      flamegraph::FrameId* frame_ids = scratch.frame_ids.data();
      flamegraph::FrameId* path = scratch.path.data();
      for (size_t f = 0; f < depth; ++f) {
        const uint32_t index = indices[f];
        if (index >= string_count) return std::nullopt;
        flamegraph::FrameId frame = frame_ids[index];
        if (frame == kUnmapped) [[unlikely]] {
          frame = tree.InternFrame(strings->Get(index)->string_view());
          frame_ids[index] = frame;
        }
        path[f] = frame;
      }
      return std::span<const flamegraph::FrameId>(path, depth);
    };
    uint64_t folds = 0;
    StageProfile* stage = nullptr;
    for (size_t group = 0; group < order.size();) {
      const StageKey key = key_of(order[group]);
      size_t group_end = group + 1;
      while (group_end < order.size() && key_of(order[group_end]) == key) ++group_end;
      stage = &StageFor(key);
      StageCallTree& tree = stage->tree;
      // Per stage, each of the batch's stacks is resolved to its tree node once (the agent sends
      // one entry per stack, thread and category, so a stack is often named several times), and
      // each of the batch's strings is interned once.
      scratch.frame_ids.assign(string_count, kUnmapped);
      scratch.node_of_stack.assign(stack_count, kUnresolved);
      // First every stack the stage's samples name is translated and hashed, then looked up with
      // its slot fetched a few stacks ahead: the lookups do not wait on memory one by one.
      scratch.pending.clear();
      for (size_t s = group; s < group_end; ++s) {
        uint32_t stack = samples->Get(order[s])->stack();
        if (stack >= stack_count || scratch.node_of_stack[stack] != kUnresolved) continue;
        if (depth_of(stack) > options_.max_frames_per_stack) {
          scratch.node_of_stack[stack] = kFoldedStack;  // until resolved below
          scratch.pending.push_back({stack, StageCallTree::StackKey{}, /*too_deep=*/true});
        } else if (auto path = translate(tree, stack)) {
          scratch.node_of_stack[stack] = kFoldedStack;  // until resolved below
          scratch.pending.push_back({stack, StageCallTree::KeyOf(*path), /*too_deep=*/false});
        } else {
          scratch.node_of_stack[stack] = kInvalidStack;  // a frame index outside the strings
        }
      }
      constexpr size_t kPrefetchAhead = 8;
      for (size_t p = 0; p < scratch.pending.size(); ++p) {
        if (p + kPrefetchAhead < scratch.pending.size()) {
          tree.Prefetch(scratch.pending[p + kPrefetchAhead].key);
        }
        const FoldScratch::PendingStack& pending = scratch.pending[p];
        flamegraph::NodeId node = flamegraph::kNoNode;
        if (!pending.too_deep && !tree.Find(pending.key, node)) {
          // A stack already in the tree is always found; only new nodes count against the cap.
          node = tree.FindOrInsert(*translate(tree, pending.stack), pending.key);  // valid above
        }
        if (node == flamegraph::kNoNode) {
          // Made now, as when each stack was resolved at its first sample: later stacks find
          // the tree as full as before.
          tree.OverflowNode();
          node = kFoldedStack;
        }
        scratch.node_of_stack[pending.stack] = node;
      }
      for (size_t s = group; s < group_end; ++s) {
        const schema::StackSample* sample = samples->Get(order[s]);
        if (sample->stack() >= stack_count) continue;
        flamegraph::NodeId target = scratch.node_of_stack[sample->stack()];
        if (target == kInvalidStack) continue;
        if (target == kFoldedStack) {
          ++folds;
          target = tree.OverflowNode();
        }
        auto category =
            flamegraph::CategoryFromSchemaValue(static_cast<uint32_t>(sample->category()))
                .value_or(flamegraph::Category::kOther);
        tree.AddWeight(target, category, sample->weight_ns());
      }
      group = group_end;
    }
    EvictForNodeBudgetLocked(stage);
    if (folds > 0) metrics_.stack_overflow_folds->Increment(static_cast<double>(folds));
  }
  SaveToProfileFileLocked(bytes);
  ++outcome_counts_[static_cast<int>(IngestOutcome::kAccepted)];
  metrics_.batches->Add({{"outcome", "accepted"}}).Increment();
  metrics_.batch_bytes->Increment(static_cast<double>(bytes.size()));
  return IngestOutcome::kAccepted;
}

void DriverAggregator::SaveToProfileFileLocked(std::span<const uint8_t> bytes) {
  if (options_.output_dir.empty() || options_.max_profile_file_bytes == 0) return;
  if (profile_file_sealed_) {
    ++batches_after_report_;
    return;
  }
  if (!profile_file_.is_open()) {
    if (profile_file_failed_) return;
    std::string dir = application_dir_.empty() ? options_.output_dir : application_dir_;
    if (!profile_file_.Open((std::filesystem::path(dir) / "profile.sparkprof").string()).ok()) {
      profile_file_failed_ = true;
      return;
    }
  }
  profile_file_.Append(bytes);
}

Status DriverAggregator::OnEvent(std::string_view json_line) {
  Status status = live_->OnEventLine(json_line);
  metrics_.events[status.ok() ? kEventAccepted : kEventRejected]->Increment();
  return status;
}

void DriverAggregator::SetApplicationLabels(const std::string& id, const std::string& name) {
  registry_.SetCommonLabels({{"application_id", id}, {"application_name", name}});
}

void DriverAggregator::RefreshLiveMetricsIfDue() {
  LiveCounts counts = live_->Counts();
  metrics_.running_tasks->Set(static_cast<double>(counts.running_tasks));
  metrics_.pending_tasks->Set(static_cast<double>(counts.pending_tasks));
  metrics_.executors->Set(static_cast<double>(counts.executors));
  metrics_.task_slots->Set(static_cast<double>(counts.task_slots));
  {
    std::lock_guard<std::mutex> lock(live_metrics_mutex_);
    auto now = std::chrono::steady_clock::now();
    if (last_live_refresh_ != std::chrono::steady_clock::time_point{} &&
        now - last_live_refresh_ < std::chrono::milliseconds(options_.live_refresh_interval_ms)) {
      return;
    }
  }
  RefreshLiveMetrics(options_.live_extend_to_now ? WallClockMs() : -1);
}

void DriverAggregator::RefreshLiveMetrics(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(live_metrics_mutex_);
  last_live_refresh_ = std::chrono::steady_clock::now();
  LiveSnapshot snapshot = live_->Snapshot(now_ms);
  metrics_.running_tasks->Set(static_cast<double>(snapshot.counts.running_tasks));
  metrics_.pending_tasks->Set(static_cast<double>(snapshot.counts.pending_tasks));
  metrics_.executors->Set(static_cast<double>(snapshot.counts.executors));
  metrics_.task_slots->Set(static_cast<double>(snapshot.counts.task_slots));
  if (!snapshot.has_model_figures) return;  // after FinishApplication: keep the final figures
  {
    std::lock_guard<std::mutex> state_lock(mutex_);
    if (!application_labels_set_ && !snapshot.application_id.empty()) {
      application_labels_set_ = true;
      SetApplicationLabels(snapshot.application_id, snapshot.application_name);
    }
  }
  const diagnosis::PhaseBreakdown& p = snapshot.phases;
  metrics_.resource_wait_seconds->Set(SecondsFromMs(p.resource_wait_ms + p.slot_starved_wall_ms));
  metrics_.phase_compute_seconds->Set(SecondsFromMs(p.compute_ms));
  metrics_.phase_task_wait_seconds->Set(SecondsFromMs(p.task_wait_ms));
  metrics_.phase_io_write_seconds->Set(SecondsFromMs(p.io_write_ms));
  metrics_.phase_wall_seconds->Set(SecondsFromMs(p.wall_ms));
  const std::array<int64_t, diagnosis::kPhaseCount> phase_ms = diagnosis::PhaseMs(p);
  for (int i = 0; i < diagnosis::kPhaseCount; ++i) {
    metrics_.phase_breakdown_ratio->Add({{"phase", diagnosis::kPhaseNames[i]}})
        .Set(p.Ratio(phase_ms[i]));
  }
  if (snapshot.memory_spill_bytes > spill_memory_reported_) {
    metrics_.spill_memory_bytes->Increment(
        static_cast<double>(snapshot.memory_spill_bytes - spill_memory_reported_));
    spill_memory_reported_ = snapshot.memory_spill_bytes;
  }
  if (snapshot.disk_spill_bytes > spill_disk_reported_) {
    metrics_.spill_disk_bytes->Increment(
        static_cast<double>(snapshot.disk_spill_bytes - spill_disk_reported_));
    spill_disk_reported_ = snapshot.disk_spill_bytes;
  }
  metrics_.stage_skew_ratio->Set(snapshot.worst_skew_ratio);
  executor_metrics_.Update(snapshot);
  streaming_metrics_.Update(snapshot);
  run_context_.UpdatePhases(snapshot.phases, snapshot.model_end_ms);
  run_context_.UpdateAirflow(ReadAirflowContext(snapshot.spark_properties, ::getenv));
  for (const CompletedStage& stage : snapshot.newly_completed) {
    prometheus::Histogram* histogram = stage.write_stage ? metrics_.task_duration_write_seconds
                                                         : metrics_.task_duration_compute_seconds;
    for (int64_t ms : stage.successful_task_ms) histogram->Observe(SecondsFromMs(ms));
  }
}

Result<std::vector<std::string>> DriverAggregator::FinishApplication() {
  std::call_once(finish_once_, [this] {
    RefreshLiveMetrics(options_.live_extend_to_now ? WallClockMs() : -1);
    std::string name = live_->ApplicationId();
    if (name.empty()) name = "live application";
    // Every sample that reached the driver is in the saved profile: the diagnosis reads it back
    // as `sparkprof analyze --profile` does, so the live and offline reports agree.
    // The file is sealed first: a batch arriving later (the driver's own agent, a straggling
    // executor) is counted, not appended, so the file stays what the report read.
    std::string profile_path;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (profile_file_.is_open() && profile_file_.bytes_written() > 0) {
        profile_path = profile_file_.path();
      }
      profile_file_.Seal();  // complete: its in-progress marker goes
      profile_file_sealed_ = true;
    }
    Result<report::Analysis> analysis = live_->Finish(
        name, [this](model::ApplicationModel& model) { s3a_.ApplyTo(model); }, profile_path);
    if (!analysis.ok()) {
      finish_result_ = analysis.status();
      return;
    }
    std::string dir = OutputDirectory();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int i = 0; i < kIngestOutcomeCount; ++i) {
        analysis->driver_batches.emplace_back(IngestOutcomeName(static_cast<IngestOutcome>(i)),
                                              outcome_counts_[i]);
      }
    }
    const std::vector<const report::Analysis*> one = {&analysis.value()};
    const std::pair<const char*, std::string> reports[] = {
        {"report.txt", report::RenderText(*analysis)},
        {"report.json", report::RenderJson(one)},
        {"report.md", report::RenderMarkdown(*analysis)},
        {"report.html", report::RenderHtml(one)}};
    if (dir.empty()) {
      finish_result_ =
          InvalidArgument("no output directory configured (spark.sparkprof.outputDir)");
      return;
    }
    std::vector<std::string> paths;
    for (const auto& [file_name, contents] : reports) {
      std::string path = (std::filesystem::path(dir) / file_name).string();
      Status written = WriteFileAtomically(path, contents);
      if (!written.ok()) {
        finish_result_ = written;
        return;
      }
      paths.push_back(path);
    }
    finish_result_ = std::move(paths);
  });
  return finish_result_;
}

Status DriverAggregator::SetApplication(const std::string& application_id,
                                        const std::string& application_name) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    application_labels_set_ = true;
    SetApplicationLabels(application_id, application_name);
    if (application_info_ != nullptr) application_info_->Set(0);
    application_info_ = &metrics_.application_info->Add(
        {{"application_id", application_id}, {"application_name", application_name}});
    application_info_->Set(1);
  }
  if (options_.output_dir.empty()) return Status::Ok();
  // The same name `analyze --profile DIR` looks for (profile::FindProfileFor).
  const std::string name = profile::ApplicationDirectoryName(application_id);
  std::string dir = (std::filesystem::path(options_.output_dir) / name).string();
  SPARKPROF_RETURN_IF_ERROR(CreateOwnDirectory(options_.output_dir, name));
  std::lock_guard<std::mutex> lock(mutex_);
  application_dir_ = dir;
  // Batches that came before the id was known start the application's profile (a file left
  // in the output directory's top would be a stray, half of no application); otherwise the
  // next accepted batch starts it.
  const bool moved =
      profile_file_.is_open() && profile_file_.bytes_written() > 0 &&
      profile_file_.MoveTo((std::filesystem::path(dir) / "profile.sparkprof").string()).ok();
  if (!moved) profile_file_.Close();
  profile_file_failed_ = false;
  return Status::Ok();
}

std::string DriverAggregator::OutputDirectory() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return application_dir_.empty() ? options_.output_dir : application_dir_;
}

uint64_t DriverAggregator::StageWeightNs(StageKey stage) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = stages_.find(stage);
  return it == stages_.end() ? 0 : it->second->tree.model().total_weight();
}

namespace {

// The stage attempt's flame graph page, as the written file and the UI tab show it.
std::string RenderStageFlameGraph(const flamegraph::ProfileModel& model, StageKey stage) {
  // Keep the page small: drop subtrees under 0.05% of the stage's time.
  flamegraph::ProfileModel pruned = model.Pruned(model.total_weight() / 2000);
  flamegraph::HtmlRenderOptions render;
  render.title = "sparkprof: stage " + std::to_string(stage.stage_id) + " (attempt " +
                 std::to_string(stage.stage_attempt) + ")";
  char sampled[64];
  std::snprintf(sampled, sizeof(sampled), "%.3f s sampled task time",
                Seconds(model.total_weight()));
  render.subtitle = sampled;
  std::string html;
  flamegraph::RenderHtml(pruned, render, nullptr, html);
  return html;
}

// The end's report.json, when written and of a sane size; "" otherwise.
std::string ReadReportJson(const std::string& dir) {
  constexpr uintmax_t kMaxReportBytes = uintmax_t{256} << 20;
  std::error_code error;
  const std::filesystem::path path = std::filesystem::path(dir) / "report.json";
  const uintmax_t bytes = std::filesystem::file_size(path, error);
  if (error || bytes == 0 || bytes > kMaxReportBytes) return {};
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return {};
  std::string text(static_cast<size_t>(bytes), '\0');
  const size_t read = std::fread(text.data(), 1, text.size(), file);
  std::fclose(file);
  text.resize(read);
  return text;
}

}  // namespace

Result<std::string> DriverAggregator::WriteStageFlameGraph(int32_t stage_id,
                                                           int32_t stage_attempt) {
  if (options_.output_dir.empty()) {
    return InvalidArgument("no flame graph directory configured (spark.sparkprof.outputDir)");
  }
  // Batches of the stage may still wait in the queue behind its completion: fold them first.
  ingest_queue_->Drain(
      std::chrono::milliseconds(std::max<int64_t>(options_.flamegraph_drain_timeout_ms, 0)));
  std::string html;
  std::string dir;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    profile_file_.Flush();
    dir = application_dir_.empty() ? options_.output_dir : application_dir_;
    auto it = stages_.find(StageKey{stage_id, stage_attempt});
    if (it == stages_.end() || it->second->tree.model().total_weight() == 0) {
      return NotFound("no samples arrived for stage " + std::to_string(stage_id) + " attempt " +
                      std::to_string(stage_attempt));
    }
    const StageKey key{stage_id, stage_attempt};
    if (!flamegraphs_written_.contains(key) &&
        flamegraphs_written_.size() >= options_.max_flamegraph_files) {
      metrics_.flamegraphs_over_limit->Increment();
      return NotFound("stage " + std::to_string(stage_id) + " attempt " +
                      std::to_string(stage_attempt) + ": " +
                      std::to_string(options_.max_flamegraph_files) +
                      " flame graph files written already; `sparkprof flamegraph "
                      "profile.sparkprof --stage " +
                      std::to_string(stage_id) + "` draws it");
    }
    flamegraphs_written_.insert(key);
    html = RenderStageFlameGraph(it->second->tree.model(), key);
  }
  std::string path =
      (std::filesystem::path(dir) / ("stage-" + std::to_string(stage_id) + "-attempt-" +
                                     std::to_string(stage_attempt) + ".html"))
          .string();
  SPARKPROF_RETURN_IF_ERROR(WriteFileAtomically(path, html));
  metrics_.flamegraphs_written->Increment();
  return path;
}

std::string DriverAggregator::LiveUiJson() {
  std::lock_guard<std::mutex> ui_lock(ui_json_mutex_);
  const auto now = std::chrono::steady_clock::now();
  const bool finished = live_->finished();
  if (!ui_json_.empty() && ui_json_finished_ == finished &&
      now - ui_json_time_ < std::chrono::milliseconds(kUiJsonMinIntervalMs)) {
    return ui_json_;
  }
  std::string report_json;
  if (finished) {
    report_json = ReadReportJson(OutputDirectory());
  } else if (Result<report::Analysis> analysis = live_->AnalysisSoFar("live"); analysis.ok()) {
    const std::vector<const report::Analysis*> one = {&analysis.value()};
    report_json = report::RenderJson(one);
  }
  JsonWriter out(JsonWriter::Options{0, false});
  out.BeginObject();
  out.Field("schema", "sparkprof.ui/v1");
  out.Field("source", "live");
  out.Field("application_finished", finished);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out.Key("profiled_stages").BeginArray();
    for (const auto& [key, stage] : stages_) {
      if (stage->tree.model().total_weight() == 0) continue;  // no graph to draw
      out.BeginObject()
          .Field("stage_id", key.stage_id)
          .Field("attempt", key.stage_attempt)
          .FieldDouble("sampled_ms", static_cast<double>(stage->tree.model().total_weight()) / 1e6,
                       3)
          .EndObject();
    }
    out.EndArray();
    out.Key("agents").BeginArray();
    for (const auto& [key, health] : executors_) {
      const size_t at = key.rfind('@');  // "<executor id>@<host>:<pid>"
      out.BeginObject()
          .Field("executor_id", std::string_view(key).substr(0, at))
          .Field("process", at == std::string::npos ? std::string_view()
                                                    : std::string_view(key).substr(at + 1))
          .Key("samples_taken")
          .Uint(health->samples_taken)
          .Key("samples_dropped")
          .Uint(health->samples_dropped_ring_full)
          .Key("native_memory_bytes")
          .Uint(health->native_memory_bytes)
          .EndObject();
    }
    out.EndArray();
  }
  out.EndObject();
  std::string json = out.Take();
  json.pop_back();  // the closing brace: the report document goes in as it is
  json += ",\"report\":";
  json += report_json.empty() ? std::string("null") : report_json;
  json += "}";
  if (!report_json.empty()) {  // no report yet (the end's being written): ask again next time
    ui_json_ = json;
    ui_json_time_ = now;
    ui_json_finished_ = finished;
  }
  return json;
}

Result<std::string> DriverAggregator::StageFlameGraphHtml(StageKey stage) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = stages_.find(stage);
  if (it == stages_.end() || it->second->tree.model().total_weight() == 0) {
    return NotFound("no samples arrived for stage " + std::to_string(stage.stage_id) + " attempt " +
                    std::to_string(stage.stage_attempt));
  }
  return RenderStageFlameGraph(it->second->tree.model(), stage);
}

Result<std::string> DriverAggregator::StageDiffHtml(StageKey before, StageKey after) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto before_it = stages_.find(before);
  auto after_it = stages_.find(after);
  auto name = [](StageKey stage) {
    return "stage " + std::to_string(stage.stage_id) + " attempt " +
           std::to_string(stage.stage_attempt);
  };
  if (before_it == stages_.end()) return NotFound("no samples arrived for " + name(before));
  if (after_it == stages_.end()) return NotFound("no samples arrived for " + name(after));
  return RenderStageDiff(before_it->second->tree.model(), {before.stage_id, before.stage_attempt},
                         after_it->second->tree.model(), {after.stage_id, after.stage_attempt});
}

std::string DriverAggregator::StatusJson() const {
  const LiveCounts live = live_->Counts();  // before mutex_: the two locks are never nested
  JsonWriter json(JsonWriter::Options{0, false});
  json.BeginObject();
  json.Field("port", port());
  if (!metrics_error_.empty()) json.Field("metrics_error", metrics_error_);
  std::lock_guard<std::mutex> lock(mutex_);
  json.Key("batches").BeginObject();
  for (int i = 0; i < kIngestOutcomeCount; ++i) {
    json.Key(IngestOutcomeName(static_cast<IngestOutcome>(i))).Uint(outcome_counts_[i]);
  }
  json.EndObject();
  json.Key("ingest_queue").BeginObject();
  json.Key("batches").Uint(ingest_queue_->queued_batches());
  json.Key("bytes").Uint(ingest_queue_->queued_bytes());
  json.Key("max_batches").Uint(ingest_queue_->limits().max_batches);
  json.Key("max_bytes").Uint(ingest_queue_->limits().max_bytes);
  json.Key("dropped_full").Uint(ingest_queue_->dropped());
  json.Key("discarded_at_stop").Uint(ingest_queue_->discarded());
  json.EndObject();
  json.Key("stages").Uint(stages_.size());
  json.Key("executors").Uint(executors_.size());
  json.Key("live").BeginObject();
  json.Field("events", live.events);
  json.Field("rejected_lines", live.rejected_lines);
  json.Field("running_tasks", live.running_tasks);
  json.Field("pending_tasks", live.pending_tasks);
  json.Field("executors", live.executors);
  json.Field("application_ended", live.application_ended);
  json.EndObject();
  json.Field("output_dir", application_dir_.empty() ? options_.output_dir : application_dir_);
  json.Field("profile_file", profile_file_.path());
  json.Key("profile_file_bytes").Uint(profile_file_.bytes_written());
  json.Key("profile_file_batches_skipped").Uint(profile_file_.batches_skipped());
  json.Key("profile_file_batches_after_report").Uint(batches_after_report_);
  if (!profile_file_.error().empty()) json.Field("profile_file_error", profile_file_.error());
  json.EndObject();
  return json.Take();
}

}  // namespace sparkprof::driver
