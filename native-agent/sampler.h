// Drives the profiling signals. CPU mode: one timer_create(CLOCK_THREAD_CPUTIME_ID) timer per
// thread with SIGEV_THREAD_ID, so the signal lands on the thread that burned the CPU; if the
// kernel refuses per-thread timers, one process-wide setitimer(ITIMER_PROF). Wall mode: a timer
// thread tgkill()s at most kWallThreadsPerTick registered threads per tick, round robin.
// CPU+wall mode: the CPU timers of cpu mode for every thread, plus the wall timer thread for the
// task-tagged threads only; before it signals one it reads the thread's schedstat run delay into
// its ThreadState (the handler splits the wall time with it, see signal_handler.h), and it sends
// no signal to a task thread whose CPU clock, run delay and timeslice count stood still since its
// last wall sample (still in that sample's wait: the time goes to that sample, see docs/agent.md).
// A thread found still idle is checked again only after a quarter of the time it has been idle (at
// most kMaxIdleBackoffIntervals intervals); while every task thread is backed off the timer
// thread sleeps until the first check is due or a thread is tagged. A task thread found running
// without blocking (StillBusy in sampler.cc) is left to its CPU timer the same way, looked at again
// after half the time it has been busy: each of the timer thread's wake-ups costs the JVM some CPU
// whatever it then does (25-50 us on the VMs bench/ ran on). Nothing here runs in a signal handler
// (not async-signal-safe throughout).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "native-agent/agent_cpu.h"
#include "native-agent/thread_state.h"

namespace sparkprof::agent {

enum class SamplingMode { kCpu, kWall, kCpuWall };

// "cpu", "wall", "cpu+wall": the option's spelling, and Batch.mode's.
const char* SamplingModeName(SamplingMode mode);

class Sampler {
 public:
  static constexpr int kWallThreadsPerTick = 16;
  static constexpr int64_t kMinWallTickNs = 100'000;
  static constexpr int64_t kMaxIdleBackoffIntervals = 8;

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
  // "cpu: timer_create per thread", "cpu: setitimer (process-wide)", "wall: tgkill", or the
  // cpu one + "; task threads: wall tgkill".
  std::string mechanism() const;
  bool uses_cpu_timers() const { return mode_ != SamplingMode::kWall; }
  // Mode cpu+wall: whether the wall timer thread reads schedstat (false after a failed read).
  // Set before Start() by the agent from its probe.
  void set_read_schedstat(bool read) { read_schedstat_.store(read); }
  // The wall timer thread's CPU clock is registered there when it starts (set before Start()).
  void set_cpu_meter(AgentCpuMeter* meter) { cpu_meter_ = meter; }
  // Mode cpu+wall: a thread was just tagged as a task (call after the tag is set). Wakes the
  // timer thread when it waits for one: with no task thread it does not tick every interval.
  // `state` is the tagged thread's (nullptr: always wake).
  void OnTaskTagged(const ThreadState* state = nullptr);
  // How many times the wall timer thread has woken to look at the task threads (for tests).
  uint64_t wall_ticks() const { return wall_ticks_.load(std::memory_order_relaxed); }
  // Called (on the timer thread, at most once) when a schedstat read fails.
  void set_schedstat_failure_callback(void (*callback)()) { schedstat_failure_ = callback; }

 private:
  void CreateThreadTimerLocked(ThreadState* state);
  void DeleteThreadTimerLocked(ThreadState* state);
  void WallTimerLoop();

  SamplingMode mode_;
  int64_t interval_ns_;
  ThreadRegistry& registry_;
  bool use_setitimer_ = false;
  std::atomic<bool> read_schedstat_{false};
  void (*schedstat_failure_)() = nullptr;
  AgentCpuMeter* cpu_meter_ = nullptr;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopped_{false};
  std::thread wall_thread_;
  std::mutex wall_mutex_;
  std::condition_variable wall_wakeup_;
  // Mode cpu+wall: the timer thread found no task thread and waits for OnTaskTagged (or, at the
  // latest, kIdleWallTickNs).
  std::atomic<bool> wall_idle_{false};
  // ... because it found no task thread at all (set before it reads the tags).
  std::atomic<bool> wall_no_tasks_{false};
  std::atomic<uint64_t> wall_ticks_{0};
  static constexpr int64_t kIdleWallTickNs = 500'000'000;
};

}  // namespace sparkprof::agent
