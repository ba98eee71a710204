// Per-thread profiling state and the registry of profiled threads.
//
// Lifetime: a ThreadState is created on its own thread (JVMTI ThreadStart, VMInit, or the first
// JNI tag call), bound to that thread's TLS slot, and retired on ThreadEnd after the TLS slot is
// cleared and the CPU timer deleted. Only the drain frees retired states, after emptying their
// rings, so the signal handler (which reaches a state only through its own thread's TLS) and the
// drain (which is the only freer) never see freed memory.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <csetjmp>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/category.h"
#include "native-agent/sample_ring.h"
#include "native-agent/task_tag.h"

namespace sparkprof::agent {

class RingBudget;

// VM words a stack walker changed on its own thread for one walk (a last Java frame moved past a
// stub): the walker restores them before it returns, and the crash guard restores them when the
// walk faults instead, so no change outlives the signal handler. async-signal-safe.
struct WalkUndo {
  static constexpr int kMaxWords = 4;
  volatile uintptr_t* addresses[kMaxWords] = {};
  uintptr_t values[kMaxWords] = {};
  volatile int count = 0;

  // Remembers `*address` (false when full: then the caller must not change it).
  bool Save(volatile uintptr_t* address) {
    if (count == kMaxWords) return false;
    addresses[count] = address;
    values[count] = *address;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    count = count + 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return true;
  }
  // Writes the saved values back, newest first, and forgets them.
  void Restore() {
    for (int i = count; i-- > 0;) *addresses[i] = values[i];
    std::atomic_signal_fence(std::memory_order_seq_cst);
    count = 0;
  }
};

struct ThreadState {
  // `budget` (may be null) reserved this ring's bytes; the destructor gives them back.
  ThreadState(pid_t thread_id, uint32_t ring_capacity, int depth, RingBudget* budget = nullptr)
      : tid(thread_id), ring(ring_capacity, depth), ring_budget(budget) {}
  ~ThreadState();
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;

  // --- read by the signal handler ---
  const pid_t tid;
  void* walk_context = nullptr;  // the thread's JNIEnv*, handed to the stack walker
  SampleRing ring;
  TaskTagSlot tag;
  std::atomic<int> in_handler{0};  // re-entrancy guard (a second signal during a sample)
  std::atomic<int> in_walk{0};     // set while the walker runs: SIGSEGV here is recoverable
  // The thread's CPU clock at its last recorded sample (set on registration, on the thread, then
  // by the handler). Atomic: the drain reads it to charge the CPU used after the last sample.
  std::atomic<int64_t> last_cpu_ns{0};
  // Mode cpu+wall, while tagged: the wall clock (CLOCK_MONOTONIC) at the thread's last recorded
  // wall sample, or at its tag; and the run delay (schedstat) the last one was measured from,
  // -1 when unknown. Written by the thread itself (SetTaskTag) and its handler only.
  std::atomic<int64_t> wall_mark_ns{0};
  std::atomic<int64_t> run_delay_mark_ns{-1};
  // The thread's cumulative run delay as last read from its schedstat (-1: never read), published
  // by the wall timer thread just before it signals the thread, and by SetTaskTag.
  std::atomic<int64_t> run_delay_ns{-1};
  // The thread's CPU clock as its last recorded wall sample's handler finished (-1: none in this
  // task), and the last time the timer thread saw it still idle since then (0: not seen).
  std::atomic<int64_t> cpu_after_wall_sample_ns{-1};
  std::atomic<int64_t> idle_until_ns{0};
  // Mode cpu+wall, while tagged: the thread's CPU clock at its wall mark (the last wall sample or
  // tag), from which a wall sample tells its off-CPU time; last_cpu_ns is where the CPU already
  // charged ends, which CPU-timer samples also move while the thread is found busy.
  std::atomic<int64_t> wall_cpu_mark_ns{0};
  // Set by the wall timer thread while it finds the task thread running flat out and leaves it to
  // its CPU timer (whose signals the handler then records); cleared when a look finds it not
  // busy. Kept across tags: a busy thread usually stays busy from one short task to the next.
  std::atomic<bool> cpu_sampled_while_busy{false};
  // Run delay those CPU-timer samples charged since the wall mark (the next wall sample's off-CPU
  // time already holds it). Written by the thread's handler and tag only.
  std::atomic<int64_t> starved_charged_since_wall_mark_ns{0};
  sigjmp_buf crash_jump;
  WalkUndo walk_undo;

  // --- never touched by the signal handler ---
  // The thread's CPU clock when it ended (ThreadEnd, on the thread, once unbound); 0: running.
  std::atomic<int64_t> end_cpu_ns{0};
  // The drain's: the thread's last drained sample, which the CPU after it is charged to.
  std::vector<uint32_t> last_frames;
  TaskTag last_tag;
  Category last_category = Category::kOther;
  Category last_wait_category = Category::kOffCpuOther;
  bool has_last_sample = false;
  timer_t cpu_timer{};
  bool has_cpu_timer = false;
  // /proc/self/task/<tid>/schedstat, opened on the thread's first tag in mode cpu+wall; read by
  // the wall timer thread under the registry's mutex and by the thread itself; closed at
  // ThreadEnd under the mutex. -1: not open.
  std::atomic<int> schedstat_fd{-1};
  // The wall timer thread's own (under the registry mutex): the wall sample whose wait it last
  // checked the thread for (its cpu_after_wall_sample_ns), and the run delay and timeslices it
  // read then.
  int64_t idle_check_after_ns = -1;
  int64_t idle_check_run_delay_ns = -1;
  uint64_t idle_check_timeslices = 0;
  // Found still idle: not checked again before this CLOCK_MONOTONIC time, as long as no wall
  // sample or tag changed its cpu_after_wall_sample_ns meanwhile (0: check every tick).
  int64_t idle_next_check_ns = 0;
  // The wall timer thread's own: its last look at the thread (CLOCK_MONOTONIC, 0: none), the
  // thread's CPU clock and run delay then, since when it has been found busy (0: not busy), and
  // when a busy thread is looked at next.
  int64_t busy_look_ns = 0;
  int64_t busy_look_cpu_ns = -1;
  int64_t busy_look_run_delay_ns = -1;
  int64_t busy_since_ns = 0;
  int64_t busy_next_check_ns = 0;
  void* thread_global_ref = nullptr;  // jthread global reference, for name refresh
  std::string name;                   // refreshed by the drain
  std::atomic<bool> retired{false};
  RingBudget* const ring_budget;
};

class ThreadRegistry {
 public:
  ThreadState* Add(std::unique_ptr<ThreadState> state);
  // Moves a live state to the retired list; the drain frees it after emptying its ring.
  void Retire(ThreadState* state);
  std::vector<ThreadState*> LiveSnapshot() const;
  std::vector<std::unique_ptr<ThreadState>> TakeRetired();
  size_t LiveCount() const;
  size_t RingMemoryBytes() const;

  // For callers that must keep states alive while they use them (wall timer, JVMTI sampler).
  std::mutex& mutex() const { return mutex_; }
  const std::vector<std::unique_ptr<ThreadState>>& live_locked() const { return live_; }

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<ThreadState>> live_;
  std::vector<std::unique_ptr<ThreadState>> retired_;
};

}  // namespace sparkprof::agent
