#include "native-agent/sampler.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "common/errno_text.h"
#include "native-agent/agent_counters.h"
#include "native-agent/jvm_internal_threads.h"
#include "native-agent/schedstat.h"
#include "native-agent/signal_handler.h"

namespace sparkprof::agent {
namespace {

timespec ToTimespec(int64_t ns) {
  return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

bool CreateCpuTimer(pid_t tid, int64_t interval_ns, timer_t* timer) {
  sigevent event;
  std::memset(&event, 0, sizeof(event));
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGPROF;
  event._sigev_un._tid = tid;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, timer) != 0) return false;
  itimerspec spec;
  spec.it_interval = ToTimespec(interval_ns);
  spec.it_value = ToTimespec(interval_ns);
  if (timer_settime(*timer, 0, &spec, nullptr) != 0) {
    timer_delete(*timer);
    return false;
  }
  return true;
}

int64_t MonotonicNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// CPU a thread uses between its wall sample's last clock read and being back in its wait
// (sigreturn, re-entering the blocking call), and run delay noise: below these it "stood still".
constexpr int64_t kIdleCpuSlackNs = 50'000;
constexpr int64_t kIdleRunDelaySlackNs = 50'000;

// Under the registry mutex, on the timer thread: true when the task thread has neither run nor
// waited for a CPU since its last wall sample, as seen at two checks in a row (the first one
// only remembers the readings: the sample's own wake-up moved them). Such a thread is still in
// the wait its last sample recorded, so signalling it would only repeat that sample
// (async-profiler's wall clock skips idle threads the same way). "Not run" is the timeslice
// count standing still, not only its CPU clock: a thread woken from one wait that takes a few
// microseconds to block in the next (a class's initialisation lock, then the monitor it came
// for) is put on a CPU again, and its next sample must see the new wait. Without a schedstat
// reading a blocked thread cannot be told from a starved one: then it is always signalled.
//
// A thread found idle is looked at again after a quarter of the time since its last sample, at
// most `max_backoff_ns`: what a thread woken meanwhile did before the next look goes to its next
// sample's stack, so that share is bounded by a quarter of the wait (and a few intervals), and a
// long wait costs a handful of looks instead of one every interval.
enum class IdleCheck { kSignal, kSkipUndecided, kSkipIdle };

IdleCheck StillIdleInItsWait(ThreadState* state, const SchedstatReading& reading, int64_t cpu_ns,
                             int64_t now_ns, int64_t max_backoff_ns) {
  state->idle_next_check_ns = 0;
  int64_t after_ns = state->cpu_after_wall_sample_ns.load(std::memory_order_acquire);
  if (after_ns < 0) return IdleCheck::kSignal;
  if (cpu_ns < 0 || cpu_ns - after_ns > kIdleCpuSlackNs) return IdleCheck::kSignal;
  if (state->idle_check_after_ns != after_ns) {
    state->idle_check_after_ns = after_ns;
    state->idle_check_run_delay_ns = reading.run_delay_ns;
    state->idle_check_timeslices = reading.timeslices;
    return IdleCheck::kSkipUndecided;  // nothing charged yet: the next check decides
  }
  if (reading.run_delay_ns - state->idle_check_run_delay_ns > kIdleRunDelaySlackNs ||
      reading.timeslices != state->idle_check_timeslices) {
    state->idle_check_after_ns = -1;  // it ran, or waited for a CPU: signal it
    return IdleCheck::kSignal;
  }
  const int64_t idle_for_ns = now_ns - state->wall_mark_ns.load(std::memory_order_relaxed);
  state->idle_next_check_ns = now_ns + std::clamp<int64_t>(idle_for_ns / 4, 0, max_backoff_ns);
  return IdleCheck::kSkipIdle;
}

// Under the registry mutex, on the timer thread, at each look at a task thread: true when it
// never blocked since the previous look -- its CPU clock and its run delay together moved by at
// least 19/20 of the wall time: it ran, or was runnable and waited for a CPU -- so a wall sample
// would split nothing off it but run delay. Such a thread is left to its CPU timer, whose samples
// the handler then records with the run delay this thread last published (FillBusyCpuSample),
// and is looked at again after half the time it has been busy, one interval at least and at most
// `max_backoff_ns` (so the looks thin out within the first few of a task of a few hundred ms): on a
// core-bound executor, or one starved of cores, the timer thread then wakes a few times a second
// instead of every interval (each wake-up costs the JVM 25-50 us on the VMs bench/ ran on). What it
// misses meanwhile is the thread's blocked time, under 1/20 of the time it was found busy: that
// goes to the thread's next wall sample.
bool StillBusy(ThreadState* state, const SchedstatReading& reading, int64_t cpu_ns, int64_t now_ns,
               int64_t interval_ns, int64_t max_backoff_ns) {
  const int64_t look_ns = state->busy_look_ns;
  const int64_t look_cpu_ns = state->busy_look_cpu_ns;
  const int64_t look_run_delay_ns = state->busy_look_run_delay_ns;
  state->busy_look_ns = now_ns;
  state->busy_look_cpu_ns = cpu_ns;
  state->busy_look_run_delay_ns = reading.run_delay_ns;
  const int64_t wall_ns = now_ns - look_ns;
  const bool busy =
      look_ns > 0 && cpu_ns >= 0 && look_cpu_ns >= 0 && look_run_delay_ns >= 0 &&
      wall_ns >= interval_ns / 2 &&
      (cpu_ns - look_cpu_ns + reading.run_delay_ns - look_run_delay_ns) * 20 >= wall_ns * 19;
  if (!busy) {
    state->busy_since_ns = 0;
    state->cpu_sampled_while_busy.store(false, std::memory_order_relaxed);
    return false;
  }
  if (state->busy_since_ns == 0) state->busy_since_ns = look_ns;
  state->busy_next_check_ns =
      now_ns + std::clamp<int64_t>((now_ns - state->busy_since_ns) / 2, interval_ns,
                                   std::max(interval_ns, max_backoff_ns));
  state->cpu_sampled_while_busy.store(true, std::memory_order_release);
  return true;
}

// Left to its CPU timer and not due yet.
bool BusyBackedOff(ThreadState* state, int64_t now_ns) {
  return state->busy_next_check_ns > now_ns &&
         state->cpu_sampled_while_busy.load(std::memory_order_acquire);
}

// Still backed off: found idle, not due yet, and neither sampled nor tagged since.
bool BackedOff(ThreadState* state, int64_t now_ns) {
  return state->idle_next_check_ns > now_ns &&
         state->cpu_after_wall_sample_ns.load(std::memory_order_acquire) ==
             state->idle_check_after_ns;
}

}  // namespace

