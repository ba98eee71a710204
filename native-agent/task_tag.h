// The per-thread task tag: which Spark task the thread is running, read by the signal handler.
#pragma once

#include <atomic>
#include <cstdint>

namespace sparkprof::agent {

struct TaskTag {
  int32_t stage_id = -1;
  int32_t stage_attempt = -1;
  int64_t task_attempt_id = -1;  // Spark's TID; -1 = "no task"

  bool is_task() const { return task_attempt_id >= 0; }
  bool operator==(const TaskTag&) const = default;
};

static_assert(std::atomic<int32_t>::is_always_lock_free &&
                  std::atomic<int64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "task tag slots are read in the signal handler");

// Double-buffered so the handler never sees a half-written tag: the owner thread writes the
// inactive copy, then flips `active_`. A signal interrupting Set() on the same thread reads the
// still-active old copy. Fields are relaxed atomics so a reader on another thread (the JVMTI
// fallback sampler) is not a data race; it may see a tag that is one update old.
class TaskTagSlot {
 public:
  // not async-signal-safe by contract: call only on the owning thread, never from a handler.
  void Set(const TaskTag& tag) {
    uint32_t next = 1 - active_.load(std::memory_order_relaxed);
    Copy& copy = copies_[next];
    copy.stage_id.store(tag.stage_id, std::memory_order_relaxed);
    copy.stage_attempt.store(tag.stage_attempt, std::memory_order_relaxed);
    copy.task_attempt_id.store(tag.task_attempt_id, std::memory_order_relaxed);
    active_.store(next, std::memory_order_release);
  }

  void Clear() { Set(TaskTag{}); }

  // async-signal-safe
  TaskTag Read() const {
    const Copy& copy = copies_[active_.load(std::memory_order_acquire)];
    return TaskTag{copy.stage_id.load(std::memory_order_relaxed),
                   copy.stage_attempt.load(std::memory_order_relaxed),
                   copy.task_attempt_id.load(std::memory_order_relaxed)};
  }

 private:
  struct Copy {
    std::atomic<int32_t> stage_id{-1};
    std::atomic<int32_t> stage_attempt{-1};
    std::atomic<int64_t> task_attempt_id{-1};
  };
  Copy copies_[2];
  std::atomic<uint32_t> active_{0};
};

}  // namespace sparkprof::agent
