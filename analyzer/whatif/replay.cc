// The scheduler replay: units of work dispatched FIFO to the free slots of the executors alive,
// as discrete events in time order (simulator.h states the model).
#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/whatif/simulator_internal.h"

namespace sparkprof::whatif {

namespace {

// A unit's state in one replay (the units themselves are shared by every replay).
struct UnitState {
  size_t deps_left = 0;
  size_t next_task = 0;
  size_t running = 0;
  int64_t sim_start = -1;
  int64_t sim_end = -1;
  bool released = false;
  int64_t wake_at = -1;  // a wake-up event is pending for a held task
};

// A replay's scheduled happenings other than task ends: (time, kind, index), earliest first;
// at one instant lower kinds first, then lower indices (a unit released at an instant is ready
// before dynamic allocation looks at the backlog then). Compared field by field: the replay's
// heaps compare these millions of times.
struct Event {
  int64_t at;
  int32_t kind;
  size_t index;
  bool operator>(const Event& other) const {
    if (at != other.at) return at > other.at;
    if (kind != other.kind) return kind > other.kind;
    return index > other.index;
  }
};

// A running task's end: when, which unit's task, on which executor (units and executors fit
// in 32 bits).
struct TaskEnd {
  int64_t at;
  size_t unit;
  size_t executor;
};

// The running tasks' ends, earliest first, in a radix heap of 64-ary digits: the replay's clock
// never goes back and a task ends no earlier than the instant it was dispatched, so no end pushed
// is earlier than the last one popped. An end sits at the level of the highest 6-bit digit in
// which its time differs from that last time, in the bucket of its digit there; a level's
// non-empty buckets are the bits of one word. Level 0 holds ends whose time differs from the
// last only in the lowest digit: a bucket there holds one time. When level 0 is empty, the
// lowest bucket of the lowest level is spread over lower levels once its least time is the new
// last (an end moves down a few levels in its life, never up). No comparisons between ends
// decide the order (the binary heap's mispredicted branches were most of a replay). Ends at one
// instant leave in no particular order: the replay takes every end of an instant before it
// dispatches, and what an end changes (slots, counters, events in their own total order) adds
// up the same in any order.
class TaskEnds {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  void push(int64_t at, size_t unit, size_t executor) {
    const uint64_t key = Key(at);
    uint32_t node = free_;
    if (node != kEnd) {
      free_ = nodes_[node].next;
    } else {
      node = static_cast<uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[node].key = key;
    nodes_[node].unit = static_cast<uint32_t>(unit);
    nodes_[node].executor = static_cast<uint32_t>(executor);
    Link(node, LevelOf(key));
    if (least_known_) least_ = std::min(least_, key);
    ++size_;
  }
  // The earliest end's time (not empty).
  [[gnu::always_inline]] int64_t top_at() {
    if (!least_known_) {
      least_known_ = true;
      least_ = kNone;
      for (uint32_t n = LowestBucket(); n != kEnd; n = nodes_[n].next) {
        least_ = std::min(least_, nodes_[n].key);
      }
    }
    return static_cast<int64_t>(least_ ^ kSignBit);
  }
  // Takes the earliest end (not empty).
  [[gnu::always_inline]] TaskEnd pop() {
    if (occupied_[0] == 0) {
      const int level = __builtin_ctz(levels_);
      const int digit = __builtin_ctzll(occupied_[level]);
      uint32_t n = heads_[level][digit];
      if (!least_known_) {
        least_ = kNone;
        for (uint32_t m = n; m != kEnd; m = nodes_[m].next) {
          least_ = std::min(least_, nodes_[m].key);
        }
      }
      last_ = least_;
      heads_[level][digit] = kEnd;
      occupied_[level] &= occupied_[level] - 1;
      if (occupied_[level] == 0) levels_ &= ~(1u << level);
      while (n != kEnd) {
        const uint32_t next = nodes_[n].next;
        Link(n, LevelOf(nodes_[n].key));
        n = next;
      }
    }
    const int digit = __builtin_ctzll(occupied_[0]);
    const uint32_t n = heads_[0][digit];
    const Node node = nodes_[n];
    heads_[0][digit] = node.next;
    if (node.next == kEnd) {
      occupied_[0] &= occupied_[0] - 1;
      if (occupied_[0] == 0) levels_ &= ~1u;
    }
    nodes_[n].next = free_;
    free_ = n;
    last_ = node.key;
    --size_;
    least_known_ = occupied_[0] != 0 || size_ == 0;
    least_ = occupied_[0] != 0
                 ? (last_ & ~kDigitMask) | static_cast<uint64_t>(__builtin_ctzll(occupied_[0]))
                 : kNone;
    return {static_cast<int64_t>(node.key ^ kSignBit), node.unit, node.executor};
  }

