// The signal-handler world. Rules for everything reachable from HandleSampleSignal and
// HandleCrashSignal: no malloc, no locks, no logging, no JVMTI/JNI, no memcpy of unknown size;
// only lock-free atomics (static_assert'd where declared), preallocated memory and try-or-drop.
#include "native-agent/signal_handler.h"

#include <errno.h>
#include <time.h>

#include <atomic>
#include <cstring>
#include <string>

#include "common/errno_text.h"
#include "native-agent/agent_counters.h"

namespace sparkprof::agent {
namespace {

static_assert(std::atomic<bool>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<StackWalker>::is_always_lock_free);

// initial-exec: a plain %fs-relative load, no __tls_get_addr (which may allocate) in the handler.
thread_local ThreadState* t_thread_state __attribute__((tls_model("initial-exec"))) = nullptr;

std::atomic<bool> g_sampling_enabled{false};
std::atomic<StackWalker> g_walker{nullptr};
std::atomic<int64_t> g_fixed_weight_ns{0};
static_assert(std::atomic<int64_t>::is_always_lock_free);
std::atomic<bool> g_task_wall_split{false};
std::atomic<JavaThreadStateReader> g_thread_state_reader{nullptr};
static_assert(std::atomic<JavaThreadStateReader>::is_always_lock_free);
// Which source each signal number's samples count as (index: signo); set before sampling.
std::atomic<uint8_t> g_signal_sources[NSIG] = {};
static_assert(std::atomic<uint8_t>::is_always_lock_free);
// SampleRecord::idle_before_us is an int32 of microseconds: ~35 minutes at most.
constexpr int64_t kMaxIdleBeforeNs = int64_t{2'000'000'000} * 1000;

struct sigaction g_previous_segv;
struct sigaction g_previous_bus;
std::atomic<bool> g_crash_guard_installed{false};

// async-signal-safe
int64_t MonotonicNanos() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// async-signal-safe: the sample's weight; advances the thread's CPU mark only for a sample that
// is recorded, so time behind a dropped sample goes to the next one instead of vanishing.
int64_t TakeSampleWeightNs(ThreadState* state) {
  int64_t fixed = g_fixed_weight_ns.load(std::memory_order_relaxed);
  if (fixed > 0) return fixed;
  int64_t cpu_ns = CurrentThreadCpuNs();
  int64_t last_ns = state->last_cpu_ns.load(std::memory_order_relaxed);
  if (cpu_ns <= last_ns) return 0;
  state->last_cpu_ns.store(cpu_ns, std::memory_order_relaxed);
  return cpu_ns - last_ns;
}

// async-signal-safe: a CPU-timer sample of a task thread the wall timer thread left to its CPU
// timer (mode cpu+wall, found busy): its CPU since the last charge, and the run delay the timer
// thread last published that no sample charged yet -- the thread waited for a CPU close to where
// the timer now finds it running, so that run delay goes to this stack as cpu_starved time.
// Never more than the wall time since the wall mark that the thread was neither on a CPU, nor
// seen idle by the timer thread (its next wall sample charges that to the wait), nor charged as
// run delay already: a reading can hold a run-queue wait the timer thread took for an idle one
// (a thread queued for long has that wait in its schedstat only once it runs). The rest of the
// reading stays to be charged later, as in FillWallSplit.
void FillBusyCpuSample(ThreadState* state, SampleRecord* record) {
  record->weight_ns = TakeSampleWeightNs(state);
  int64_t starved_ns = 0;
  const int64_t run_delay_now_ns = state->run_delay_ns.load(std::memory_order_acquire);
  const int64_t run_delay_mark_ns = state->run_delay_mark_ns.load(std::memory_order_relaxed);
  if (run_delay_mark_ns >= 0 && run_delay_now_ns > run_delay_mark_ns) {
    const int64_t wall_now_ns = MonotonicNanos();
    const int64_t wall_mark_ns = state->wall_mark_ns.load(std::memory_order_relaxed);
    const int64_t idle_until_ns = state->idle_until_ns.load(std::memory_order_acquire);
    const int64_t idle_ns =
        idle_until_ns > wall_mark_ns
            ? (idle_until_ns < wall_now_ns ? idle_until_ns : wall_now_ns) - wall_mark_ns
            : 0;
    const int64_t charged_ns =
        state->starved_charged_since_wall_mark_ns.load(std::memory_order_relaxed);
    const int64_t available_ns = wall_now_ns - wall_mark_ns - idle_ns -
                                 (state->last_cpu_ns.load(std::memory_order_relaxed) -
                                  state->wall_cpu_mark_ns.load(std::memory_order_relaxed)) -
                                 charged_ns;
    starved_ns = run_delay_now_ns - run_delay_mark_ns;
    if (starved_ns > available_ns) starved_ns = available_ns > 0 ? available_ns : 0;
    state->run_delay_mark_ns.store(run_delay_mark_ns + starved_ns, std::memory_order_relaxed);
    state->starved_charged_since_wall_mark_ns.store(charged_ns + starved_ns,
                                                    std::memory_order_relaxed);
  }
  record->off_cpu_ns = starved_ns;
  record->cpu_starved_ns = starved_ns;
  record->jvm_thread_state = -1;
  record->idle_before_us = 0;
}

// async-signal-safe: a task thread's wall sample in mode cpu+wall. The marks advance only here,
// for a sample that is recorded, so the time behind a dropped sample goes to the next one.
void FillWallSplit(ThreadState* state, SampleRecord* record) {
  int64_t wall_now_ns = MonotonicNanos();
  int64_t cpu_now_ns = CurrentThreadCpuNs();
  int64_t run_delay_now_ns = state->run_delay_ns.load(std::memory_order_acquire);
  // Time the timer thread saw the thread idle in its previous sample's wait goes to that sample.
  int64_t wall_mark_ns = state->wall_mark_ns.load(std::memory_order_relaxed);
  int64_t idle_until_ns = state->idle_until_ns.load(std::memory_order_acquire);
  int64_t idle_before_ns = 0;
  if (idle_until_ns > wall_mark_ns && idle_until_ns <= wall_now_ns) {
    idle_before_ns = idle_until_ns - wall_mark_ns;
    if (idle_before_ns > kMaxIdleBeforeNs) idle_before_ns = kMaxIdleBeforeNs;
    wall_mark_ns += idle_before_ns;
  }
  record->idle_before_us = static_cast<int32_t>(idle_before_ns / 1000);
  wall_mark_ns -= idle_before_ns % 1000;  // the microseconds not carried stay in this sample
  // Off CPU is the wall time its CPU clock did not move since the mark; on CPU what no sample
  // charged yet (CPU-timer samples charged the rest while the thread was found busy).
  WallSplit split =
      SplitWallInterval(wall_now_ns - wall_mark_ns,
                        cpu_now_ns - state->wall_cpu_mark_ns.load(std::memory_order_relaxed),
                        state->run_delay_mark_ns.load(std::memory_order_relaxed), run_delay_now_ns);
  const int64_t uncharged_ns = cpu_now_ns - state->last_cpu_ns.load(std::memory_order_relaxed);
  if (uncharged_ns < split.on_cpu_ns) split.on_cpu_ns = uncharged_ns > 0 ? uncharged_ns : 0;
  // Run delay CPU-timer samples charged since the mark is off-CPU time already charged.
  const int64_t starved_charged_ns =
      state->starved_charged_since_wall_mark_ns.load(std::memory_order_relaxed);
  split.off_cpu_ns -= starved_charged_ns < split.off_cpu_ns ? starved_charged_ns : split.off_cpu_ns;
  if (split.cpu_starved_ns > split.off_cpu_ns) split.cpu_starved_ns = split.off_cpu_ns;
  state->starved_charged_since_wall_mark_ns.store(0, std::memory_order_relaxed);
  state->wall_mark_ns.store(wall_now_ns, std::memory_order_relaxed);
  if (cpu_now_ns > 0) {
    state->last_cpu_ns.store(cpu_now_ns, std::memory_order_relaxed);
    state->wall_cpu_mark_ns.store(cpu_now_ns, std::memory_order_relaxed);
  }
  // The mark advances by what was charged, not to the reading: run delay read before the signal
  // reached a thread that was waiting for a CPU belongs to wall time after this sample's stamp,
  // so what the cap left over goes to the next sample instead of vanishing.
  int64_t run_delay_mark_ns = state->run_delay_mark_ns.load(std::memory_order_relaxed);
  if (run_delay_now_ns >= 0) {
    state->run_delay_mark_ns.store(
        run_delay_mark_ns >= 0 ? run_delay_mark_ns + split.cpu_starved_ns : run_delay_now_ns,
        std::memory_order_relaxed);
  }
  record->weight_ns = split.on_cpu_ns;
  record->off_cpu_ns = split.off_cpu_ns;
  record->cpu_starved_ns = split.cpu_starved_ns;
  JavaThreadStateReader reader = g_thread_state_reader.load(std::memory_order_acquire);
  record->jvm_thread_state = reader != nullptr ? reader(state->walk_context) : -1;
}

// async-signal-safe
void HandleSampleSignal(int signo, siginfo_t* /*info*/, void* ucontext) {
  int saved_errno = errno;
  SignalSource source = SignalSource::kCpuTimer;
  if (signo > 0 && signo < NSIG) {
    source = static_cast<SignalSource>(g_signal_sources[signo].load(std::memory_order_relaxed));
  }
  RecordSampleOnCurrentThread(ucontext, source);
  errno = saved_errno;
}

// async-signal-safe: hands a fault we do not own to whoever had the signal before us.
void ChainCrashSignal(int signo, siginfo_t* info, void* ucontext) {
  const struct sigaction& previous = signo == SIGBUS ? g_previous_bus : g_previous_segv;
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction != nullptr) {
      previous.sa_sigaction(signo, info, ucontext);
      return;
    }
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signo);
    return;
  }
  // No one else handles it: restore the default action and let the fault happen again on return.
  signal(signo, SIG_DFL);
}

