// Work spread over the cores this process may use: how many there are, and a loop over
// independent items on that many threads.
#pragma once

#include <cstddef>
#include <functional>

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

}  // namespace sparkprof
