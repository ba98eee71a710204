#include "native-agent/drain.h"

#include <algorithm>

#include "native-agent/agent_counters.h"
#include "native-agent/hotspot_layout.h"
#include "native-agent/stack_walker.h"

namespace sparkprof::agent {
namespace {

constexpr int64_t kKeepClosedTasksNs = 10'000'000'000;  // GC pauses are taken within seconds

// "G1 Conc#3" -> "G1 Conc#N": one name per pool, while "G1" and "C2" stay readable.
std::string JvmThreadPoolName(std::string_view name) {
  size_t hash = name.rfind('#');
  if (hash == std::string_view::npos) return std::string(name);
  return std::string(name.substr(0, hash + 1)) + NormaliseThreadName(name.substr(hash + 1));
}

}  // namespace

Drain::Drain(const DrainConfig& config, ThreadRegistry& registry, MethodNameResolver& resolver,
             GcMonitor& gc_monitor, TaskTimeline& timeline)
    : config_(config),
      registry_(registry),
      resolver_(resolver),
      gc_monitor_(gc_monitor),
      timeline_(timeline),
      cumulative_(config.max_stacks, strings_.Intern(Profile::kOverflowFrame),
                  config.max_profile_entries, /*samples_by_task=*/false),
      pending_(config.max_stacks, strings_.Intern(Profile::kOverflowFrame),
               config.max_profile_entries) {
  names_full_id_ = strings_.Intern("[names_full]");
  stale_id_ = strings_.Intern("[stale_jmethodID]");
}

uint32_t Drain::InternName(std::string_view name) {
  if (strings_.size() >= config_.max_strings) return names_full_id_;
  return strings_.Intern(name);
}

uint32_t Drain::FrameId(const void* method_id) {
  auto it = method_names_.find(method_id);
  if (it != method_names_.end()) return it->second;
  std::string name = resolver_.Resolve(method_id);
  uint32_t id;
  if (name.empty()) {
    ++stale_methods_;
    id = stale_id_;  // not cached: a stale id stays stale, and we must not pin a reused address
    return id;
  }
  id = InternName(name);
  if (method_names_.size() >= config_.max_cached_methods) method_names_.clear();
  method_names_.emplace(method_id, id);
  return id;
}

Category Drain::Classify(std::span<const uint32_t> frames_root_first, uint32_t thread_id) {
  matches_.clear();
  auto rules = classifier::FrameRules();
  for (auto it = frames_root_first.rbegin(); it != frames_root_first.rend(); ++it) {
    uint32_t id = *it;
    if (frame_rule_cache_.size() <= id) frame_rule_cache_.resize(strings_.size(), -2);
    int16_t& cached = frame_rule_cache_[id];
    if (cached == -2) {
      auto match = classifier::ClassifyFrame(strings_.Get(id));
      cached = match ? static_cast<int16_t>(match->rule_index) : -1;
    }
    if (cached >= 0) {
      const auto& rule = rules[static_cast<size_t>(cached)];
      matches_.push_back(classifier::FrameMatch{rule.category, rule.strength, cached});
    }
  }
  return classifier::CombineMatches(matches_, strings_.Get(thread_id));
}

Category Drain::ClassifyWait(std::span<const uint32_t> frames_root_first, bool blocked_in_jvm) {
  wait_matches_.clear();
  for (auto it = frames_root_first.rbegin(); it != frames_root_first.rend(); ++it) {
    uint32_t id = *it;
    if (frame_wait_cache_.size() <= id) frame_wait_cache_.resize(strings_.size(), -1);
    int32_t& cached = frame_wait_cache_[id];
    if (cached < 0) {
      classifier::WaitFrameMatch match = classifier::MatchWaitFrame(strings_.Get(id));
      cached = (match.primitive_rule + 1) | ((match.wait_rule + 1) << 16);
    }
    wait_matches_.push_back(classifier::WaitFrameMatch{static_cast<int16_t>((cached & 0xFFFF) - 1),
                                                       static_cast<int16_t>((cached >> 16) - 1)});
  }
  return classifier::CombineWaitMatches(wait_matches_, blocked_in_jvm);
}

std::array<Drain::SamplePart, 3> Drain::SplitSample(Category on_cpu, Category waited,
                                                    int64_t on_cpu_ns, int64_t off_cpu_ns,
                                                    int64_t cpu_starved_ns) {
  auto non_negative = [](int64_t ns) { return static_cast<uint64_t>(std::max<int64_t>(ns, 0)); };
  uint64_t off_ns = non_negative(off_cpu_ns);
  uint64_t starved_ns = std::min(non_negative(cpu_starved_ns), off_ns);
  std::array<SamplePart, 3> parts = {SamplePart{on_cpu, non_negative(on_cpu_ns), 0},
                                     SamplePart{waited, off_ns - starved_ns, 0},
                                     SamplePart{Category::kCpuStarved, starved_ns, 0}};
  // One sample is one sample: it counts in its largest part (the on-CPU one on ties, and when
  // all are 0, as a CPU sample that used no CPU does today).
  size_t largest = 0;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].time_ns > parts[largest].time_ns) largest = i;
  }
  parts[largest].samples = 1;
  return parts;
}

