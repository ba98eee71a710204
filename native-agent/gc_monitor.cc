#include "native-agent/gc_monitor.h"

#include <time.h>

#include <algorithm>

#include "native-agent/agent_counters.h"

namespace sparkprof::agent {
namespace {

int64_t ClockNs(clockid_t clock) {
  timespec now;
  clock_gettime(clock, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

int64_t MonotonicNowNs() { return ClockNs(CLOCK_MONOTONIC); }
int64_t EpochNowNs() { return ClockNs(CLOCK_REALTIME); }

// No allocation, no locks: runs on the VM thread during a stop-the-world pause.
void GcMonitor::OnGarbageCollectionStart() {
  start_epoch_ns_ = EpochNowNs();
  start_monotonic_ns_ = MonotonicNowNs();
}

// No allocation, no locks: runs on the VM thread during a stop-the-world pause.
void GcMonitor::OnGarbageCollectionFinish() {
  if (start_monotonic_ns_ == 0) return;  // Finish without a Start (events enabled mid-pause)
  uint32_t head = head_.load(std::memory_order_relaxed);
  if (head - tail_.load(std::memory_order_acquire) >= kCapacity) {
    g_counters.gc_pauses_dropped.fetch_add(1, std::memory_order_relaxed);
  } else {
    pauses_[head % kCapacity] =
        GcPause{start_epoch_ns_, start_monotonic_ns_, MonotonicNowNs() - start_monotonic_ns_};
    head_.store(head + 1, std::memory_order_release);
  }
  start_monotonic_ns_ = 0;
}

void GcMonitor::TakePauses(std::vector<GcPause>* out) {
  uint32_t tail = tail_.load(std::memory_order_relaxed);
  uint32_t head = head_.load(std::memory_order_acquire);
  for (; tail != head; ++tail) out->push_back(pauses_[tail % kCapacity]);
  tail_.store(tail, std::memory_order_release);
}

void TaskTimeline::Begin(const void* thread_key, const TaskTag& tag, int64_t now_monotonic_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = open_.find(thread_key);
  if (it != open_.end()) {  // a new tag without a clear: close the previous task here
    it->second.end_ns = now_monotonic_ns;
    if (closed_.size() < kMaxClosedIntervals) closed_.push_back(it->second);
  }
  open_[thread_key] = Interval{tag, now_monotonic_ns, INT64_MAX};
}

void TaskTimeline::End(const void* thread_key, int64_t now_monotonic_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = open_.find(thread_key);
  if (it == open_.end()) return;
  it->second.end_ns = now_monotonic_ns;
  if (closed_.size() < kMaxClosedIntervals) closed_.push_back(it->second);
  open_.erase(it);
}

std::optional<TaskTag> TaskTimeline::FindTask(int64_t task_attempt_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, interval] : open_) {
    if (interval.tag.task_attempt_id == task_attempt_id) return interval.tag;
  }
  for (auto it = closed_.rbegin(); it != closed_.rend(); ++it) {
    if (it->tag.task_attempt_id == task_attempt_id) return it->tag;
  }
  return std::nullopt;
}

void TaskTimeline::AttributePauses(std::span<const GcPause> pauses,
                                   const std::function<void(const TaskTag&, int64_t)>& charge,
                                   int64_t forget_before_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto charge_overlaps = [&](const Interval& interval) {
    for (const GcPause& pause : pauses) {
      int64_t begin = std::max(interval.start_ns, pause.start_monotonic_ns);
      int64_t end = std::min(interval.end_ns, pause.start_monotonic_ns + pause.duration_ns);
      if (end > begin) charge(interval.tag, end - begin);
    }
  };
  if (!pauses.empty()) {
    for (const Interval& interval : closed_) charge_overlaps(interval);
    for (const auto& [key, interval] : open_) charge_overlaps(interval);
  }
  std::erase_if(closed_,
                [&](const Interval& interval) { return interval.end_ns < forget_before_ns; });
}

}  // namespace sparkprof::agent
