// Stop-the-world GC pauses from JVMTI GarbageCollectionStart/Finish. Those events come as a
// matched pair on the VM thread while the world is stopped (concurrent phases of G1/ZGC/Shenandoah
// are never reported, so they are not pauses here either). The callbacks may use neither JNI nor
// JVMTI; they only read clocks and push into a fixed ring the drain empties.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "native-agent/task_tag.h"

namespace sparkprof::agent {

struct GcPause {
  int64_t start_epoch_ns;
  int64_t start_monotonic_ns;
  int64_t duration_ns;
};

class GcMonitor {
 public:
  static constexpr uint32_t kCapacity = 1024;

  // Called from the JVMTI GC callbacks: no allocation, no locks (they run with the world stopped).
  void OnGarbageCollectionStart();
  void OnGarbageCollectionFinish();

  // Drain side: appends the pauses recorded since the last call.
  void TakePauses(std::vector<GcPause>* out);

 private:
  static_assert(std::atomic<uint32_t>::is_always_lock_free);
  int64_t start_epoch_ns_ = 0;  // only touched on the VM thread between Start and Finish
  int64_t start_monotonic_ns_ = 0;
  GcPause pauses_[kCapacity];
  std::atomic<uint32_t> head_{0};
  std::atomic<uint32_t> tail_{0};
};

// Which task ran on which thread when: lets the drain charge a GC pause to every task that was
// running during it. Written by the JNI tag calls, read by the drain; a mutex is fine here.
class TaskTimeline {
 public:
  static constexpr size_t kMaxClosedIntervals = 100'000;

  void Begin(const void* thread_key, const TaskTag& tag, int64_t now_monotonic_ns);
  void End(const void* thread_key, int64_t now_monotonic_ns);
  // The tag of a task running now or ended within the last seconds (kept for GC attribution).
  std::optional<TaskTag> FindTask(int64_t task_attempt_id);
  // Calls `charge(tag, overlap_ns)` for every task interval overlapping a pause, then forgets
  // closed intervals that ended before `forget_before_ns`.
  void AttributePauses(std::span<const GcPause> pauses,
                       const std::function<void(const TaskTag&, int64_t)>& charge,
                       int64_t forget_before_ns);

 private:
  struct Interval {
    TaskTag tag;
    int64_t start_ns;
    int64_t end_ns;
  };
  std::mutex mutex_;
  std::unordered_map<const void*, Interval> open_;
  std::vector<Interval> closed_;
};

int64_t MonotonicNowNs();
int64_t EpochNowNs();

}  // namespace sparkprof::agent