void Drain::DrainThread(ThreadState* state) {
  if (state->ring.Peek() == nullptr) return;
  uint32_t thread_id = InternName(NormaliseThreadName(state->name));
  while (const SampleRecord* record = state->ring.Peek()) {
    if (record->num_frames == kIdleOnlyRecord) {
      // Recorded as the thread's tag changed: the idle time of its last sample's wait, and the
      // CPU it used after its last CPU-timer sample while left to that timer (busy).
      auto idle_ns = static_cast<uint64_t>(std::max(record->idle_before_us, 0)) * 1000;
      if (idle_ns > 0 && state->has_last_sample) {
        AddToProfiles(state->last_frames, thread_id, state->last_tag, state->last_wait_category,
                      idle_ns, /*samples=*/0);
      }
      if (record->weight_ns > 0 && state->has_last_sample) {
        AddToProfiles(state->last_frames, thread_id, state->last_tag, state->last_category,
                      static_cast<uint64_t>(record->weight_ns), /*samples=*/0);
      }
      state->ring.Pop();
      continue;
    }
    frame_ids_.clear();
    Category category;
    Category waited = Category::kOffCpuOther;  // a failed walk's off-CPU time too
    if (record->num_frames <= 0) {
      ++walk_outcomes_.failed[record->num_frames];
      frame_ids_.push_back(InternName(WalkErrorFrameName(record->num_frames)));
      category = Category::kOther;
    } else {
      if (record->partial_walk_error != 0) {
        ++walk_outcomes_.partial[record->partial_walk_error];
      } else {
        ++walk_outcomes_.complete;
      }
      int frames = std::min(record->num_frames, state->ring.depth());
      for (int i = frames - 1; i >= 0; --i)
        frame_ids_.push_back(FrameId(record->frames[i].method_id));
      category = Classify(frame_ids_, thread_id);
      // Also for a sample all on CPU: idle time the next one carries may be charged to it.
      waited = ClassifyWait(frame_ids_, record->jvm_thread_state == kThreadBlocked);
      // The walk broke below these frames: the leaf says where and why.
      if (record->partial_walk_error != 0)
        frame_ids_.push_back(InternName(WalkErrorFrameName(record->partial_walk_error)));
    }
    TaskTag tag = record->tag;
    // Time the thread spent unsignalled in its previous sample's wait (the timer thread saw it
    // idle there) goes to that sample's stack and wait kind.
    uint64_t idle_before_ns = static_cast<uint64_t>(std::max(record->idle_before_us, 0)) * 1000;
    if (idle_before_ns > 0 && state->has_last_sample) {
      AddToProfiles(state->last_frames, thread_id, state->last_tag, state->last_wait_category,
                    idle_before_ns, /*samples=*/0);
      idle_before_ns = 0;
    }
    // A task thread's wall sample (mode cpu+wall) becomes up to three parts with one stack: its
    // on-CPU time as classified above, its off-CPU time by what it waited in, and the run delay.
    std::array<SamplePart, 3> parts = SplitSample(category, waited, record->weight_ns,
                                                  record->off_cpu_ns, record->cpu_starved_ns);
    parts[1].time_ns += idle_before_ns;  // no previous sample to give it to: this one's wait
    state->ring.Pop();
    state->last_frames.assign(frame_ids_.begin(), frame_ids_.end());
    state->last_tag = tag;
    state->last_category = category;
    state->last_wait_category = waited;
    state->has_last_sample = true;
    bool waited_on_python = false;
    for (const SamplePart& part : parts) {
      if (part.time_ns == 0 && part.samples == 0) continue;
      waited_on_python |= part.category == Category::kPythonWait && part.time_ns > 0;
      AddToProfiles(frame_ids_, thread_id, tag, part.category, part.time_ns, part.samples);
    }
    if (waited_on_python) {
      recent_tasks_.RememberPythonWait(tag, frame_ids_);
    } else if (tag.is_task() && recent_tasks_.Find(tag.task_attempt_id) == nullptr) {
      recent_tasks_.Remember(tag);
    }
  }
}

