// The agent's own health counters: cumulative, process-wide, updated from the signal handler.
// Every field is a lock-free atomic (static_assert'd) so the handler may touch them.
#pragma once

#include <atomic>
#include <cstdint>

namespace sparkprof::agent {

static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "signal handler needs lock-free counters");

struct AgentCounters {
  std::atomic<uint64_t> signals_received{0};  // every profiling signal that reached us
  std::atomic<uint64_t> samples_taken{0};     // signals on a registered thread, ring slot taken
  std::atomic<uint64_t> samples_dropped_ring_full{0};
  std::atomic<uint64_t> samples_no_thread_state{0};  // signal on a thread the agent does not know
  std::atomic<uint64_t> samples_reentrant{0};        // a signal arrived while the handler ran
  std::atomic<uint64_t> samples_walk_failed{0};      // walker returned an error code (<= 0)
  std::atomic<uint64_t> walk_crashes_recovered{0};   // SIGSEGV/SIGBUS inside the walk, recovered
  std::atomic<uint64_t> walk_anchor_repairs{0};      // last Java frames mended (hotspot_layout.h)
  std::atomic<uint64_t> walk_stub_steps{0};          // walks retried past a stub's frame
  std::atomic<uint64_t> walk_deopt_walks{0};         // deoptimizing threads walked by the agent
  std::atomic<uint64_t> walk_entry_frames_named{0};  // a method's prologue/epilogue frame named
  std::atomic<uint64_t> walk_waiting_in_stub{0};  // threads waiting in a stub walked by the agent
  std::atomic<uint64_t> walk_time_ns_total{0};
  std::atomic<uint64_t> gc_pauses_dropped{0};   // GC pause ring full
  std::atomic<uint64_t> stacks_dropped_cap{0};  // samples folded into "[overflow]"
  // Sample or task-time keys past a profile's entry bound, folded into keys without their task
  // (DrainConfig::max_profile_entries).
  std::atomic<uint64_t> profile_entries_folded{0};
  std::atomic<uint64_t> batches_encoded{0};
  std::atomic<uint64_t> native_memory_bytes{0};  // rings + tables (approximate, updated by drain)
  std::atomic<uint64_t> threads_registered{0};
  std::atomic<uint64_t> timer_create_failures{0};
  std::atomic<uint64_t> rings_shrunk{0};                    // to fit the ringmemory= budget
  std::atomic<uint64_t> threads_unprofiled_ring_memory{0};  // no ring fitted the budget
  // Mode cpu+wall: CPU-timer signals a task-tagged thread ignored (its wall samples count it).
  std::atomic<uint64_t> cpu_signals_on_task_threads{0};
  // Mode cpu+wall: wall signals not sent to a task thread still idle in its last sample's wait.
  std::atomic<uint64_t> wall_signals_skipped_idle{0};
  // Mode cpu+wall: wall signals not sent to a task thread found running flat out (its CPU timer
  // samples it meanwhile).
  std::atomic<uint64_t> wall_signals_skipped_busy{0};
  // Python workers' files (python_profile.h): added to the profile; refused as malformed (the
  // first reason logged); of tasks the agent no longer knew; not queued (the queue was full);
  // and files the workers themselves could not write (their spool was full).
  std::atomic<uint64_t> python_profiles_added{0};
  std::atomic<uint64_t> python_profiles_refused{0};
  std::atomic<uint64_t> python_profiles_unknown_task{0};
  std::atomic<uint64_t> python_profiles_queue_full{0};
  std::atomic<uint64_t> python_worker_files_dropped{0};
};

// constinit: no guard variable, so the signal handler never runs a static initialiser.
inline constinit AgentCounters g_counters{};

}  // namespace sparkprof::agent
