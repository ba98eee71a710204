// Standalone outputs: PATH.collapsed (Brendan Gregg's folded stacks) and PATH.json (category time
// per task and per thread, GC pauses, the agent's health counters). Written atomically (tmp+rename).
#pragma once

#include <cstdint>
#include <string>

#include "common/atomic_file.h"
#include "common/status.h"
#include "native-agent/drain.h"

namespace sparkprof::agent {

struct HealthSnapshot {
  uint64_t samples_taken = 0;
  uint64_t samples_dropped_ring_full = 0;
  uint64_t samples_walk_failed = 0;
  uint64_t samples_no_thread_state = 0;
  uint64_t samples_reentrant = 0;
  uint64_t walk_crashes_recovered = 0;
  uint64_t walk_anchor_repairs = 0;
  uint64_t walk_stub_steps = 0;
  uint64_t walk_deopt_walks = 0;
  uint64_t walk_entry_frames_named = 0;
  uint64_t walk_waiting_in_stub = 0;
  uint64_t walk_time_ns_total = 0;
  uint64_t stacks_dropped_cap = 0;
  uint64_t gc_pauses_dropped = 0;
  uint64_t batches_encoded = 0;
  uint64_t native_memory_bytes = 0;
  uint64_t threads_registered = 0;
  uint64_t timer_create_failures = 0;
  uint64_t rings_shrunk = 0;                    // ringmemory= budget: smaller rings than asked
  uint64_t threads_unprofiled_ring_memory = 0;  // ringmemory= budget used up
};
HealthSnapshot ReadHealthCounters();

struct ReportContext {
  std::string mode;       // "cpu" or "wall"
  std::string mechanism;  // e.g. "cpu: timer_create per thread"
  std::string walker;     // "AsyncGetCallTrace" or "JVMTI GetThreadListStackTraces"
  int64_t interval_ns = 0;
  int pid = 0;
  int64_t start_epoch_ns = 0;
  int64_t end_epoch_ns = 0;
};

// Folded stacks of the whole profile, one line per stack: "root;...;leaf count".
std::string RenderCollapsed(const Profile& profile, const StringTable& strings);
std::string RenderJson(const ReportContext& context, const Drain& drain, const HealthSnapshot& health);

// Output files are written with sparkprof::WriteFileAtomically (common/atomic_file.h): an
// exclusive temporary with an unpredictable name, then rename; never through a planted symlink.
using sparkprof::WriteFileAtomically;

std::string JsonEscape(std::string_view text);

}  // namespace sparkprof::agent
