// Drives the profiling signals. CPU mode: one timer_create(CLOCK_THREAD_CPUTIME_ID) timer per
// thread with SIGEV_THREAD_ID, so the signal lands on the thread that burned the CPU; if the
// kernel refuses per-thread timers, one process-wide setitimer(ITIMER_PROF). Wall mode: a timer
// thread tgkill()s at most kWallThreadsPerTick registered threads per tick, round robin.
// Nothing here runs in a signal handler (not async-signal-safe throughout).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "native-agent/thread_state.h"

namespace sparkprof::agent {

enum class SamplingMode { kCpu, kWall };

class Sampler {
 public:
  static constexpr int kWallThreadsPerTick = 16;
  static constexpr int64_t kMinWallTickNs = 100'000;

  Sampler(SamplingMode mode, int64_t interval_ns, ThreadRegistry& registry)
      : mode_(mode), interval_ns_(interval_ns), registry_(registry) {}
  ~Sampler();

  // Installs the signal handler and, in wall mode, starts the timer thread.
  Status Start();
  // CPU mode: creates the calling thread's timer (call on the thread `state` describes).
  void OnThreadStarted(ThreadState* state);
  // Deletes the thread's timer; safe against a concurrent Stop().
  void OnThreadEnding(ThreadState* state);
  // Stops every signal source, then disables recording. Idempotent.
  void Stop();

  int signal_number() const;
  // "cpu: timer_create per thread", "cpu: setitimer (process-wide)" or "wall: tgkill".
  std::string mechanism() const;

 private:
  void CreateThreadTimerLocked(ThreadState* state);
  void DeleteThreadTimerLocked(ThreadState* state);
  void WallTimerLoop();

  SamplingMode mode_;
  int64_t interval_ns_;
  ThreadRegistry& registry_;
  bool use_setitimer_ = false;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopped_{false};
  std::thread wall_thread_;
  std::mutex wall_mutex_;
  std::condition_variable wall_wakeup_;
};

}  // namespace sparkprof::agent