 private:
  struct Node {
    uint64_t key;  // the time, sign bit flipped: orders as the time does
    uint32_t unit;
    uint32_t executor;
    uint32_t next;  // the next end in its bucket (or on the free list)
  };
  static constexpr int kDigitBits = 6;
  static constexpr uint64_t kDigitMask = 63;
  static constexpr int kLevels = 11;  // 66 bits
  static constexpr uint32_t kEnd = std::numeric_limits<uint32_t>::max();
  static constexpr uint64_t kSignBit = uint64_t{1} << 63;
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  static uint64_t Key(int64_t at) { return static_cast<uint64_t>(at) ^ kSignBit; }
  int LevelOf(uint64_t key) const {
    const uint64_t differ = key ^ last_;
    return differ == 0 ? 0 : (63 - __builtin_clzll(differ)) / kDigitBits;
  }
  void Link(uint32_t node, int level) {
    const int digit = static_cast<int>((nodes_[node].key >> (kDigitBits * level)) & kDigitMask);
    nodes_[node].next = heads_[level][digit];
    heads_[level][digit] = node;
    occupied_[level] |= uint64_t{1} << digit;
    levels_ |= 1u << level;
  }
  // The first end of the lowest non-empty bucket of the lowest non-empty level (not empty).
  uint32_t LowestBucket() const {
    const int level = __builtin_ctz(levels_);
    return heads_[level][__builtin_ctzll(occupied_[level])];
  }
  std::vector<Node> nodes_;
  uint32_t free_ = kEnd;  // the free list of nodes_
  std::array<std::array<uint32_t, 64>, kLevels> heads_ = MakeHeads();
  std::array<uint64_t, kLevels> occupied_{};  // per level, its non-empty buckets
  uint32_t levels_ = 0;                       // the levels with a non-empty bucket
  uint64_t last_ = 0;                         // the last end popped (no end is earlier)
  uint64_t least_ = kNone;                    // the earliest end, when least_known_
  bool least_known_ = true;
  size_t size_ = 0;
  static std::array<std::array<uint32_t, 64>, kLevels> MakeHeads() {
    std::array<std::array<uint32_t, 64>, kLevels> heads;
    for (auto& level : heads) level.fill(kEnd);
    return heads;
  }
};

// A min-heap with four children a node: half the levels of a binary heap (the replay's events
// other than task ends). Items that compare equal are equal, so the order they leave in is the
// one any heap gives.
template <typename T>
class QuaternaryHeap {
 public:
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const T& top() const { return items_.front(); }
  void push(const T& item) {
    size_t at = items_.size();
    items_.push_back(item);
    while (at > 0) {
      const size_t parent = (at - 1) / 4;
      if (!(items_[parent] > item)) break;
      items_[at] = items_[parent];
      at = parent;
    }
    items_[at] = item;
  }
  void pop() {
    const T last = items_.back();
    items_.pop_back();
    const size_t count = items_.size();
    if (count == 0) return;
    size_t at = 0;
    while (true) {
      const size_t first = 4 * at + 1;
      if (first >= count) break;
      size_t least = first;
      const size_t end = std::min(first + 4, count);
      for (size_t child = first + 1; child < end; ++child) {
        if (items_[least] > items_[child]) least = child;
      }
      if (!(last > items_[least])) break;
      items_[at] = items_[least];
      at = least;
    }
    items_[at] = last;
  }