bool Drain::AddPythonProfile(const PythonTaskProfile& profile) {
  TaskTag tag;
  frame_ids_.clear();
  if (const RecentTasks::Entry* entry = recent_tasks_.Find(profile.task_attempt_id)) {
    tag = entry->tag;
    frame_ids_.assign(entry->python_wait_stack.begin(), entry->python_wait_stack.end());
  } else if (std::optional<TaskTag> found = timeline_.FindTask(profile.task_attempt_id)) {
    tag = *found;
  } else {
    return false;
  }
  frame_ids_.push_back(InternName(kPythonWorkerFrame));
  const size_t base = frame_ids_.size();
  const uint32_t thread_id = InternName(kPythonWorkerThread);
  for (const PythonStackRecord& stack : profile.stacks) {
    frame_ids_.resize(base);
    for (std::string_view frame : stack.frames) {
      frame_ids_.push_back(InternName(SanitisePythonFrame(frame)));
    }
    // The stack's samples go with its larger part, as SplitSample does.
    const bool samples_on_cpu = stack.cpu_ns >= stack.off_cpu_ns;
    const SamplePart parts[2] = {
        {Category::kPython, stack.cpu_ns, samples_on_cpu ? stack.samples : 0},
        {Category::kPythonOffCpu, stack.off_cpu_ns, samples_on_cpu ? 0 : stack.samples}};
    for (const SamplePart& part : parts) {
      if (part.time_ns == 0 && part.samples == 0) continue;
      AddToProfiles(frame_ids_, thread_id, tag, part.category, part.time_ns, part.samples);
    }
  }
  return true;
}

// The JVM's own threads appear as "[jvm gc]" > "[G1 Conc#N]" (category frame, then the thread),
// weighted by the CPU they used since the last cycle.
void Drain::PollJvmInternalThreads() {
  const int64_t now_ns = MonotonicNowNs();
  last_jvm_poll_ns_ = now_ns;
  if (jvm_threads_->rescan_due(now_ns)) {
    sampled_tids_.clear();
    for (ThreadState* state : registry_.LiveSnapshot()) sampled_tids_.insert(state->tid);
  }
  jvm_thread_cpu_.clear();
  jvm_threads_->Poll(now_ns, sampled_tids_, &jvm_thread_cpu_);
  for (const JvmThreadCpu& thread : jvm_thread_cpu_) {
    std::string thread_name = JvmThreadPoolName(thread.name);
    uint32_t thread_id = InternName(thread_name);
    frame_ids_.clear();
    frame_ids_.push_back(InternName("[jvm " + std::string(CategoryName(thread.category)) + "]"));
    frame_ids_.push_back(InternName("[" + thread_name + "]"));
    auto weight = static_cast<uint64_t>(thread.cpu_ns);
    AddToProfiles(frame_ids_, thread_id, TaskTag{}, thread.category, weight, thread.samples);
  }
}

void Drain::AddToProfiles(std::span<const uint32_t> frames_root_first, uint32_t thread_id,
                          const TaskTag& tag, Category category, uint64_t time_ns,
                          uint64_t samples) {
  if (!AddSample(frames_root_first, thread_id, tag, category, time_ns, samples)) {
    g_counters.stacks_dropped_cap.fetch_add(1, std::memory_order_relaxed);
  }
}

void Drain::CountFolded(uint64_t before) {
  uint64_t after = cumulative_.entries_folded() + pending_.entries_folded();
  if (after > before) {
    g_counters.profile_entries_folded.fetch_add(after - before, std::memory_order_relaxed);
  }
}