const char* SamplingModeName(SamplingMode mode) {
  switch (mode) {
    case SamplingMode::kCpu:
      return "cpu";
    case SamplingMode::kWall:
      return "wall";
    case SamplingMode::kCpuWall:
      return "cpu+wall";
  }
  return "cpu";
}

Sampler::~Sampler() { Stop(); }

int Sampler::signal_number() const { return mode_ == SamplingMode::kWall ? SIGVTALRM : SIGPROF; }

std::string Sampler::mechanism() const {
  if (mode_ == SamplingMode::kWall) return "wall: tgkill";
  std::string cpu =
      use_setitimer_ ? "cpu: setitimer (process-wide)" : "cpu: timer_create per thread";
  if (mode_ == SamplingMode::kCpuWall) cpu += "; task threads: wall tgkill";
  return cpu;
}

Status Sampler::Start() {
  std::string error;
  if (!InstallSampleHandler(
          signal_number(),
          mode_ == SamplingMode::kWall ? SignalSource::kWallTimer : SignalSource::kCpuTimer,
          &error)) {
    return Internal(error);
  }
  if (mode_ == SamplingMode::kCpuWall &&
      !InstallSampleHandler(SIGVTALRM, SignalSource::kWallTimer, &error)) {
    return Internal(error);
  }
  if (mode_ != SamplingMode::kWall) {
    // Probe per-thread CPU timers once; some sandboxes refuse them.
    timer_t probe;
    if (CreateCpuTimer(static_cast<pid_t>(syscall(SYS_gettid)), interval_ns_, &probe)) {
      timer_delete(probe);
    } else {
      use_setitimer_ = true;
      itimerval value;
      value.it_interval = {static_cast<time_t>(interval_ns_ / 1'000'000'000),
                           static_cast<suseconds_t>((interval_ns_ % 1'000'000'000) / 1000)};
      value.it_value = value.it_interval;
      if (setitimer(ITIMER_PROF, &value, nullptr) != 0) {
        return Internal(std::string("neither timer_create nor setitimer work: ") +
                        ErrnoText(errno));
      }
    }
  }
  if (mode_ != SamplingMode::kCpu) {
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);  // the timer thread takes no signals
    wall_thread_ = std::thread([this] { WallTimerLoop(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (cpu_meter_ != nullptr) cpu_meter_->AddThread(wall_thread_.native_handle());
  }
  started_.store(true);
  return Status::Ok();
}

void Sampler::OnThreadStarted(ThreadState* state) {
  // Never arm a timer before our handler is installed: SIGPROF's default action kills the JVM.
  if (mode_ == SamplingMode::kWall || use_setitimer_ || !started_.load() || stopped_.load()) return;
  std::lock_guard<std::mutex> lock(registry_.mutex());
  CreateThreadTimerLocked(state);
}

void Sampler::OnThreadEnding(ThreadState* state) {
  std::lock_guard<std::mutex> lock(registry_.mutex());
  DeleteThreadTimerLocked(state);
  // Under the mutex: the wall timer thread reads it under the same mutex.
  int fd = state->schedstat_fd.exchange(-1);
  if (fd >= 0) close(fd);
}

void Sampler::CreateThreadTimerLocked(ThreadState* state) {
  if (state->has_cpu_timer) return;
  if (CreateCpuTimer(state->tid, interval_ns_, &state->cpu_timer)) {
    state->has_cpu_timer = true;
  } else {
    g_counters.timer_create_failures.fetch_add(1);
  }
}

void Sampler::DeleteThreadTimerLocked(ThreadState* state) {
  if (!state->has_cpu_timer) return;
  timer_delete(state->cpu_timer);
  state->has_cpu_timer = false;
}

void Sampler::Stop() {
  if (stopped_.exchange(true)) return;
  // Signal sources first, then recording: a signal already queued finds sampling disabled.
  if (use_setitimer_) {
    itimerval zero{};
    setitimer(ITIMER_PROF, &zero, nullptr);
  }
  {
    std::lock_guard<std::mutex> lock(registry_.mutex());
    for (const auto& state : registry_.live_locked()) DeleteThreadTimerLocked(state.get());
  }
  if (wall_thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(wall_mutex_);
      wall_wakeup_.notify_all();
    }
    wall_thread_.join();
  }
  EnableSampling(false);
}

void Sampler::OnTaskTagged(const ThreadState* state) {
  if (mode_ != SamplingMode::kCpuWall) return;
  // Pairs with the timer thread's fence between marking itself idle and reading the tags.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!wall_idle_.load(std::memory_order_relaxed)) return;
  // Backed off while other task threads exist, and this one is left to its CPU timer (a busy
  // thread between two tasks): its next look is due within the back-off anyway. Waking the timer
  // thread at every tag would cost a wake-up per task, more than the ticks saved on short tasks.
  if (state != nullptr && !wall_no_tasks_.load(std::memory_order_relaxed) &&
      state->cpu_sampled_while_busy.load(std::memory_order_relaxed)) {
    return;
  }
  std::lock_guard<std::mutex> lock(wall_mutex_);
  wall_idle_.store(false, std::memory_order_relaxed);
  wall_wakeup_.notify_all();
}

void Sampler::WallTimerLoop() {
  size_t cursor = 0;
  std::vector<pid_t> targets;
  std::vector<ThreadState*> candidates;
  pid_t pid = getpid();
  const int signo = SIGVTALRM;
  const bool tasks_only = mode_ == SamplingMode::kCpuWall;
  pthread_setname_np(pthread_self(), "sparkprof-wall");
  const int64_t max_backoff_ns = kMaxIdleBackoffIntervals * interval_ns_;
  while (!stopped_.load()) {
    wall_ticks_.fetch_add(1, std::memory_order_relaxed);
    size_t live = 0;
    targets.clear();
    // Every task thread looked at is idle and backed off: then no tick until the first is due.
    bool all_backed_off = tasks_only;
    int64_t first_due_ns = INT64_MAX;
    // Before the tags are read: a thread tagged after this sees it and wakes us (OnTaskTagged).
    if (tasks_only) {
      wall_idle_.store(true);
      wall_no_tasks_.store(true);  // until the tags are read
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    {
      std::lock_guard<std::mutex> lock(registry_.mutex());
      const auto& states = registry_.live_locked();
      // Mode cpu+wall signals only task threads: a JVM's hundreds of idle threads cost nothing.
      candidates.clear();
      for (const auto& state : states) {
        if (!tasks_only || state->tag.Read().is_task()) candidates.push_back(state.get());
      }
      live = candidates.size();
      size_t examined = 0;
      for (size_t i = 0; i < live && targets.size() < kWallThreadsPerTick; ++i) {
        examined = i + 1;
        ThreadState* state = candidates[(cursor + i) % live];
        if (tasks_only && read_schedstat_.load(std::memory_order_relaxed)) {
          // Read just before the signal: the handler splits the off-CPU time with it.
          int fd = state->schedstat_fd.load();
          if (fd >= 0) {
            int64_t now_ns = MonotonicNs();
            if (BusyBackedOff(state, now_ns)) {
              first_due_ns = std::min(first_due_ns, state->busy_next_check_ns);
              g_counters.wall_signals_skipped_busy.fetch_add(1, std::memory_order_relaxed);
              continue;
            }
            if (BackedOff(state, now_ns)) {
              first_due_ns = std::min(first_due_ns, state->idle_next_check_ns);
              g_counters.wall_signals_skipped_idle.fetch_add(1, std::memory_order_relaxed);
              continue;
            }
            std::optional<SchedstatReading> reading = ReadSchedstat(fd);
            if (reading) {
              PublishRunDelay(state->run_delay_ns, reading->run_delay_ns);
              // The thread's CPU clock (-1: unreadable), read once for both checks.
              const int64_t cpu_ns = ThreadCpuNs(state->tid);
              if (StillBusy(state, *reading, cpu_ns, now_ns, interval_ns_, max_backoff_ns)) {
                first_due_ns = std::min(first_due_ns, state->busy_next_check_ns);
                g_counters.wall_signals_skipped_busy.fetch_add(1, std::memory_order_relaxed);
                continue;
              }
              IdleCheck idle = StillIdleInItsWait(state, *reading, cpu_ns, now_ns, max_backoff_ns);
              if (idle != IdleCheck::kSignal) {
                // No signal: idle time goes to its previous sample's stack and wait kind.
                if (idle == IdleCheck::kSkipIdle) {
                  state->idle_until_ns.store(now_ns, std::memory_order_release);
                  first_due_ns = std::min(first_due_ns, state->idle_next_check_ns);
                } else {
                  all_backed_off = false;
                }
                g_counters.wall_signals_skipped_idle.fetch_add(1, std::memory_order_relaxed);
                continue;
              }
            } else if (read_schedstat_.exchange(false) && schedstat_failure_ != nullptr) {
              schedstat_failure_();
            }
          }
        }
        all_backed_off = false;
        targets.push_back(state->tid);
      }
      if (examined < live) all_backed_off = false;
      cursor = live == 0 ? 0 : (cursor + examined) % live;
    }
    for (pid_t tid : targets) syscall(SYS_tgkill, pid, tid, signo);
    // Each thread should be signalled about once per interval: spread the ticks.
    int64_t ticks_per_interval = std::max<int64_t>(
        1, (static_cast<int64_t>(live) + kWallThreadsPerTick - 1) / kWallThreadsPerTick);
    int64_t tick_ns = std::max(kMinWallTickNs, interval_ns_ / ticks_per_interval);
    // No task thread (an executor between tasks, a driver): wait for the next tag instead of
    // ticking every interval; the bound is only a safety net. Every task thread backed off:
    // wait until the first is due, or the next tag.
    const bool idle = tasks_only && live == 0;
    if (!idle) wall_no_tasks_.store(false, std::memory_order_relaxed);
    const bool backed_off = !idle && all_backed_off && first_due_ns != INT64_MAX;
    const bool wake_on_tag = idle || backed_off;
    if (!wake_on_tag) wall_idle_.store(false, std::memory_order_relaxed);
    int64_t wait_ns = tick_ns;
    if (idle) {
      wait_ns = kIdleWallTickNs;
    } else if (backed_off) {
      wait_ns = std::max(tick_ns, first_due_ns - MonotonicNs());
    }
    std::unique_lock<std::mutex> lock(wall_mutex_);
    const bool tagged =
        wall_wakeup_.wait_for(lock, std::chrono::nanoseconds(wait_ns), [this, wake_on_tag] {
          return stopped_.load() || (wake_on_tag && !wall_idle_.load(std::memory_order_relaxed));
        });
    if (idle || (backed_off && tagged)) {
      // Woken by a tag (or the bound): the first tick one tick later, as if the timer had kept
      // ticking. A sample at the tag's very instant would catch every task thread in its first
      // steps together (a class's initialisation lock, say), and the idle skip carries that
      // first sample's wait kind for as long as the thread then sits still.
      wall_wakeup_.wait_for(lock, std::chrono::nanoseconds(tick_ns),
                            [this] { return stopped_.load(); });
    }
  }
}

}  // namespace sparkprof::agent