 private:
  std::vector<T> items_;
};

// The executors that can take a task now (alive, with a free slot), as a bitset: the replay
// dispatches to the first one, found a word at a time instead of a scan over every executor.
class FreeExecutors {
 public:
  explicit FreeExecutors(size_t executors) : words_((executors + 63) / 64, 0) {}
  void Resize(size_t executors) { words_.resize((executors + 63) / 64, 0); }
  void Set(size_t executor, bool free) {
    const size_t word = executor / 64;
    const uint64_t bit = uint64_t{1} << (executor % 64);
    if (free) {
      words_[word] |= bit;
      first_word_ = std::min(first_word_, word);
    } else {
      words_[word] &= ~bit;
    }
  }
  // The lowest free executor, or `none`.
  size_t First(size_t none) {
    while (first_word_ < words_.size() && words_[first_word_] == 0) ++first_word_;
    if (first_word_ == words_.size()) return none;
    return first_word_ * 64 + static_cast<size_t>(__builtin_ctzll(words_[first_word_]));
  }

 private:
  std::vector<uint64_t> words_;
  size_t first_word_ = 0;  // no set bit below this word
};

// A replay's scheduled happenings, by kind; at one instant lower kinds first.
enum EventKind : int32_t {
  kJobSubmit = 1,
  kUnitRelease = 2,
  kJobEnd = 3,
  kExecutorArrivesOrLeaves = 4,
  // A slot free again after the dispatch gap: always `launch_gap_ms` after a task end, so
  // these come in time order, in a queue of their own (`slot_frees_`) merged with the heap by
  // the same order. Several at one instant only add up slots: their order does not matter.
  kSlotFree = 5,
  kHeldTaskWakes = 6,
  kBacklogCheck = 7,      // dynamic allocation: tasks still waiting, more executors?
  kIdleReleaseCheck = 8,  // dynamic allocation: an executor idle for the timeout
};

// One replay: the units' and executors' state, the happenings to come, the running tasks.
class Scheduler {
 public:
  Scheduler(const std::vector<Unit>& units, const std::vector<JobInfo>& jobs,
            std::vector<ExecutorSlots> executors, int64_t launch_gap_ms,
            const Allocation& allocation);
  // Takes every happening and task end in time order, dispatching once an instant is done.
  void Run();
  RunResult Result(int64_t app_tail_ms, int64_t real_wall_ms) const;

 private:
  void LinkUnitsAndJobs();
  void ScheduleStart();
  void EndTask(const TaskEnd& ended);
  // Takes the event `upcoming` (the heap's top or the slot queue's front) and handles it; false
  // when it changed nothing (a unit released twice, an executor not idle after all): the
  // replay then goes to its next happening without dispatching at this instant.
  bool Happen(const Event* upcoming);
  void SubmitJob(size_t job);
  bool ReleaseUnit(size_t unit);
  void RequestExecutors();
  bool ReleaseIfIdle(size_t executor);
  void ArriveOrLeave(size_t executor);
  void JobDone(size_t job, int64_t at);
  void UnitDone(size_t unit, int64_t at);
  void ScheduleRelease(size_t unit, int64_t at) { events_.push({at, kUnitRelease, unit}); }
  void Dispatch(int64_t now);
  void AddExecutorSlot(size_t executor, int32_t slots);
  void Refresh(size_t executor) {
    free_executors_.Set(executor, alive_[executor] && free_slots_[executor] > 0);
  }
  // The next event of the heap and of `slot_frees_`; nullptr when both are empty.
  const Event* NextEvent() const {
    if (slot_frees_.empty()) return events_.empty() ? nullptr : &events_.top();
    if (events_.empty() || events_.top() > slot_frees_.front()) return &slot_frees_.front();
    return &events_.top();
  }
  int64_t NextTime() {
    const Event* event = NextEvent();
    const int64_t next_event_at = event == nullptr ? kNever : event->at;
    return std::min(next_event_at, running_.empty() ? kNever : running_.top_at());
  }

