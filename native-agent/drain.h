// The drain: empties every thread's ring, turns jmethodIDs into names (soon after the sample, so
// classes that unload later are already named), classifies, aggregates into the cumulative and
// pending profiles, charges GC pauses to the tasks they stopped, and frees retired threads.
// Runs on one thread at a time (the caller serialises); never in a signal handler.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "native-agent/gc_monitor.h"
#include "native-agent/jvm_internal_threads.h"
#include "native-agent/profile.h"
#include "native-agent/python_profile.h"
#include "native-agent/thread_state.h"

namespace sparkprof::agent {

class MethodNameResolver {
 public:
  virtual ~MethodNameResolver() = default;
  // "package.Class.method", or "" when the id no longer names a method (class unloaded).
  virtual std::string Resolve(const void* method_id) = 0;
};

struct DrainConfig {
  int64_t interval_ns = 10'000'000;
  uint32_t max_stacks = 20'000;
  size_t max_cached_methods = 1u << 20;  // beyond this the name cache restarts
  size_t max_strings = 1u << 20;         // beyond this new names become "[names_full]"
  size_t max_recent_pauses = 10'000;
  // The profile of the JVM's whole life (cumulative()) is kept only for the agent's own files
  // (out=); the plugin's batches come from the pending one. Without it the agent's memory does
  // not grow with the tasks an executor runs.
  bool keep_cumulative = true;
  // Each profile's sample and task-time keys (Profile's max_entries): the pending one between two
  // batches (a plugin that never drains meets it), the cumulative one for the JVM's life.
  size_t max_profile_entries = 65'536;
  // The JVM's own threads (GC, JIT, ...) are polled for their CPU clocks at most this often by
  // the periodic cycles (each poll reads every one of their clocks); a batch's or the last cycle
  // always polls, so a batch carries their CPU up to its end.
  int64_t jvm_thread_poll_ns = 250'000'000;
};

struct GcSummary {
  uint64_t pauses = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
};

class Drain {
 public:
  Drain(const DrainConfig& config, ThreadRegistry& registry, MethodNameResolver& resolver,
        GcMonitor& gc_monitor, TaskTimeline& timeline);

  // One pass. `before_free` runs for each retired thread just before its state is freed.
  // `periodic`: the drain thread's own cycle (polls the JVM's threads only when due).
  void RunCycle(const std::function<void(ThreadState*)>& before_free = {}, bool periodic = false);

  // A method's or a text's id in strings() (for rows encoded beside the profile).
  uint32_t InternMethod(const void* method_id) { return FrameId(method_id); }
  uint32_t InternText(std::string_view text) { return InternName(text); }
  const Profile& cumulative() const { return cumulative_; }
  // Time per category since the start, summed as it is added (the agent's own /metrics).
  const std::array<uint64_t, classifier::kCategoryCount>& category_time_ns() const {
    return category_time_ns_;
  }
  Profile& pending() { return pending_; }
  const StringTable& strings() const { return strings_; }
  const std::deque<GcPause>& recent_pauses() const { return recent_pauses_; }
  std::vector<GcPause> TakePendingPauses();
  const GcSummary& gc_summary() const { return gc_summary_; }
  uint64_t cycles() const { return cycles_; }
  uint64_t stale_methods() const { return stale_methods_; }
  // Sampled walks by outcome: complete, partial (outer frames kept; by the first walk's error
  // code) and failed (no Java frame kept; by error code).
  struct WalkOutcomes {
    uint64_t complete = 0;
    std::map<int, uint64_t> partial;
    std::map<int, uint64_t> failed;
  };
  const WalkOutcomes& walk_outcomes() const { return walk_outcomes_; }
  size_t memory_bytes() const;
  // CPU mode: charge the CPU a thread used after its last sample (up to its end, or now for
  // ChargeLiveThreadTails) to that sample's stack, as time without a sample.
  void set_charge_cpu_tails(bool charge) { charge_cpu_tails_ = charge; }
  // At exit: every live thread's CPU after its last sample (sampling must be stopped).
  void ChargeLiveThreadTails();
  // Polls the JVM's own threads (GC, JIT, VM) each cycle into the profiles as their categories,
  // with no task tag. `threads` must outlive the drain; nullptr turns it off (wall mode).
  void set_jvm_internal_threads(JvmInternalThreads* threads) { jvm_threads_ = threads; }
  size_t jvm_threads_tracked() const { return jvm_threads_ ? jvm_threads_->tracked() : 0; }
  // One Python worker's samples of one task (python_profile.h), into both profiles: each stack
  // under "[python worker]", itself under the JVM stack in which the task last waited on its
  // worker (none seen: directly under the task), tagged with the task's tag. False (nothing
  // added) when the task is unknown: no sample, tag or timeline entry of it is left.
  bool AddPythonProfile(const PythonTaskProfile& profile);
  // Called for each new GC pause (e.g. to feed a histogram).
  void set_pause_observer(std::function<void(const GcPause&)> observer) {
    pause_observer_ = std::move(observer);
  }

