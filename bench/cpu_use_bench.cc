// What one CpuUse reading (and one MemoryUse reading) costs the agent's drain thread
// (native-agent/cpu_use.h): /proc/stat's first line, the process CPU clock and the cgroup's cpu
// files, read and differenced, as the agent does once per batch sent
// (spark.sparkprof.flushInterval, 5 s by default). Prints the thread CPU and wall time per reading
// over `rounds` readings.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "native-agent/cpu_use.h"
#include "native-agent/memory_use.h"
#include "native-agent/schedstat.h"

namespace {

double ThreadCpuUs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 2000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "rounds=", 7) == 0) rounds = std::max(1, std::atoi(argv[i] + 7));
  }
  sparkprof::agent::CpuUseMeter meter;
  uint64_t sink = 0;
  const double cpu_start = ThreadCpuUs();
  const auto wall_start = std::chrono::steady_clock::now();
  for (int i = 0; i < rounds; ++i) sink += meter.TakeDelta().process_cpu_ns;
  const double wall_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - wall_start)
          .count();
  const double cpu_us = ThreadCpuUs() - cpu_start;
  std::printf(
      "cpu_use_bench: cgroup v%d (%s), %d readings: %.1f us CPU and %.1f us wall per reading; "
      "at one batch per 5 s: %.5f%% of a core (checksum %llu)\n",
      meter.cgroup_version(),
      meter.cgroup_directory().empty() ? "none" : meter.cgroup_directory().c_str(), rounds,
      cpu_us / rounds, wall_us / rounds, 100.0 * (cpu_us / rounds) / 5e6,
      static_cast<unsigned long long>(sink));
  // The memory reading walks every thread's children file (an executor JVM has ~100 threads):
  // measured with as many threads here, parked.
  int threads = 100;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "threads=", 8) == 0) threads = std::max(0, std::atoi(argv[i] + 8));
  }
  // Parked as most of a JVM's threads are: on a condition, not waking by themselves.
  std::mutex park_mutex;
  std::condition_variable park;
  bool stop = false;
  std::vector<std::thread> parked;
  for (int i = 0; i < threads; ++i) {
    parked.emplace_back([&] {
      std::unique_lock<std::mutex> lock(park_mutex);
      park.wait(lock, [&stop] { return stop; });
    });
  }
  sparkprof::agent::MemoryUseMeter memory;
  const double memory_cpu_start = ThreadCpuUs();
  const auto memory_wall_start = std::chrono::steady_clock::now();
  const int memory_rounds = std::max(1, rounds / 10);
  for (int i = 0; i < memory_rounds; ++i) sink += memory.Read().rss_bytes;
  const double memory_wall_us = std::chrono::duration<double, std::micro>(
                                    std::chrono::steady_clock::now() - memory_wall_start)
                                    .count();
  const double memory_cpu_us = ThreadCpuUs() - memory_cpu_start;
  // Every thread's run delay (native-agent/schedstat.h): what the driver's agent polls every
  // 250 ms and every agent once per batch, with the same threads.
  sparkprof::agent::ProcessRunDelay run_delay;
  const double delay_cpu_start = ThreadCpuUs();
  const auto delay_wall_start = std::chrono::steady_clock::now();
  for (int i = 0; i < memory_rounds; ++i) run_delay.Poll(i);
  const double delay_wall_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - delay_wall_start)
          .count();
  const double delay_cpu_us = ThreadCpuUs() - delay_cpu_start;
  const size_t followed = run_delay.followed();
  const uint64_t reads = run_delay.schedstat_reads();
  {
    std::lock_guard<std::mutex> lock(park_mutex);
    stop = true;
  }
  park.notify_all();
  for (std::thread& thread : parked) thread.join();
  std::printf(
      "run_delay: %zu threads followed, %d polls, %llu schedstat reads: %.1f us CPU and %.1f us "
      "wall per poll; at four polls a second (the driver): %.4f%% of a core; at one per 5 s: "
      "%.5f%%\n",
      followed, memory_rounds, static_cast<unsigned long long>(reads), delay_cpu_us / memory_rounds,
      delay_wall_us / memory_rounds, 100.0 * 4 * (delay_cpu_us / memory_rounds) / 1e6,
      100.0 * (delay_cpu_us / memory_rounds) / 5e6);
  std::printf(
      "memory_use: cgroup v%d, %d threads in the process, %d readings: %.1f us CPU and %.1f us "
      "wall per reading; at one batch per 5 s: %.5f%% of a core (checksum %llu)\n",
      memory.cgroup_version(), threads + 1, memory_rounds, memory_cpu_us / memory_rounds,
      memory_wall_us / memory_rounds, 100.0 * (memory_cpu_us / memory_rounds) / 5e6,
      static_cast<unsigned long long>(sink));
  return 0;
}