// async-signal-safe
void HandleCrashSignal(int signo, siginfo_t* info, void* ucontext) {
  ThreadState* state = t_thread_state;
  if (state != nullptr && state->in_walk.load(std::memory_order_relaxed) != 0) {
    state->in_walk.store(0, std::memory_order_relaxed);
    // We leave this handler by jumping, so unblock the fault signals it blocked.
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, SIGSEGV);
    sigaddset(&unblock, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
    siglongjmp(state->crash_jump, 1);
  }
  ChainCrashSignal(signo, info, ucontext);
}

}  // namespace

// not async-signal-safe
void SetStackWalker(StackWalker walker) { g_walker.store(walker); }

// not async-signal-safe
void SetFixedSampleWeight(int64_t weight_ns) { g_fixed_weight_ns.store(weight_ns); }

// not async-signal-safe
void SetTaskWallSplit(bool enabled) { g_task_wall_split.store(enabled); }

// not async-signal-safe
void SetJavaThreadStateReader(JavaThreadStateReader reader) { g_thread_state_reader.store(reader); }

namespace {
// A new wall interval from `now_ns`: the thread's marks, and no idle wait carried over (a new task,
// or none, is never idle in the previous sample's wait: it gets a signal first).
void SetWallMarks(ThreadState* state, int64_t now_ns, int64_t cpu_ns) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  state->wall_mark_ns.store(now_ns, std::memory_order_relaxed);
  if (cpu_ns > 0) {
    state->last_cpu_ns.store(cpu_ns, std::memory_order_relaxed);
    state->wall_cpu_mark_ns.store(cpu_ns, std::memory_order_relaxed);
  }
  state->cpu_after_wall_sample_ns.store(-1, std::memory_order_relaxed);
  state->idle_until_ns.store(0, std::memory_order_relaxed);
  state->starved_charged_since_wall_mark_ns.store(0, std::memory_order_relaxed);
}
}  // namespace

