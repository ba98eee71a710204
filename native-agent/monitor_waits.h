// Monitors task threads waited to enter, from the JVM itself: JVMTI MonitorContendedEnter (a
// thread failed to take a `synchronized` monitor and is about to block) and
// MonitorContendedEntered (it has it now). What a sample cannot give:
//   - the wait, timed exactly from the one event to the other (a sample sees a share of it, and
//     on a loaded host a thread spinning before it blocks reads as CPU or run delay);
//   - the locked object's class;
//   - the waiter's stack as the JVM walks it, inlined methods included (a sample of a thread
//     blocked in compiled code is walked from the VM stub's caller, its inlined frames unknown);
//   - where the monitor's owner was: its stack, looked at about once a second per JVM as a wait
//     begins (GetObjectMonitorUsage, a safepoint operation on JDK 17, before and after the
//     owner's stack is taken: a look whose owner let go in between is left out and counted).
//
// Cost: the events come only on contention (a spin that succeeds posts none), on the waiting
// thread, before it blocks (HotSpot posts MonitorContendedEnter before the thread is queued, so
// nothing here can take a wake-up meant for it). Per event: the class's name (one JVMTI call);
// the waiter's stack at most once per `waiter_stack_period_ns` per thread (else the thread's
// last stack for the same class stands for it); the owner at most once per `holder_period_ns`.
// Memory: at most `max_keys` rows for the JVM's life and `max_stacks` distinct stacks; waits
// beyond them are counted, never stored.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "native-agent/task_tag.h"

namespace sparkprof::agent {

struct MonitorWaitConfig {
  int depth = 64;                               // frames kept per stack
  int64_t waiter_stack_period_ns = 10'000'000;  // per thread
  int64_t holder_period_ns = 1'000'000'000;     // per JVM
  size_t max_keys = 4096;
  size_t max_stacks = 2048;
  size_t max_classes = 1024;
};

// A row as the drain takes it: counts since the previous take.
struct MonitorWaitDelta {
  int32_t stage_id = -1;
  int32_t stage_attempt = -1;
  std::string_view monitor_class;                    // valid as long as the table
  const std::vector<const void*>* waiter = nullptr;  // jmethodIDs, root first; null: not taken
  const std::vector<const void*>* holder = nullptr;
  std::string_view holder_thread;  // "" unknown
  uint64_t waits = 0;
  uint64_t wait_ns = 0;
};

// The bookkeeping, without JVMTI: keys, stacks and counters (tested on its own). Thread-safe:
// Intern* and FindRow under a mutex; a row's counters, once found, are added to without it.
class MonitorWaitTable {
 public:
  static constexpr int32_t kNone = -1;

  struct Counters {
    std::atomic<uint64_t> waits{0};
    std::atomic<uint64_t> wait_ns{0};
    void Add(uint64_t ns) {
      waits.fetch_add(1, std::memory_order_relaxed);
      wait_ns.fetch_add(ns, std::memory_order_relaxed);
    }
  };

  explicit MonitorWaitTable(const MonitorWaitConfig& config) : config_(config) {}

  int32_t InternClass(std::string_view name);            // kNone when full
  int32_t InternStack(std::vector<const void*> frames);  // root first; kNone when full or empty
  int32_t InternThread(std::string_view name);           // kNone when full
  // The counters of this key's row, made when new (they stay in place for the table's life);
  // null when the table is full (the caller then counts the wait through DropWait).
  Counters* FindRow(const TaskTag& tag, int32_t monitor_class, int32_t waiter_stack,
                    int32_t holder_stack, int32_t holder_thread);
  void DropWait() { dropped_waits_.fetch_add(1, std::memory_order_relaxed); }

  // Drain: every row that changed since the previous call, as deltas (one caller at a time).
  std::vector<MonitorWaitDelta> TakeDeltas();
  uint64_t dropped_waits() const { return dropped_waits_.load(std::memory_order_relaxed); }
  size_t rows() const;
  size_t memory_bytes() const;