 private:
  void DrainThread(ThreadState* state);
  void PollJvmInternalThreads();
  void ChargeTail(ThreadState* state, int64_t cpu_now_ns);
  // One entry into both the cumulative and the pending profile; a sample the cumulative one
  // folds into "[overflow]" is counted (stacks_dropped_cap).
  void AddToProfiles(std::span<const uint32_t> frames_root_first, uint32_t thread_id,
                     const TaskTag& tag, Category category, uint64_t time_ns, uint64_t samples);
  // The same, for any addition: counts keys folded by the profiles' entry bounds
  // (profile_entries_folded) and sums the category's time.
  bool AddSample(std::span<const uint32_t> frames_root_first, uint32_t thread_id,
                 const TaskTag& tag, Category category, uint64_t time_ns, uint64_t samples);
  void AddGcTime(const TaskTag& tag, uint64_t pause_ns);
  void CountFolded(uint64_t before);
  uint32_t FrameId(const void* method_id);
  uint32_t InternName(std::string_view name);
  Category Classify(std::span<const uint32_t> frames_root_first, uint32_t thread_id);
  // What an off-CPU sample waited in (classifier::CombineWaitMatches), with per-frame caching.
  Category ClassifyWait(std::span<const uint32_t> frames_root_first, bool blocked_in_jvm);

 public:
  // One record's time as profile entries: on-CPU (weight_ns) in `on_cpu`, off-CPU minus run
  // delay in `waited`, run delay in cpu_starved; the record's one sample goes to the largest.
  struct SamplePart {
    Category category;
    uint64_t time_ns;
    uint64_t samples;
  };
  static std::array<SamplePart, 3> SplitSample(Category on_cpu, Category waited, int64_t on_cpu_ns,
                                               int64_t off_cpu_ns, int64_t cpu_starved_ns);

 private:
  DrainConfig config_;
  ThreadRegistry& registry_;
  MethodNameResolver& resolver_;
  GcMonitor& gc_monitor_;
  TaskTimeline& timeline_;
  StringTable strings_;
  std::unordered_map<const void*, uint32_t> method_names_;
  std::vector<int16_t> frame_rule_cache_;  // per string id: -2 unknown, -1 no rule, else rule index
  // Per string id: -1 unknown, else (primitive rule + 1) | (wait rule + 1) << 16.
  std::vector<int32_t> frame_wait_cache_;
  std::vector<classifier::WaitFrameMatch> wait_matches_;
  Profile cumulative_;
  Profile pending_;
  std::array<uint64_t, classifier::kCategoryCount> category_time_ns_{};
  std::deque<GcPause> recent_pauses_;
  std::vector<GcPause> pending_pauses_;
  GcSummary gc_summary_;
  std::function<void(const GcPause&)> pause_observer_;
  JvmInternalThreads* jvm_threads_ = nullptr;
  bool charge_cpu_tails_ = false;
  std::unordered_set<pid_t> sampled_tids_;  // rebuilt only when the JVM threads are rescanned
  int64_t last_jvm_poll_ns_ = 0;
  std::vector<JvmThreadCpu> jvm_thread_cpu_;
  std::vector<uint32_t> frame_ids_;
  std::vector<std::optional<classifier::FrameMatch>> matches_;
  uint64_t cycles_ = 0;
  uint64_t stale_methods_ = 0;
  WalkOutcomes walk_outcomes_;
  RecentTasks recent_tasks_;
  uint32_t names_full_id_;
  uint32_t stale_id_;
};

}  // namespace sparkprof::agent
