#include "native-agent/jvm_internal_threads.h"

#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>

namespace sparkprof::agent {
namespace {

// HotSpot's thread names as Linux shows them (comm: 15 bytes), checked on OpenJDK 17 and 25 with
// G1, Parallel, Serial, ZGC (generational and not) and Shenandoah.
constexpr JvmThreadRule kJvmThreadRules[] = {
    // GC: G1 and Parallel workers, G1's concurrent threads, ZGC ("X*" is JDK 21's
    // non-generational ZGC), Shenandoah.
    {"GC Thread#", Category::kGc},
    {"ParGC Thread#", Category::kGc},
    {"G1 ", Category::kGc},
    {"ZWorker", Category::kGc},
    {"ZDirector", Category::kGc},
    {"ZDriver", Category::kGc},
    {"ZStat", Category::kGc},
    {"ZUncommitter", Category::kGc},
    {"ZUnmapper", Category::kGc},
    {"XWorker", Category::kGc},
    {"XDirector", Category::kGc},
    {"XDriver", Category::kGc},
    {"XStat", Category::kGc},
    {"XUncommitter", Category::kGc},
    {"XUnmapper", Category::kGc},
    {"Shenandoah", Category::kGc},
    // JIT: C1/C2 compiler threads ("C2 CompilerThread0" cut to 15 bytes), JDK 17's code cache
    // sweeper, Graal/JVMCI compiler threads.
    {"C1 CompilerThre", Category::kJit},
    {"C2 CompilerThre", Category::kJit},
    {"Sweeper thread", Category::kJit},
    {"JVMCI", Category::kJit},
    // The VM thread (safepoint operations; Serial GC's collections), periodic tasks, the
    // service thread, monitor deflation, ZGC's runtime workers (safepoint cleanup).
    {"VM Thread", Category::kVm},
    {"VM Periodic Tas", Category::kVm},
    {"Service Thread", Category::kVm},
    {"Monitor Deflati", Category::kVm},
    {"RuntimeWorker#", Category::kVm},
};

// Linux's clock id for one thread's CPU clock (what pthread_getcpuclockid computes from a
// pthread_t): CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED over the inverted tid.
clockid_t ThreadCpuClock(pid_t tid) {
  return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u);
}

std::string ReadComm(const std::string& task_dir, const char* tid) {
  std::string path = task_dir + "/" + tid + "/comm";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buffer[64];
  ssize_t n = read(fd, buffer, sizeof(buffer));
  close(fd);
  if (n <= 0) return "";
  std::string name(buffer, static_cast<size_t>(n));
  while (!name.empty() && (name.back() == '\n' || name.back() == '\0')) name.pop_back();
  return name;
}

}  // namespace

std::span<const JvmThreadRule> JvmThreadRules() { return kJvmThreadRules; }

std::optional<Category> ClassifyJvmThread(std::string_view comm) {
  for (const JvmThreadRule& rule : kJvmThreadRules) {
    if (comm.substr(0, rule.name_prefix.size()) == rule.name_prefix) return rule.category;
  }
  return std::nullopt;
}

int64_t ThreadCpuNs(pid_t tid) {
  timespec now;
  if (tid <= 0 || clock_gettime(ThreadCpuClock(tid), &now) != 0) return -1;
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

void JvmInternalThreads::Rescan(const std::unordered_set<pid_t>& sampled_tids) {
  DIR* dir = opendir(task_dir_.c_str());
  if (dir == nullptr) return;
  const bool first_scan = scans_ == 0;
  std::unordered_set<pid_t> seen;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    long value = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || value <= 0) continue;
    auto tid = static_cast<pid_t>(value);
    if (sampled_tids.contains(tid)) continue;
    std::string name = ReadComm(task_dir_, entry->d_name);
    std::optional<Category> category = ClassifyJvmThread(name);
    if (!category) continue;
    seen.insert(tid);
    auto it = threads_.find(tid);
    if (it != threads_.end() && it->second.name == name) continue;
    if (it == threads_.end() && threads_.size() >= kMaxThreads) continue;
    // A new thread (or a reused tid): a thread that began after the agent counts from zero.
    int64_t baseline = (first_scan && !count_before_first_scan_) ? ThreadCpuNs(tid) : 0;
    if (baseline < 0) continue;
    threads_[tid] = Tracked{std::move(name), *category, baseline};
  }
  closedir(dir);
  std::erase_if(threads_, [&](const auto& entry) { return !seen.contains(entry.first); });
  ++scans_;
}

void JvmInternalThreads::Poll(int64_t now_ns, const std::unordered_set<pid_t>& sampled_tids,
                              std::vector<JvmThreadCpu>* out) {
  if (now_ns >= next_scan_ns_) {
    Rescan(sampled_tids);
    next_scan_ns_ = now_ns + kRescanNs;
  }
  for (auto it = threads_.begin(); it != threads_.end();) {
    int64_t cpu_ns = ThreadCpuNs(it->first);
    if (cpu_ns < 0) {  // the thread ended; its last slice since the previous poll is lost
      it = threads_.erase(it);
      continue;
    }
    Tracked& thread = it->second;
    if (cpu_ns > thread.last_cpu_ns) {
      int64_t used_ns = cpu_ns - thread.last_cpu_ns;
      thread.carry_ns += used_ns;
      auto samples = static_cast<uint64_t>(thread.carry_ns / interval_ns_);
      thread.carry_ns %= interval_ns_;
      out->push_back(JvmThreadCpu{it->first, thread.name, thread.category, used_ns, samples});
    }
    // A clock that went back is a reused tid between scans: start again from here.
    thread.last_cpu_ns = cpu_ns;
    ++it;
  }
}

}  // namespace sparkprof::agent
