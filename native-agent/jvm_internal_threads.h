// CPU time of the JVM's own threads: GC workers and concurrent GC threads, JIT compiler threads,
// the VM thread and its helpers. They run no Java code, have no JNIEnv and get no JVMTI
// ThreadStart (compiler threads are hidden from JVMTI), so the sampler never sees them, yet they
// take 10-20% of a busy executor's CPU. The drain polls them instead of signalling them: names
// from /proc/self/task/*/comm (HotSpot names its native threads on Linux), rescanned about once a
// second, CPU from each thread's CPU clock every drain cycle. No signal is ever sent to a JVM
// thread and nothing here touches JVM memory. Not async-signal-safe; one thread at a time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/category.h"

namespace sparkprof::agent {

struct JvmThreadRule {
  std::string_view name_prefix;  // of the thread's comm (Linux keeps the first 15 bytes)
  Category category;             // kGc, kJit or kVm
};

// The rule table (HotSpot 17-25 names, every collector); see jvm_internal_threads.cc.
std::span<const JvmThreadRule> JvmThreadRules();
// The category of a JVM-internal thread by its comm name; nullopt for any other thread.
std::optional<Category> ClassifyJvmThread(std::string_view comm);

// not async-signal-safe: the CPU clock of thread `tid` of this process, ns; -1 when it is gone.
int64_t ThreadCpuNs(pid_t tid);

struct JvmThreadCpu {
  pid_t tid;
  std::string name;  // comm
  Category category;
  int64_t cpu_ns;  // CPU used since the previous poll (or since the thread began, see below)
  // cpu_ns in samples of the interval, remainders carried to the thread's next poll, so a
  // JVM thread counts as many samples as a sampled thread using the same CPU would.
  uint64_t samples;
};

class JvmInternalThreads {
 public:
  static constexpr int64_t kRescanNs = 1'000'000'000;
  static constexpr size_t kMaxThreads = 1024;

  // `count_cpu_before_first_scan`: a thread's first poll reports all the CPU it used since it
  // began (an agent loaded at JVM start), or only sets its baseline (started in a running JVM).
  JvmInternalThreads(int64_t interval_ns, bool count_cpu_before_first_scan,
                     std::string task_dir = "/proc/self/task")
      : interval_ns_(interval_ns > 0 ? interval_ns : 1),
        count_before_first_scan_(count_cpu_before_first_scan),
        task_dir_(std::move(task_dir)) {}

  // Rescans names when a rescan is due (`now_ns`: CLOCK_MONOTONIC), then reads every tracked
  // thread's CPU clock and appends the threads that used CPU since the last poll to `out`.
  // Threads in `sampled_tids` (the sampler's own) are never tracked.
  void Poll(int64_t now_ns, const std::unordered_set<pid_t>& sampled_tids,
            std::vector<JvmThreadCpu>* out);

  // Whether the next Poll at `now_ns` rescans (and so reads `sampled_tids`).
  bool rescan_due(int64_t now_ns) const { return now_ns >= next_scan_ns_; }
  size_t tracked() const { return threads_.size(); }
  uint64_t scans() const { return scans_; }

 private:
  struct Tracked {
    std::string name;
    Category category;
    int64_t last_cpu_ns;
    int64_t carry_ns = 0;  // CPU not yet counted as a sample
  };
  void Rescan(const std::unordered_set<pid_t>& sampled_tids);

  const int64_t interval_ns_;
  const bool count_before_first_scan_;
  const std::string task_dir_;
  std::unordered_map<pid_t, Tracked> threads_;
  int64_t next_scan_ns_ = 0;
  uint64_t scans_ = 0;
};

}  // namespace sparkprof::agent
