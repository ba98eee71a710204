// Standalone outputs: PATH.collapsed (Brendan Gregg's folded stacks) and PATH.json (category time
// per task and per thread, GC pauses, the agent's health counters). Written atomically
// (tmp+rename).
#pragma once

#include <cstdint>
#include <string>

#include "common/atomic_file.h"
#include "common/status.h"
#include "native-agent/drain.h"

namespace sparkprof::agent {

// The agent's health figures in the order PATH.json's `health` lists them, in one place:
// COUNTER(name) is a HealthSnapshot field read from the g_counters atomic of the same name
// (agent_counters.h); DERIVED(name) is computed when the JSON is written (from the drain or
// from other counters). rings_shrunk and threads_unprofiled_ring_memory count the ringmemory=
// budget's smaller rings and refused threads.
#define SPARKPROF_AGENT_HEALTH_FIELDS(COUNTER, DERIVED) \
  COUNTER(samples_taken)                                \
  COUNTER(samples_dropped_ring_full)                    \
  COUNTER(samples_walk_failed)                          \
  COUNTER(samples_no_thread_state)                      \
  COUNTER(samples_reentrant)                            \
  COUNTER(walk_crashes_recovered)                       \
  COUNTER(walk_anchor_repairs)                          \
  COUNTER(walk_stub_steps)                              \
  COUNTER(walk_deopt_walks)                             \
  COUNTER(walk_entry_frames_named)                      \
  COUNTER(walk_waiting_in_stub)                         \
  COUNTER(walk_time_ns_total)                           \
  DERIVED(walk_time_ns_avg)                             \
  COUNTER(stacks_dropped_cap)                           \
  DERIVED(stale_methods)                                \
  COUNTER(gc_pauses_dropped)                            \
  COUNTER(batches_encoded)                              \
  COUNTER(threads_registered)                           \
  DERIVED(jvm_threads_tracked)                          \
  COUNTER(timer_create_failures)                        \
  COUNTER(rings_shrunk)                                 \
  COUNTER(threads_unprofiled_ring_memory)               \
  COUNTER(native_memory_bytes)

struct HealthSnapshot {
#define SPARKPROF_HEALTH_FIELD(name) uint64_t name = 0;
#define SPARKPROF_HEALTH_SKIP(name)
  SPARKPROF_AGENT_HEALTH_FIELDS(SPARKPROF_HEALTH_FIELD, SPARKPROF_HEALTH_SKIP)
#undef SPARKPROF_HEALTH_FIELD
#undef SPARKPROF_HEALTH_SKIP
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
std::string RenderJson(const ReportContext& context, const Drain& drain,
                       const HealthSnapshot& health);

// Output files are written with sparkprof::WriteFileAtomically (common/atomic_file.h): an
// exclusive temporary with an unpredictable name, then rename; never through a planted symlink.
using sparkprof::WriteFileAtomically;

std::string JsonEscape(std::string_view text);

}  // namespace sparkprof::agent