bool Drain::AddSample(std::span<const uint32_t> frames_root_first, uint32_t thread_id,
                      const TaskTag& tag, Category category, uint64_t time_ns, uint64_t samples) {
  const uint64_t folded = cumulative_.entries_folded() + pending_.entries_folded();
  category_time_ns_[static_cast<size_t>(category)] += time_ns;
  bool kept = pending_.AddSample(frames_root_first, thread_id, tag, category, time_ns, samples);
  if (config_.keep_cumulative) {
    kept = cumulative_.AddSample(frames_root_first, thread_id, tag, category, time_ns, samples);
  }
  CountFolded(folded);
  return kept;
}

void Drain::AddGcTime(const TaskTag& tag, uint64_t pause_ns) {
  const uint64_t folded = cumulative_.entries_folded() + pending_.entries_folded();
  category_time_ns_[static_cast<size_t>(Category::kGc)] += pause_ns;
  pending_.AddGcTime(tag, pause_ns);
  if (config_.keep_cumulative) cumulative_.AddGcTime(tag, pause_ns);
  CountFolded(folded);
}

void Drain::ChargeTail(ThreadState* state, int64_t cpu_now_ns) {
  if (!charge_cpu_tails_ || !state->has_last_sample) return;
  int64_t last_ns = state->last_cpu_ns.load();
  if (cpu_now_ns <= last_ns) return;
  state->last_cpu_ns.store(cpu_now_ns);  // charged once
  auto tail_ns = static_cast<uint64_t>(cpu_now_ns - last_ns);
  uint32_t thread_id = InternName(NormaliseThreadName(state->name));
  AddSample(state->last_frames, thread_id, state->last_tag, state->last_category, tail_ns,
            /*samples=*/0);
}

void Drain::ChargeLiveThreadTails() {
  for (ThreadState* state : registry_.LiveSnapshot()) {
    int64_t cpu_ns = ThreadCpuNs(state->tid);
    if (cpu_ns > 0) ChargeTail(state, cpu_ns);
  }
}

void Drain::RunCycle(const std::function<void(ThreadState*)>& before_free, bool periodic) {
  // Take the retired list first: their rings are drained below, then they are freed.
  std::vector<std::unique_ptr<ThreadState>> retired = registry_.TakeRetired();
  for (ThreadState* state : registry_.LiveSnapshot()) DrainThread(state);
  for (auto& state : retired) {
    DrainThread(state.get());
    int64_t end_cpu_ns = state->end_cpu_ns.load();
    if (end_cpu_ns > 0) ChargeTail(state.get(), end_cpu_ns);
  }
  if (jvm_threads_ != nullptr &&
      (!periodic || MonotonicNowNs() - last_jvm_poll_ns_ >= config_.jvm_thread_poll_ns)) {
    PollJvmInternalThreads();
  }

  std::vector<GcPause> pauses;
  gc_monitor_.TakePauses(&pauses);
  timeline_.AttributePauses(
      pauses,
      [this](const TaskTag& tag, int64_t overlap_ns) {
        AddGcTime(tag, static_cast<uint64_t>(overlap_ns));
      },
      MonotonicNowNs() - kKeepClosedTasksNs);
  for (const GcPause& pause : pauses) {
    ++gc_summary_.pauses;
    gc_summary_.total_ns += static_cast<uint64_t>(pause.duration_ns);
    gc_summary_.max_ns = std::max(gc_summary_.max_ns, static_cast<uint64_t>(pause.duration_ns));
    recent_pauses_.push_back(pause);
    if (recent_pauses_.size() > config_.max_recent_pauses) recent_pauses_.pop_front();
    if (pending_pauses_.size() < config_.max_recent_pauses) pending_pauses_.push_back(pause);
    if (pause_observer_) pause_observer_(pause);
  }

  for (auto& state : retired) {
    if (before_free) before_free(state.get());
  }
  retired.clear();
  ++cycles_;
  g_counters.native_memory_bytes.store(memory_bytes(), std::memory_order_relaxed);
}

std::vector<GcPause> Drain::TakePendingPauses() {
  std::vector<GcPause> taken;
  taken.swap(pending_pauses_);
  return taken;
}

size_t Drain::memory_bytes() const {
  return registry_.RingMemoryBytes() + strings_.memory_bytes() + cumulative_.memory_bytes() +
         pending_.memory_bytes() + method_names_.size() * 48 + frame_rule_cache_.size() * 2 +
         frame_wait_cache_.size() * 4 + recent_pauses_.size() * sizeof(GcPause);
}

}  // namespace sparkprof::agent