// not async-signal-safe (called on the thread itself; its handler sees the marks before or after,
// and the tag is set after the marks)
void MarkTaskWallBaseline(ThreadState* state, int64_t run_delay_ns, int64_t carry_ns) {
  // Idle time the timer thread saw since the last wall sample (it sent no signal) would go to the
  // next sample, which does not come once the tag changes: the thread records it itself. The
  // re-entrancy flag keeps its own handler (the ring's other writer on this thread) out meanwhile.
  if (state->in_handler.exchange(1, std::memory_order_acquire) == 0) {
    const int64_t cpu_ns = CurrentThreadCpuNs();
    const int64_t now_ns = MonotonicNanos();
    const int64_t wall_mark_ns = state->wall_mark_ns.load(std::memory_order_relaxed);
    const int64_t idle_until_ns = state->idle_until_ns.load(std::memory_order_acquire);
    int64_t idle_ns = idle_until_ns - wall_mark_ns;
    // Seen idle at idle_until_ns, running now: it woke in between and has run since for the CPU
    // its clock moved after its last sample. The time before that run was still the wait (a task
    // ends straight after its last wait more often than not), so it goes to the wait too instead
    // of being left uncharged (the timer thread may look at an idle thread only every few
    // intervals).
    const int64_t cpu_after_ns = state->cpu_after_wall_sample_ns.load(std::memory_order_acquire);
    if (idle_ns > 0 && cpu_after_ns >= 0 && cpu_ns >= cpu_after_ns) {
      const int64_t wait_end_ns = now_ns - (cpu_ns - cpu_after_ns);
      if (wait_end_ns > idle_until_ns) idle_ns = wait_end_ns - wall_mark_ns;
    }
    // A thread left to its CPU timer (found busy) used CPU after its last CPU-timer sample that
    // no sample will charge once the marks move: up to a timer period, more on a loaded host
    // where the timer fires only at kernel ticks the thread runs through. It goes to that sample.
    const int64_t busy_tail_ns =
        state->cpu_sampled_while_busy.load(std::memory_order_relaxed) && cpu_ns > 0
            ? cpu_ns - state->last_cpu_ns.load(std::memory_order_relaxed)
            : 0;
    if (idle_ns >= 1000 || busy_tail_ns > 0) {
      if (idle_ns < 1000) idle_ns = 0;
      if (SampleRecord* record = state->ring.TryReserve()) {
        record->tag = state->tag.Read();
        record->weight_ns = busy_tail_ns > 0 ? busy_tail_ns : 0;
        record->off_cpu_ns = 0;
        record->cpu_starved_ns = 0;
        record->jvm_thread_state = -1;
        record->idle_before_us =
            static_cast<int32_t>((idle_ns < kMaxIdleBeforeNs ? idle_ns : kMaxIdleBeforeNs) / 1000);
        record->num_frames = kIdleOnlyRecord;
        record->partial_walk_error = 0;
        state->ring.Commit();
      } else {
        g_counters.samples_dropped_ring_full.fetch_add(1, std::memory_order_relaxed);
      }
    }
    // The marks move while the flag still keeps the handler out, so a wall sample cannot charge
    // the interval the record above just charged.
    SetWallMarks(state, now_ns, cpu_ns);
    state->in_handler.store(0, std::memory_order_release);
  } else {
    SetWallMarks(state, MonotonicNanos(), CurrentThreadCpuNs());
  }
  if (run_delay_ns >= 0) {
    int64_t mark_ns = state->run_delay_mark_ns.load(std::memory_order_relaxed);
    int64_t floor_ns = run_delay_ns - carry_ns;
    mark_ns = mark_ns < 0 || mark_ns > run_delay_ns ? run_delay_ns
              : mark_ns < floor_ns                  ? floor_ns
                                                    : mark_ns;
    state->run_delay_mark_ns.store(mark_ns, std::memory_order_relaxed);
    PublishRunDelay(state->run_delay_ns, run_delay_ns);
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

// async-signal-safe
void PublishRunDelay(std::atomic<int64_t>& published, int64_t value) {
  int64_t current = published.load(std::memory_order_relaxed);
  while (value > current &&
         !published.compare_exchange_weak(current, value, std::memory_order_release,
                                          std::memory_order_relaxed)) {
  }
}

// async-signal-safe
WallSplit SplitWallInterval(int64_t wall_delta_ns, int64_t cpu_delta_ns, int64_t run_delay_mark_ns,
                            int64_t run_delay_now_ns) {
  WallSplit split;
  if (wall_delta_ns <= 0) return split;
  split.on_cpu_ns =
      cpu_delta_ns <= 0 ? 0 : (cpu_delta_ns < wall_delta_ns ? cpu_delta_ns : wall_delta_ns);
  split.off_cpu_ns = wall_delta_ns - split.on_cpu_ns;
  if (run_delay_mark_ns >= 0 && run_delay_now_ns > run_delay_mark_ns) {
    int64_t delay_ns = run_delay_now_ns - run_delay_mark_ns;
    split.cpu_starved_ns = delay_ns < split.off_cpu_ns ? delay_ns : split.off_cpu_ns;
  }
  return split;
}

// async-signal-safe (clock_gettime is on POSIX's list)
int64_t CurrentThreadCpuNs() {
  timespec now;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// not async-signal-safe
void EnableSampling(bool enabled) { g_sampling_enabled.store(enabled); }

// async-signal-safe
bool SamplingEnabled() { return g_sampling_enabled.load(std::memory_order_relaxed); }

// not async-signal-safe
bool InstallSampleHandler(int signo, SignalSource source, std::string* error) {
  if (signo <= 0 || signo >= NSIG) {
    *error = "bad signal number " + std::to_string(signo);
    return false;
  }
  g_signal_sources[signo].store(static_cast<uint8_t>(source));
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_sigaction = HandleSampleSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(signo, &action, nullptr) != 0) {
    *error = std::string("sigaction: ") + ErrnoText(errno);
    return false;
  }
  return true;
}

// not async-signal-safe
bool InstallCrashGuard(std::string* error) {
  if (g_crash_guard_installed.exchange(true)) return true;
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_sigaction = HandleCrashSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSEGV, &action, &g_previous_segv) != 0 ||
      sigaction(SIGBUS, &action, &g_previous_bus) != 0) {
    *error = std::string("sigaction(SIGSEGV/SIGBUS): ") + ErrnoText(errno);
    return false;
  }
  return true;
}