 private:
  struct Key {
    int32_t stage_id, stage_attempt, monitor_class, waiter_stack, holder_stack, holder_thread;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  struct StackHash {
    size_t operator()(const std::vector<const void*>& frames) const;
  };
  struct Row {
    explicit Row(const Key& k) : key(k) {}
    Key key;
    Counters counters;
    uint64_t taken_waits = 0;  // the drain's: what the previous take saw
    uint64_t taken_wait_ns = 0;
  };
  int32_t InternName(std::deque<std::string>& names,
                     std::unordered_map<std::string_view, int32_t>& index, std::string_view name);

  const MonitorWaitConfig config_;
  mutable std::mutex mutex_;
  std::deque<Row> rows_;  // appended only: a deque keeps its elements in place
  std::unordered_map<Key, int32_t, KeyHash> row_index_;
  std::deque<std::vector<const void*>> stacks_;
  std::unordered_map<std::vector<const void*>, int32_t, StackHash> stack_index_;
  std::deque<std::string> classes_;
  std::unordered_map<std::string_view, int32_t> class_index_;
  std::deque<std::string> threads_;
  std::unordered_map<std::string_view, int32_t> thread_index_;
  size_t stack_frames_ = 0;
  std::atomic<uint64_t> dropped_waits_{0};
};

// The JVMTI side: the two event handlers, on the contending thread.
class MonitorWaits {
 public:
  explicit MonitorWaits(const MonitorWaitConfig& config) : config_(config), table_(config) {}

  // `tag`: the thread's task tag; threads outside a task are not followed (callers check).
  void OnContendedEnter(jvmtiEnv* jvmti, JNIEnv* jni, jobject object, const TaskTag& tag);
  void OnContendedEntered();

  MonitorWaitTable& table() { return table_; }
  uint64_t holder_looks() const { return holder_looks_.load(std::memory_order_relaxed); }
  // The agent's own time in OnContendedEnter, summed over threads (its cost per wait), and the
  // part of it spent looking at holders (safepoint operations and a handshake).
  uint64_t enter_ns() const { return enter_ns_.load(std::memory_order_relaxed); }
  uint64_t look_ns() const { return look_ns_.load(std::memory_order_relaxed); }
  // The CPU the waiting threads spent in OnContendedEnter (their thread CPU clocks): the agent's
  // own CPU (agent_cpu.h). A holder look's safepoint operations run on the VM thread, not here.
  uint64_t enter_cpu_ns() const { return enter_cpu_ns_.load(std::memory_order_relaxed); }
  // Looks left out: the owner had let go of the monitor by the time its stack was taken.
  uint64_t holder_looks_lost() const { return holder_looks_lost_.load(std::memory_order_relaxed); }

 private:
  void Record(jvmtiEnv* jvmti, JNIEnv* jni, jobject object, const TaskTag& tag, int64_t now);
  // The current thread's stack (jmethodIDs, root first); empty on error.
  std::vector<const void*> StackOf(jvmtiEnv* jvmti, jthread thread) const;
  // The monitor's owner now (a local reference), null when nobody owns it. A safepoint
  // operation on JDK 17.
  static jthread OwnerOf(jvmtiEnv* jvmti, jobject object);
  // At most once per holder_period_ns: the owner's stack and name, interned; false otherwise.
  bool LookAtHolder(jvmtiEnv* jvmti, JNIEnv* jni, jobject object, int32_t* stack, int32_t* thread);

  const MonitorWaitConfig config_;
  MonitorWaitTable table_;
  std::atomic<int64_t> next_holder_look_ns_{0};
  std::atomic<uint64_t> holder_looks_{0};
  std::atomic<uint64_t> holder_looks_lost_{0};
  std::atomic<uint64_t> enter_ns_{0};
  std::atomic<uint64_t> look_ns_{0};
  std::atomic<uint64_t> enter_cpu_ns_{0};
};

}  // namespace sparkprof::agent