  const std::vector<Unit>& units_;
  const std::vector<JobInfo>& jobs_;
  std::vector<ExecutorSlots> executors_;
  const int64_t launch_gap_ms_;
  const Allocation& allocation_;

  std::unordered_map<int32_t, size_t> job_index_;
  std::vector<UnitState> states_;
  std::vector<std::vector<size_t>> dependents_;
  std::vector<std::vector<size_t>> anchored_;  // jobs waiting for a job's end
  std::vector<size_t> from_start_;
  std::vector<size_t> units_left_;  // per job, its units not yet done

  QuaternaryHeap<Event> events_;
  std::deque<Event> slot_frees_;
  // Free slots per executor; ready units in FIFO order (job, stage, attempt).
  std::vector<int32_t> free_slots_;
  std::vector<uint8_t> alive_;  // bytes: read at every dispatch
  std::vector<int32_t> busy_;   // tasks running on each executor
  std::vector<int64_t> idle_since_;
  // Dynamic allocation state: executors requested and not yet arrived, the next round's size.
  int32_t requested_ = 0;
  int32_t to_add_ = 1;
  bool tick_pending_ = false;
  int32_t alive_count_ = 0;
  int32_t peak_executors_ = 0;
  int32_t executor_cap_ = 0;
  FreeExecutors free_executors_{0};
  std::set<std::tuple<int32_t, int32_t, int32_t, size_t>> ready_;
  // Per unit with a warm-up, the executors that ran one of its tasks (a bitset), kept while the
  // unit still has tasks to dispatch.
  std::vector<std::vector<uint64_t>> warmed_;
  // Running tasks: when each ends and on which executor.
  TaskEnds running_;
  int64_t now_ = 0;
  int64_t last_job_end_ = 0;
};

Scheduler::Scheduler(const std::vector<Unit>& units, const std::vector<JobInfo>& jobs,
                     std::vector<ExecutorSlots> executors, int64_t launch_gap_ms,
                     const Allocation& allocation)
    : units_(units),
      jobs_(jobs),
      executors_(std::move(executors)),
      launch_gap_ms_(launch_gap_ms),
      allocation_(allocation) {
  LinkUnitsAndJobs();
  ScheduleStart();
}

// Which units wait for which, which jobs wait for which job's end.
void Scheduler::LinkUnitsAndJobs() {
  for (size_t j = 0; j < jobs_.size(); ++j) job_index_[jobs_[j].job_id] = j;
  states_.resize(units_.size());
  dependents_.resize(units_.size());
  for (size_t u = 0; u < units_.size(); ++u) {
    states_[u].deps_left = units_[u].deps.size();
    for (size_t d : units_[u].deps) dependents_[d].push_back(u);
  }
  anchored_.resize(jobs_.size());
  units_left_.resize(jobs_.size());
  for (size_t j = 0; j < jobs_.size(); ++j) {
    units_left_[j] = jobs_[j].units.size();
    auto anchor = job_index_.find(jobs_[j].anchor_job);
    if (jobs_[j].anchor_job >= 0 && anchor != job_index_.end()) {
      anchored_[anchor->second].push_back(j);
    } else {
      from_start_.push_back(j);
    }
  }
}

// The jobs submitted relative to the start, the executors' arrivals and leavings (with dynamic
// allocation, its initial executors instead of the run's).
void Scheduler::ScheduleStart() {
  for (size_t j : from_start_) events_.push({jobs_[j].anchor_offset, kJobSubmit, j});
  if (allocation_.enabled) {
    executors_.assign(static_cast<size_t>(std::max(allocation_.initial, 0)),
                      ExecutorSlots{allocation_.first_arrival_ms, kNever, allocation_.slots});
  }
  for (size_t e = 0; e < executors_.size(); ++e) {
    events_.push({executors_[e].added, kExecutorArrivesOrLeaves, e});
    if (executors_[e].removed < kNever) {
      events_.push({executors_[e].removed, kExecutorArrivesOrLeaves, e});
    }
  }
  free_slots_.assign(executors_.size(), 0);
  alive_.assign(executors_.size(), 0);
  busy_.assign(executors_.size(), 0);
  idle_since_.assign(executors_.size(), 0);
  // At most 100k executors however many tasks wait (hostile input stays bounded).
  executor_cap_ = allocation_.enabled ? std::clamp(allocation_.max, 1, 100'000) : 0;
  free_executors_ = FreeExecutors(executors_.size());
  warmed_.resize(units_.size());
}

void Scheduler::Run() {
  constexpr size_t kMaxSteps = 50'000'000;
  size_t steps = 0;
  while ((!events_.empty() || !slot_frees_.empty() || !running_.empty()) && ++steps < kMaxSteps) {
    const Event* upcoming = NextEvent();
    const int64_t next_event_at = upcoming == nullptr ? kNever : upcoming->at;
    const int64_t next_end = running_.empty() ? kNever : running_.top_at();
    if (next_end <= next_event_at) {
      EndTask(running_.pop());
    } else if (!Happen(upcoming)) {
      continue;
    }
    // Process everything at this instant before dispatching.
    if (NextTime() > now_) {
      Dispatch(now_);
      // Tasks left waiting: dynamic allocation looks again after the backlog timeout.
      if (allocation_.enabled && !tick_pending_ && !ready_.empty()) {
        events_.push({now_ + allocation_.backlog_ms, kBacklogCheck, 0});
        tick_pending_ = true;
      }
    }
  }
}

void Scheduler::EndTask(const TaskEnd& ended) {
  const size_t u = ended.unit;
  const size_t executor = ended.executor;
  now_ = ended.at;
  if (--busy_[executor] == 0 && allocation_.enabled) {
    idle_since_[executor] = now_;
    events_.push({now_ + allocation_.idle_timeout_ms, kIdleReleaseCheck, executor});
  }
  // The slot takes the run's dispatch gap (status update, scheduling, launch) to be reused.
  if (launch_gap_ms_ > 0) {
    slot_frees_.push_back({now_ + launch_gap_ms_, kSlotFree, executor});
  } else {
    ++free_slots_[executor];
    Refresh(executor);
  }
  if (--states_[u].running == 0 && states_[u].next_task == units_[u].tasks.size()) {
    UnitDone(u, now_);
  }
}

bool Scheduler::Happen(const Event* upcoming) {
  const auto [at, kind, index] = *upcoming;
  if (!events_.empty() && upcoming == &events_.top()) {
    events_.pop();
  } else {
    slot_frees_.pop_front();
  }
  now_ = at;
  switch (kind) {
    case kJobSubmit:
      SubmitJob(index);
      return true;
    case kUnitRelease:
      return ReleaseUnit(index);
    case kJobEnd:
      JobDone(index, now_);
      return true;
    case kSlotFree:
      ++free_slots_[index];
      Refresh(index);
      return true;
    case kHeldTaskWakes:  // a held task may launch now: the dispatch after this instant
      return true;
    case kBacklogCheck:
      RequestExecutors();
      return true;
    case kIdleReleaseCheck:
      return ReleaseIfIdle(index);
    case kExecutorArrivesOrLeaves:
      ArriveOrLeave(index);
      return true;
  }
  return true;
}

void Scheduler::SubmitJob(size_t index) {
  const JobInfo& job = jobs_[index];
  if (job.units.empty()) {
    events_.push({now_ + Span(job.real_end, job.real_submit), kJobEnd, index});
  }
  for (size_t u : job.units) {
    if (units_[u].deps.empty()) ScheduleRelease(u, now_ + units_[u].delay_after_deps);
  }
}

bool Scheduler::ReleaseUnit(size_t index) {
  const Unit& unit = units_[index];
  if (states_[index].released) return false;
  states_[index].released = true;
  if (unit.tasks.empty()) {
    UnitDone(index, now_);
  } else {
    ready_.insert({unit.job, unit.stage_id, unit.attempt, index});
  }
  return true;
}

// Tasks waiting for a slot and the executors they need (Spark's maxNeeded): request up to this
// round's size more, and look again after the backlog timeout while short.
void Scheduler::RequestExecutors() {
  tick_pending_ = false;
  int64_t waiting = 0;
  for (const auto& entry : ready_) {
    const size_t u = std::get<3>(entry);
    waiting += static_cast<int64_t>(units_[u].tasks.size() - states_[u].next_task);
  }
  int64_t running_tasks = static_cast<int64_t>(running_.size());
  const int32_t have = requested_ + alive_count_;
  const int64_t needed = std::min<int64_t>(
      executor_cap_, (waiting + running_tasks + allocation_.slots - 1) / allocation_.slots);
  if (waiting > 0 && have < needed) {
    const int32_t add = static_cast<int32_t>(std::min<int64_t>(to_add_, needed - have));
    for (int32_t i = 0; i < add; ++i) {
      executors_.push_back({now_ + allocation_.startup_ms, kNever, allocation_.slots});
      free_slots_.push_back(0);
      alive_.push_back(0);
      busy_.push_back(0);
      idle_since_.push_back(0);
      free_executors_.Resize(executors_.size());
      events_.push(
          {now_ + allocation_.startup_ms, kExecutorArrivesOrLeaves, executors_.size() - 1});
    }
    requested_ += add;
    to_add_ = std::min(to_add_ * 2, 1 << 20);
    if (have + add < needed) {
      events_.push({now_ + allocation_.backlog_ms, kBacklogCheck, 0});
      tick_pending_ = true;
    }
  } else if (waiting == 0) {
    to_add_ = 1;
  }
}

// Released when idle for the timeout, while more than max(min, needed) executors remain.
bool Scheduler::ReleaseIfIdle(size_t index) {
  if (!alive_[index] || busy_[index] > 0 || executors_[index].removed < kNever ||
      now_ - idle_since_[index] < allocation_.idle_timeout_ms) {
    return false;
  }
  const int32_t have = alive_count_;
  const int64_t needed =
      (static_cast<int64_t>(running_.size()) + allocation_.slots - 1) / allocation_.slots;
  if (have - 1 < std::max<int64_t>(allocation_.min, needed)) return false;
  executors_[index].removed = now_;
  alive_[index] = 0;
  --alive_count_;
  free_slots_[index] = 0;
  Refresh(index);
  return true;
}

void Scheduler::ArriveOrLeave(size_t index) {
  if (!alive_[index] && now_ < executors_[index].removed) {
    if (executors_[index].added == now_ && allocation_.enabled && requested_ > 0 &&
        index >= static_cast<size_t>(std::max(allocation_.initial, 0))) {
      --requested_;
    }
    alive_[index] = 1;
    free_slots_[index] += executors_[index].slots;
    Refresh(index);
    idle_since_[index] = now_;
    peak_executors_ = std::max(peak_executors_, ++alive_count_);
    if (allocation_.enabled) {
      events_.push({now_ + allocation_.idle_timeout_ms, kIdleReleaseCheck, index});
    }
  } else if (alive_[index] && now_ >= executors_[index].removed) {
    alive_[index] = 0;
    --alive_count_;
    free_slots_[index] -= executors_[index].slots;  // running tasks finish, nothing new
    Refresh(index);
  }
}

void Scheduler::JobDone(size_t j, int64_t at) {
  last_job_end_ = std::max(last_job_end_, at);
  for (size_t next : anchored_[j]) {
    events_.push({at + jobs_[next].anchor_offset, kJobSubmit, next});
  }
}

void Scheduler::UnitDone(size_t u, int64_t at) {
  states_[u].sim_end = at;
  for (size_t d : dependents_[u]) {
    if (--states_[d].deps_left == 0) ScheduleRelease(d, at + units_[d].delay_after_deps);
  }
  auto j = job_index_.find(units_[u].job);
  if (j != job_index_.end() && --units_left_[j->second] == 0) {
    events_.push({at + jobs_[j->second].tail_ms, kJobEnd, j->second});
  }
}

void Scheduler::Dispatch(int64_t now) {
  while (!ready_.empty()) {
    // The executor with a free slot that arrived first (Spark offers resources round-robin;
    // for wall time only the count of free slots matters). None free: nothing to do until a
    // slot frees, which is an event of its own that dispatches again (and sees the held tasks
    // then); a task end's slot is not free until the dispatch gap has passed.
    const size_t executor = free_executors_.First(executors_.size());
    if (executor == executors_.size()) return;
    // The first ready unit (FIFO) whose next task is not held back by the run's locality wait.
    auto first = ready_.begin();
    for (; first != ready_.end(); ++first) {
      const size_t c = std::get<3>(*first);
      UnitState& candidate = states_[c];
      const Work& next = units_[c].tasks[candidate.next_task];
      if (next.hold_offset_ms < 0 || candidate.sim_start < 0 ||
          candidate.sim_start + next.hold_offset_ms <= now) {
        break;
      }
      const int64_t wake = candidate.sim_start + next.hold_offset_ms;
      if (candidate.wake_at != wake) {
        candidate.wake_at = wake;
        events_.push({wake, kHeldTaskWakes, std::get<3>(*first)});
      }
    }
    if (first == ready_.end()) return;
    const size_t u = std::get<3>(*first);
    const Unit& unit = units_[u];
    UnitState& state = states_[u];
    if (state.sim_start < 0) state.sim_start = now;
    int64_t duration = unit.tasks[state.next_task].duration_ms;
    if (unit.warmup_ms > 0) {
      std::vector<uint64_t>& ran = warmed_[u];
      if (ran.size() <= executor / 64) ran.resize(executor / 64 + 1, 0);
      const uint64_t bit = uint64_t{1} << (executor % 64);
      if ((ran[executor / 64] & bit) == 0) {
        ran[executor / 64] |= bit;
        duration = std::min(duration + unit.warmup_ms, kMaxMs);
      }
    }
    ++state.next_task;
    ++state.running;
    // The unit's next task is read at the next dispatch: fetch it now (tasks are 96 bytes).
    if (state.next_task < unit.tasks.size()) __builtin_prefetch(&unit.tasks[state.next_task]);
    if (state.next_task == unit.tasks.size()) {
      ready_.erase(first);
      std::vector<uint64_t>().swap(warmed_[u]);
    }
    --free_slots_[executor];
    Refresh(executor);
    ++busy_[executor];
    running_.push(now + std::max<int64_t>(duration, 0), u, executor);
  }
}

RunResult Scheduler::Result(int64_t app_tail_ms, int64_t real_wall_ms) const {
  RunResult result;
  result.peak_executors = peak_executors_;
  result.wall_ms = last_job_end_ + app_tail_ms;
  if (jobs_.empty()) result.wall_ms = real_wall_ms;
  for (size_t u = 0; u < units_.size(); ++u) {
    const UnitState& state = states_[u];
    result.unit_spans.push_back(
        {units_[u].tasks.empty() ? state.sim_end : state.sim_start, state.sim_end});
    result.unit_tasks.push_back(static_cast<int64_t>(units_[u].tasks.size()));
  }
  result.core_hours = CoreHours(executors_, result.wall_ms);
  return result;
}

}  // namespace

double CoreHours(const std::vector<ExecutorSlots>& executors, int64_t wall_ms) {
  double core_hours = 0;
  for (const ExecutorSlots& e : executors) {
    const int64_t held = std::min(e.removed, wall_ms) - std::min(e.added, wall_ms);
    core_hours += static_cast<double>(std::max<int64_t>(held, 0)) * e.slots / 3'600'000.0;
  }
  return core_hours;
}

RunResult Replay(const std::vector<Unit>& units, const std::vector<JobInfo>& jobs,
                 std::vector<ExecutorSlots> executors, int64_t app_tail_ms, int64_t real_wall_ms,
                 int64_t launch_gap_ms, const Allocation& allocation) {
  Scheduler scheduler(units, jobs, std::move(executors), launch_gap_ms, allocation);
  scheduler.Run();
  return scheduler.Result(app_tail_ms, real_wall_ms);
}

}  // namespace sparkprof::whatif
