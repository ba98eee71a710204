// The signal-handler world. Rules for everything reachable from HandleSampleSignal and
// HandleCrashSignal: no malloc, no locks, no logging, no JVMTI/JNI, no memcpy of unknown size;
// only lock-free atomics (static_assert'd where declared), preallocated memory and try-or-drop.
#include "native-agent/signal_handler.h"

#include <errno.h>
#include <time.h>

#include <atomic>
#include <cstring>

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

// async-signal-safe
void HandleSampleSignal(int /*signo*/, siginfo_t* /*info*/, void* ucontext) {
  int saved_errno = errno;
  RecordSampleOnCurrentThread(ucontext);
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
bool InstallSampleHandler(int signo, std::string* error) {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_sigaction = HandleSampleSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(signo, &action, nullptr) != 0) {
    *error = std::string("sigaction: ") + strerror(errno);
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
    *error = std::string("sigaction(SIGSEGV/SIGBUS): ") + strerror(errno);
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
void RecordSampleOnCurrentThread(void* ucontext) {
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
  g_counters.samples_taken.fetch_add(1, std::memory_order_relaxed);
  SampleRecord* record = state->ring.TryReserve();
  if (record == nullptr) {
    g_counters.samples_dropped_ring_full.fetch_add(1, std::memory_order_relaxed);
  } else {
    record->tag = state->tag.Read();
    record->weight_ns = TakeSampleWeightNs(state);
    record->partial_walk_error = 0;
    int64_t start_ns = MonotonicNanos();
    int frames = WalkWithCrashGuard(state, record, ucontext);
    g_counters.walk_time_ns_total.fetch_add(static_cast<uint64_t>(MonotonicNanos() - start_ns),
                                            std::memory_order_relaxed);
    if (frames <= 0) g_counters.samples_walk_failed.fetch_add(1, std::memory_order_relaxed);
    record->num_frames = frames;
    state->ring.Commit();
  }
  state->in_handler.store(0, std::memory_order_release);
}

}  // namespace sparkprof::agent
