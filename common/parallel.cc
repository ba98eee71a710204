#include "common/parallel.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace sparkprof {

namespace {

// The quota as whole CPUs (rounded up), 0 when there is none or it cannot be read.
int CgroupCpuQuota() {
  std::ifstream file("/sys/fs/cgroup/cpu.max");
  std::string quota_text;
  long long period = 0;
  if (!(file >> quota_text >> period) || period <= 0) return 0;
  long long micros = 0;  // "max": no quota
  const char* end = quota_text.data() + quota_text.size();
  const auto [stop, error] = std::from_chars(quota_text.data(), end, micros);
  if (error != std::errc() || stop != end || micros <= 0) return 0;
  return static_cast<int>(std::min<long long>((micros + period - 1) / period, 1 << 16));
}

}  // namespace

int AvailableCpus() {
  int cpus = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (const int quota = CgroupCpuQuota(); quota > 0) cpus = std::min(cpus, quota);
  return std::max(cpus, 1);
}

int ThreadsOrAvailable(int requested) { return requested > 0 ? requested : AvailableCpus(); }

void ParallelFor(size_t count, int threads, const std::function<void(size_t)>& body) {
  const size_t workers = std::min<size_t>(std::max(threads, 1), count);
  if (workers <= 1) {
    for (size_t i = 0; i < count; ++i) body(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    try {
      for (size_t i = next++; i < count; i = next++) body(i);
    } catch (...) {
      next = count;  // the others stop after their current item
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (size_t t = 1; t < workers; ++t) {
    try {
      pool.push_back(StartThreadElsewhere(work));
    } catch (const std::system_error&) {
      break;  // no more threads to be had: fewer do the work
    }
  }
  work();
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

std::thread StartThreadElsewhere(std::function<void()> body) {
  cpu_set_t callers;
  CPU_ZERO(&callers);
  const bool elsewhere = pthread_getaffinity_np(pthread_self(), sizeof(callers), &callers) == 0 &&
                         CPU_COUNT(&callers) >= 2;
  if (!elsewhere) return std::thread(std::move(body));
  // The new thread may run anywhere once it is away from here: it waits until it was moved.
  auto moved = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([body = std::move(body), moved, callers] {
    while (!moved->load(std::memory_order_acquire)) std::this_thread::yield();
    pthread_setaffinity_np(pthread_self(), sizeof(callers), &callers);
    body();
  });
  cpu_set_t others = callers;
  const int here = sched_getcpu();
  if (here >= 0 && here < CPU_SETSIZE && CPU_ISSET(here, &others)) {
    CPU_CLR(here, &others);
    pthread_setaffinity_np(thread.native_handle(), sizeof(others), &others);  // moves it now
  }
  moved->store(true, std::memory_order_release);
  return thread;
}

namespace {

// The CPUs ApartOnCpus objects of this process hold: analyses side by side (a directory's, the
// Python package's workers) must not pin their pairs onto the same CPUs.
std::mutex held_mutex;
cpu_set_t held_cpus;  // guarded by held_mutex (zero-initialised: a static)

// The ApartOnCpus that pinned this thread, if one did.
thread_local ApartOnCpus* pinned_by = nullptr;

// Up to `count` CPUs of `free`, `except` left out.
cpu_set_t TakeCpus(const cpu_set_t& free, size_t count, int except) {
  cpu_set_t taken;
  CPU_ZERO(&taken);
  size_t n = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && n < count; ++cpu) {
    if (cpu != except && CPU_ISSET(cpu, &free)) {
      CPU_SET(cpu, &taken);
      ++n;
    }
  }
  return taken;
}

// Sets every thread's CPUs to `cpus`; on a failure, gives those already set `undo` and says so.
bool SetCpus(const std::vector<pthread_t>& threads, const cpu_set_t& cpus, const cpu_set_t& undo) {
  for (size_t i = 0; i < threads.size(); ++i) {
    if (pthread_setaffinity_np(threads[i], sizeof(cpus), &cpus) != 0) {
      for (size_t j = 0; j < i; ++j) pthread_setaffinity_np(threads[j], sizeof(undo), &undo);
      return false;
    }
  }
  return true;
}

}  // namespace

ApartOnCpus::ApartOnCpus(const std::vector<pthread_t>& others) {
  CPU_ZERO(&callers_cpus_);
  CPU_ZERO(&mine_);
  if (others.empty()) return;
  outer_ = pinned_by;
  if (outer_ != nullptr) {
    callers_cpus_ = outer_->callers_cpus_;  // what the caller had before it was pinned
  } else if (pthread_getaffinity_np(pthread_self(), sizeof(callers_cpus_), &callers_cpus_) != 0) {
    return;
  }
  std::lock_guard<std::mutex> lock(held_mutex);
  cpu_set_t free;
  CPU_ZERO(&free);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &callers_cpus_) && !CPU_ISSET(cpu, &held_cpus)) CPU_SET(cpu, &free);
  }
  if (outer_ != nullptr) {
    // The caller is kept on its CPU already (threads it starts inherit that one CPU): the others
    // go to free CPUs. None free: they stay with the caller, not beside the outer pair's others
    // (on 2 CPUs, `--threads 4` on q72.zstd: 47.7 ms median there, 55.7 beside the decompressing
    // thread, whose CPU is the critical path).
    const cpu_set_t theirs = TakeCpus(free, others.size(), -1);
    if (CPU_COUNT(&theirs) == 0 || !SetCpus(others, theirs, callers_cpus_)) return;
    mine_ = theirs;
    CPU_OR(&held_cpus, &held_cpus, &mine_);
    apart_ = true;
    return;
  }
  if (CPU_COUNT(&free) < 2) return;  // nothing to keep apart on, or all held by others
  int here = sched_getcpu();
  if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &free)) {
    for (here = 0; !CPU_ISSET(here, &free); ++here) {
    }
  }
  cpu_set_t caller;
  CPU_ZERO(&caller);
  CPU_SET(here, &caller);
  // The others get as many free CPUs as there are of them (at least one); the rest stay free.
  const cpu_set_t theirs = TakeCpus(free, others.size(), here);
  if (!SetCpus(others, theirs, callers_cpus_)) return;
  if (pthread_setaffinity_np(pthread_self(), sizeof(caller), &caller) != 0) {
    SetCpus(others, callers_cpus_, callers_cpus_);
    return;
  }
  CPU_OR(&mine_, &caller, &theirs);
  CPU_OR(&held_cpus, &held_cpus, &mine_);
  pinned_by = this;
  apart_ = true;
}

ApartOnCpus::~ApartOnCpus() {
  if (!apart_) return;
  if (outer_ == nullptr) {
    pthread_setaffinity_np(pthread_self(), sizeof(callers_cpus_), &callers_cpus_);
    pinned_by = nullptr;
  }
  std::lock_guard<std::mutex> lock(held_mutex);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mine_)) CPU_CLR(cpu, &held_cpus);
  }
}

}  // namespace sparkprof
