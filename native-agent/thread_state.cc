#include "native-agent/thread_state.h"

#include <algorithm>

#include "native-agent/ring_budget.h"

namespace sparkprof::agent {

ThreadState::~ThreadState() {
  if (ring_budget != nullptr) ring_budget->Release(ring.capacity(), ring.depth());
}

ThreadState* ThreadRegistry::Add(std::unique_ptr<ThreadState> state) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.push_back(std::move(state));
  return live_.back().get();
}

void ThreadRegistry::Retire(ThreadState* state) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(live_.begin(), live_.end(),
                         [state](const auto& owned) { return owned.get() == state; });
  if (it == live_.end()) return;
  state->retired.store(true);
  retired_.push_back(std::move(*it));
  *it = std::move(live_.back());
  live_.pop_back();
}

std::vector<ThreadState*> ThreadRegistry::LiveSnapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ThreadState*> out;
  out.reserve(live_.size());
  for (const auto& state : live_) out.push_back(state.get());
  return out;
}

std::vector<std::unique_ptr<ThreadState>> ThreadRegistry::TakeRetired() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::unique_ptr<ThreadState>> taken;
  taken.swap(retired_);
  return taken;
}

size_t ThreadRegistry::LiveCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.size();
}

size_t ThreadRegistry::RingMemoryBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t bytes = 0;
  for (const auto& state : live_) bytes += state->ring.memory_bytes() + sizeof(ThreadState);
  for (const auto& state : retired_) bytes += state->ring.memory_bytes() + sizeof(ThreadState);
  return bytes;
}

}  // namespace sparkprof::agent
