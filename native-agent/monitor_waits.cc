#include "native-agent/monitor_waits.h"

#include <time.h>

#include <algorithm>
#include <functional>

#include "native-agent/gc_monitor.h"
#include "native-agent/method_resolver.h"
#include "native-agent/profile.h"

namespace sparkprof::agent {
namespace {

// The thread's wait in progress and its last stack (plain data: no destructor runs at thread
// exit). `row` is null between waits, and for a wait that went uncounted.
struct ThreadWait {
  int64_t enter_ns = 0;
  MonitorWaitTable::Counters* row = nullptr;
  int32_t last_class = MonitorWaitTable::kNone;
  int32_t last_stack = MonitorWaitTable::kNone;
  int64_t last_stack_ns = 0;
};
thread_local ThreadWait t_wait;

size_t Mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace

size_t MonitorWaitTable::KeyHash::operator()(const Key& key) const {
  size_t h = std::hash<int32_t>()(key.stage_id);
  for (int32_t part : {key.stage_attempt, key.monitor_class, key.waiter_stack, key.holder_stack,
                       key.holder_thread}) {
    h = Mix(h, std::hash<int32_t>()(part));
  }
  return h;
}

size_t MonitorWaitTable::StackHash::operator()(const std::vector<const void*>& frames) const {
  size_t h = frames.size();
  for (const void* frame : frames) h = Mix(h, std::hash<const void*>()(frame));
  return h;
}

int32_t MonitorWaitTable::InternName(std::deque<std::string>& names,
                                     std::unordered_map<std::string_view, int32_t>& index,
                                     std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = index.find(name);
  if (it != index.end()) return it->second;
  if (names.size() >= config_.max_classes) return kNone;
  const auto id = static_cast<int32_t>(names.size());
  names.emplace_back(name);
  index.emplace(names.back(), id);
  return id;
}

int32_t MonitorWaitTable::InternClass(std::string_view name) {
  return InternName(classes_, class_index_, name);
}

int32_t MonitorWaitTable::InternThread(std::string_view name) {
  return InternName(threads_, thread_index_, name);
}

int32_t MonitorWaitTable::InternStack(std::vector<const void*> frames) {
  if (frames.empty()) return kNone;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = stack_index_.find(frames);
  if (it != stack_index_.end()) return it->second;
  if (stacks_.size() >= config_.max_stacks) return kNone;
  const auto id = static_cast<int32_t>(stacks_.size());
  stack_frames_ += frames.size();
  stacks_.push_back(std::move(frames));
  stack_index_.emplace(stacks_.back(), id);
  return id;
}

MonitorWaitTable::Counters* MonitorWaitTable::FindRow(const TaskTag& tag, int32_t monitor_class,
                                                      int32_t waiter_stack, int32_t holder_stack,
                                                      int32_t holder_thread) {
  const Key key{tag.stage_id, tag.stage_attempt, monitor_class,
                waiter_stack, holder_stack,      holder_thread};
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = row_index_.find(key);
  if (it != row_index_.end()) return &rows_[static_cast<size_t>(it->second)].counters;
  if (rows_.size() >= config_.max_keys) return nullptr;
  row_index_.emplace(key, static_cast<int32_t>(rows_.size()));
  return &rows_.emplace_back(key).counters;
}

std::vector<MonitorWaitDelta> MonitorWaitTable::TakeDeltas() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<MonitorWaitDelta> out;
  for (Row& row : rows_) {
    const uint64_t waits = row.counters.waits.load(std::memory_order_relaxed);
    const uint64_t wait_ns = row.counters.wait_ns.load(std::memory_order_relaxed);
    if (waits == row.taken_waits && wait_ns == row.taken_wait_ns) continue;
    MonitorWaitDelta delta;
    delta.stage_id = row.key.stage_id;
    delta.stage_attempt = row.key.stage_attempt;
    delta.monitor_class = classes_[static_cast<size_t>(row.key.monitor_class)];
    if (row.key.waiter_stack != kNone) {
      delta.waiter = &stacks_[static_cast<size_t>(row.key.waiter_stack)];
    }
    if (row.key.holder_stack != kNone) {
      delta.holder = &stacks_[static_cast<size_t>(row.key.holder_stack)];
    }
    if (row.key.holder_thread != kNone) {
      delta.holder_thread = threads_[static_cast<size_t>(row.key.holder_thread)];
    }
    delta.waits = waits - row.taken_waits;
    delta.wait_ns = wait_ns - row.taken_wait_ns;
    row.taken_waits = waits;
    row.taken_wait_ns = wait_ns;
    out.push_back(delta);
  }
  return out;
}

size_t MonitorWaitTable::rows() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_.size();
}

size_t MonitorWaitTable::memory_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t bytes = rows_.size() * (sizeof(Row) + sizeof(Key) + 2 * sizeof(void*)) +
                 stack_frames_ * sizeof(void*) * 2 +
                 stacks_.size() * (sizeof(std::vector<const void*>) * 2 + 2 * sizeof(void*));
  for (const std::string& name : classes_) bytes += 2 * (name.size() + sizeof(std::string));
  for (const std::string& name : threads_) bytes += 2 * (name.size() + sizeof(std::string));
  return bytes;
}

std::vector<const void*> MonitorWaits::StackOf(jvmtiEnv* jvmti, jthread thread) const {
  std::vector<jvmtiFrameInfo> frames(static_cast<size_t>(config_.depth));
  jint count = 0;
  if (jvmti->GetStackTrace(thread, 0, config_.depth, frames.data(), &count) != JVMTI_ERROR_NONE ||
      count <= 0) {
    return {};
  }
  std::vector<const void*> root_first;
  root_first.reserve(static_cast<size_t>(count));
  for (jint i = count; i-- > 0;) root_first.push_back(frames[static_cast<size_t>(i)].method);
  return root_first;
}

