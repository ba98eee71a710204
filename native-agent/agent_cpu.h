// The agent's own CPU, so that a user can read what profiling cost (the budget: wall + CPU
// sampling at the defaults <= 2% of the executors' CPU) from every run, not only from a paired
// benchmark: the CPU clocks of the agent's own threads (the drain thread, the wall timer thread,
// the JVMTI sampler thread when it runs), plus the time spent on other threads on the agent's
// behalf that it times itself (the signal handler's stack walks, by the monotonic clock; the
// monitor-wait callbacks, batch encoding and the class-prepare callbacks that give a new class's
// methods their jmethodIDs, by the thread CPU clock).
// Not in it: the kernel's signal delivery to a sampled thread (a few microseconds per sample),
// the VM thread's part of a monitor holder look (a safepoint operation about once a second), and
// the plugin's Java code (task tags, shipping batches). docs/agent.md "The agent's own CPU".
#pragma once

#include <pthread.h>
#include <time.h>

#include <array>
#include <cstdint>
#include <mutex>

namespace sparkprof::agent {

class AgentCpuMeter {
 public:
  static constexpr int kMaxThreads = 4;

  // Registers a thread's CPU clock (pthread_getcpuclockid); false when there is no room or the
  // clock cannot be had. Call while the thread runs.
  bool AddThread(pthread_t thread);
  bool AddCurrentThread() { return AddThread(pthread_self()); }

  // The registered threads' CPU time so far: a thread that ended (its clock no longer reads)
  // keeps its last reading, and a reading never goes backwards.
  uint64_t ThreadsNs();

 private:
  std::mutex mutex_;
  int count_ = 0;
  std::array<clockid_t, kMaxThreads> clocks_{};
  std::array<uint64_t, kMaxThreads> last_ns_{};
};

}  // namespace sparkprof::agent