// not async-signal-safe (a TLS store; the handler on this thread sees either value)
void BindCurrentThread(ThreadState* state) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_thread_state = state;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

// async-signal-safe
ThreadState* CurrentThreadState() { return t_thread_state; }

// async-signal-safe
int WalkWithCrashGuard(ThreadState* state, SampleRecord* record, void* ucontext) {
  StackWalker walker = g_walker.load(std::memory_order_acquire);
  if (walker == nullptr) return 0;
  // savemask=0: saving the mask costs a syscall per sample; the crash path unblocks explicitly.
  if (sigsetjmp(state->crash_jump, 0) != 0) {
    state->walk_undo.Restore();
    g_counters.walk_crashes_recovered.fetch_add(1, std::memory_order_relaxed);
    return kWalkCrashed;
  }
  state->in_walk.store(1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  int result = walker(state->walk_context, record->frames, state->ring.depth(), ucontext,
                      &record->partial_walk_error);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  state->in_walk.store(0, std::memory_order_relaxed);
  return result;
}

// async-signal-safe
void RecordSampleOnCurrentThread(void* ucontext, SignalSource source) {
  g_counters.signals_received.fetch_add(1, std::memory_order_relaxed);
  if (!g_sampling_enabled.load(std::memory_order_relaxed)) return;
  ThreadState* state = t_thread_state;
  if (state == nullptr) {
    g_counters.samples_no_thread_state.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (state->in_handler.exchange(1, std::memory_order_acquire) != 0) {
    g_counters.samples_reentrant.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  TaskTag tag = state->tag.Read();
  bool split = g_task_wall_split.load(std::memory_order_relaxed);
  // Mode cpu+wall: a task thread's time comes from its wall samples (their on-CPU part is the CPU
  // its clock moved that no sample charged yet); its CPU-timer signals are recorded only while the
  // wall timer thread leaves a busy thread to them, else they would only thin its wall samples.
  if (split && (source == SignalSource::kWallTimer) != tag.is_task() &&
      !(source == SignalSource::kCpuTimer &&
        state->cpu_sampled_while_busy.load(std::memory_order_relaxed))) {
    if (source == SignalSource::kCpuTimer) {
      g_counters.cpu_signals_on_task_threads.fetch_add(1, std::memory_order_relaxed);
    }
    state->in_handler.store(0, std::memory_order_release);
    return;
  }
  g_counters.samples_taken.fetch_add(1, std::memory_order_relaxed);
  SampleRecord* record = state->ring.TryReserve();
  if (record == nullptr) {
    g_counters.samples_dropped_ring_full.fetch_add(1, std::memory_order_relaxed);
  } else {
    record->tag = tag;
    if (split && source == SignalSource::kWallTimer) {
      FillWallSplit(state, record);
    } else if (split && tag.is_task()) {
      FillBusyCpuSample(state, record);
    } else {
      record->weight_ns = TakeSampleWeightNs(state);
      record->off_cpu_ns = 0;
      record->cpu_starved_ns = 0;
      record->jvm_thread_state = -1;
      record->idle_before_us = 0;
    }
    record->partial_walk_error = 0;
    int64_t start_ns = MonotonicNanos();
    int frames = WalkWithCrashGuard(state, record, ucontext);
    g_counters.walk_time_ns_total.fetch_add(static_cast<uint64_t>(MonotonicNanos() - start_ns),
                                            std::memory_order_relaxed);
    if (frames <= 0) g_counters.samples_walk_failed.fetch_add(1, std::memory_order_relaxed);
    record->num_frames = frames;
    state->ring.Commit();
    // After the commit: the timer thread treats the thread as idle in this sample's wait only
    // while its CPU clock stays here (plus the handler's return into the wait).
    if (split && source == SignalSource::kWallTimer) {
      state->cpu_after_wall_sample_ns.store(CurrentThreadCpuNs(), std::memory_order_release);
    }
  }
  state->in_handler.store(0, std::memory_order_release);
}

}  // namespace sparkprof::agent