jthread MonitorWaits::OwnerOf(jvmtiEnv* jvmti, jobject object) {
  jvmtiMonitorUsage usage{};
  if (jvmti->GetObjectMonitorUsage(object, &usage) != JVMTI_ERROR_NONE) return nullptr;
  if (usage.waiters != nullptr) jvmti->Deallocate(reinterpret_cast<unsigned char*>(usage.waiters));
  if (usage.notify_waiters != nullptr) {
    jvmti->Deallocate(reinterpret_cast<unsigned char*>(usage.notify_waiters));
  }
  return usage.owner;
}

namespace {

int64_t ThreadCpuNs() {
  timespec now{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

bool MonitorWaits::LookAtHolder(jvmtiEnv* jvmti, JNIEnv* jni, jobject object, int32_t* stack,
                                int32_t* thread) {
  const int64_t now = MonotonicNowNs();
  int64_t next = next_holder_look_ns_.load(std::memory_order_relaxed);
  if (now < next || !next_holder_look_ns_.compare_exchange_strong(
                        next, now + config_.holder_period_ns, std::memory_order_relaxed)) {
    return false;
  }
  struct LookTimer {
    std::atomic<uint64_t>& total;
    int64_t start = MonotonicNowNs();
    ~LookTimer() {
      total.fetch_add(static_cast<uint64_t>(MonotonicNowNs() - start), std::memory_order_relaxed);
    }
  } timer{look_ns_};
  jthread owner = OwnerOf(jvmti, object);
  if (owner == nullptr) return false;  // released in the meantime
  std::vector<const void*> frames = StackOf(jvmti, owner);
  // The owner ran on while its stack was taken: keep the look only if it owns the monitor still
  // (it may have let go and taken it again in between; then it most likely stands at the same
  // place, as code that takes a lock in a loop does).
  jthread still = OwnerOf(jvmti, object);
  const bool kept = still != nullptr && jni->IsSameObject(owner, still);
  if (still != nullptr) jni->DeleteLocalRef(still);
  if (kept) {
    holder_looks_.fetch_add(1, std::memory_order_relaxed);
    *stack = table_.InternStack(std::move(frames));
    *thread = table_.InternThread(NormaliseThreadName(ThreadName(jvmti, jni, owner)));
  } else {
    holder_looks_lost_.fetch_add(1, std::memory_order_relaxed);
  }
  jni->DeleteLocalRef(owner);
  return kept;
}

void MonitorWaits::OnContendedEnter(jvmtiEnv* jvmti, JNIEnv* jni, jobject object,
                                    const TaskTag& tag) {
  const int64_t start = MonotonicNowNs();
  const int64_t cpu_start = ThreadCpuNs();
  Record(jvmti, jni, object, tag, start);
  enter_ns_.fetch_add(static_cast<uint64_t>(MonotonicNowNs() - start), std::memory_order_relaxed);
  enter_cpu_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, ThreadCpuNs() - cpu_start)),
                          std::memory_order_relaxed);
}

void MonitorWaits::Record(jvmtiEnv* jvmti, JNIEnv* jni, jobject object, const TaskTag& tag,
                          int64_t now) {
  ThreadWait& wait = t_wait;
  wait.row = nullptr;
  int32_t monitor_class = MonitorWaitTable::kNone;
  if (jclass klass = jni->GetObjectClass(object); klass != nullptr) {
    char* signature = nullptr;
    if (jvmti->GetClassSignature(klass, &signature, nullptr) == JVMTI_ERROR_NONE &&
        signature != nullptr) {
      monitor_class = table_.InternClass(ClassNameFromSignature(signature));
      jvmti->Deallocate(reinterpret_cast<unsigned char*>(signature));
    }
    jni->DeleteLocalRef(klass);
  }
  if (monitor_class == MonitorWaitTable::kNone) {
    table_.DropWait();
    return;
  }
  int32_t waiter_stack = MonitorWaitTable::kNone;
  if (now - wait.last_stack_ns >= config_.waiter_stack_period_ns) {
    waiter_stack = table_.InternStack(StackOf(jvmti, nullptr));
    wait.last_stack = waiter_stack;
    wait.last_class = monitor_class;
    wait.last_stack_ns = now;
  } else if (wait.last_class == monitor_class) {
    waiter_stack = wait.last_stack;
  }
  int32_t holder_stack = MonitorWaitTable::kNone;
  int32_t holder_thread = MonitorWaitTable::kNone;
  LookAtHolder(jvmti, jni, object, &holder_stack, &holder_thread);
  wait.row = table_.FindRow(tag, monitor_class, waiter_stack, holder_stack, holder_thread);
  if (wait.row == nullptr) {
    table_.DropWait();
    return;
  }
  // The wait is timed from here: the names and stacks above are the agent's time, not the lock's.
  wait.enter_ns = MonotonicNowNs();
}

void MonitorWaits::OnContendedEntered() {
  ThreadWait& wait = t_wait;
  if (wait.row == nullptr) return;  // its enter was not followed
  const int64_t waited = MonotonicNowNs() - wait.enter_ns;
  wait.row->Add(waited > 0 ? static_cast<uint64_t>(waited) : 0);
  wait.row = nullptr;
}

}  // namespace sparkprof::agent
