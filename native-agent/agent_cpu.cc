#include "native-agent/agent_cpu.h"

#include <algorithm>

namespace sparkprof::agent {

bool AgentCpuMeter::AddThread(pthread_t thread) {
  clockid_t clock;
  if (pthread_getcpuclockid(thread, &clock) != 0) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (count_ >= kMaxThreads) return false;
  clocks_[static_cast<size_t>(count_)] = clock;
  last_ns_[static_cast<size_t>(count_)] = 0;
  ++count_;
  return true;
}

uint64_t AgentCpuMeter::ThreadsNs() {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t total = 0;
  for (size_t i = 0; i < static_cast<size_t>(count_); ++i) {
    timespec now{};
    if (clock_gettime(clocks_[i], &now) == 0) {
      const uint64_t ns =
          static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
      last_ns_[i] = std::max(last_ns_[i], ns);
    }
    total += last_ns_[i];
  }
  return total;
}

}  // namespace sparkprof::agent
