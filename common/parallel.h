// Work spread over the cores this process may use: how many there are, and a loop over
// independent items on that many threads.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace sparkprof {

// CPUs this process may run on: its affinity mask, capped by a cgroup v2 CPU quota
// (/sys/fs/cgroup/cpu.max, as containers set it). At least 1.
int AvailableCpus();

// `requested` threads, or AvailableCpus() when it is 0 or negative.
int ThreadsOrAvailable(int requested);

// Calls body(i) for every i in [0, count) on up to `threads` threads (the caller's among them),
// each item once, in no particular order; returns when all are done. The items must be
// independent. An exception thrown by body is rethrown here once every thread has stopped.
void ParallelFor(size_t count, int threads, const std::function<void(size_t)>& body);

// Starts `body` on a new thread that begins on a CPU other than the caller's, when the caller may
// run on more than one; once started it may run wherever the caller may. Linux often queues a new
// thread behind its busy creator for milliseconds while another CPU idles (q72's cost thread
// started 2-4 ms late in about half the runs). Throws std::system_error as std::thread does.
std::thread StartThreadElsewhere(std::function<void()> body);

// While it lives, keeps the calling thread and `others` -- threads handing work to it all the
// time, such as a decompressing thread feeding it bytes, or parsers it hands batches -- on
// different CPUs: the caller on the CPU it runs on, the others on as many other CPUs as there
// are of them. Left alone, Linux's wake-up placement puts such a pair on one CPU in about half
// the runs, the other CPU idle (q72's reading then took 34-42 ms instead of 29-31;
// bench/RESULTS.md). CPUs held by another ApartOnCpus of this process (analyses side by side)
// are not used; it does nothing when fewer than two CPUs are left to the caller, or when the
// calls fail. Made while the caller is kept apart already (threads it starts then inherit its
// one CPU), it only places `others` on free CPUs (none free: it does nothing). Destroy it
// on the thread that made it, innermost first: it gives that thread back the CPUs it had.
class ApartOnCpus {
 public:
  explicit ApartOnCpus(const std::vector<pthread_t>& others);
  ~ApartOnCpus();
  ApartOnCpus(const ApartOnCpus&) = delete;
  ApartOnCpus& operator=(const ApartOnCpus&) = delete;

  bool apart() const { return apart_; }

 private:
  bool apart_ = false;
  ApartOnCpus* outer_ = nullptr;  // the one that kept the caller apart already, if any
  cpu_set_t callers_cpus_;        // the caller's CPUs before any pinning
  cpu_set_t mine_;                // the CPUs it holds (released when destroyed)
};

}  // namespace sparkprof
